#!/usr/bin/python3
"""The Secret Service's first answer and its search, Latchkey beside GNOME Keyring (latchkey-bench --secret-service,
and part of --peers).

    secret-service.py --bin DIR [--samples N] [--items N]

For each provider, on a private D-Bus session bus whose only service directory is this run's own (so the bus
starts the provider, as a desktop's bus does from its .service file):
- activation: a cold start to the first answer — the provider is not running, a client already on the bus calls
  Service.ReadAlias("default"), the bus starts the provider from its .service file, and the time is taken when
  the reply arrives; then the provider is stopped (SIGTERM) and the next sample starts it again;
- the floor of activation (issue 56): latchkey-bench --bus-name-floor, a static program that connects, takes the
  name and answers every call, started the same way (activation only);
- search: Service.SearchItems for one item's two attributes, among --items items (filled first through one
  connection: Latchkey's into its login collection, the keychain; GNOME Keyring's into its in-memory session
  collection, since its login keyring rewrites its whole file for every item), each sample a random item.
Prints {provider: {"activation": [ns...], "search": [ns...]}, "notes": {...}} as JSON. Needs python3-dbus,
dbus-daemon and gnome-keyring (Debian's packages).
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import dbus

SERVICE = "org.freedesktop.secrets"
PATH = "/org/freedesktop/secrets"


def wait(what, condition, seconds=20):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.005)


class PrivateBus:
    """A dbus-daemon of this run, with one service directory holding org.freedesktop.secrets.service."""

    def __init__(self, root, exec_line, environment):
        self.root = root
        services = os.path.join(root, "services")
        os.makedirs(services, exist_ok=True)
        with open(os.path.join(services, "org.freedesktop.secrets.service"), "w") as file:
            file.write(f"[D-BUS Service]\nName={SERVICE}\nExec={exec_line}\n")
        socket = os.path.join(root, "bus")
        config = os.path.join(root, "bus.conf")
        with open(config, "w") as file:
            file.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{services}</servicedir>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
""")
        self.address = "unix:path=" + socket
        self.daemon = subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--nofork", "--nopidfile"],
                                       env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait("the bus", lambda: os.path.exists(socket))
        self.bus = None
        def connected():
            try:
                self.bus = dbus.bus.BusConnection(self.address)
                return True
            except dbus.exceptions.DBusException:
                return False  # Bound, not listening yet.
        wait("the bus to accept connections", connected)
        self.dbus = dbus.Interface(self.bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"), "org.freedesktop.DBus")

    def provider_pid(self):
        if not self.dbus.NameHasOwner(SERVICE):
            return None
        return int(self.dbus.GetConnectionUnixProcessID(SERVICE))

    def stop_provider(self):
        pid = self.provider_pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        try:
            wait("the provider to leave the bus", lambda: not self.dbus.NameHasOwner(SERVICE))
        except RuntimeError:
            # Say what the provider was doing, then stop it: the run fails, with the reason.
            for task in sorted(os.listdir(f"/proc/{pid}/task")):
                with open(f"/proc/{pid}/task/{task}/comm") as comm, open(f"/proc/{pid}/task/{task}/wchan") as wchan:
                    print(f"pid {pid} thread {task} {comm.read().strip()} waiting in {wchan.read().strip()}", file=sys.stderr)
            with open(f"/proc/{pid}/status") as status:
                print("".join(line for line in status if line.startswith(("State", "Sig", "Shd"))), file=sys.stderr)
            os.kill(pid, signal.SIGKILL)
            raise
        wait("the provider to end", lambda: not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z")

    def close(self):
        self.stop_provider()
        self.daemon.terminate()
        self.daemon.wait()


def activation(bus, samples):
    """Cold starts to the first answer, in nanoseconds."""
    durations = []
    for _ in range(samples):
        bus.stop_provider()
        # The clock starts before the proxy is made: dbus-python's get_object asks the bus to start the name's
        # owner (StartServiceByName) and waits until it has one, so a clock started after it would time only
        # what follows the provider taking its name (as this script did before issue 56).
        start = time.perf_counter_ns()
        proxy = bus.bus.get_object(SERVICE, PATH, introspect=False)
        proxy.ReadAlias("default", dbus_interface="org.freedesktop.Secret.Service")
        durations.append(time.perf_counter_ns() - start)
    return durations


def fill_and_search(bus, items, samples, unlock=None, collection_path=None):
    service = dbus.Interface(bus.bus.get_object(SERVICE, PATH), "org.freedesktop.Secret.Service")
    if unlock:
        unlock()
    _, session = service.OpenSession("plain", dbus.String("", variant_level=1))
    collection_path = collection_path or service.ReadAlias("default")
    collection = dbus.Interface(bus.bus.get_object(SERVICE, collection_path), "org.freedesktop.Secret.Collection")
    start = time.perf_counter_ns()
    for i in range(items):
        secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(f"token-{i:026d}".encode()), "text/plain"), signature="oayays")
        collection.CreateItem({"org.freedesktop.Secret.Item.Label": f"item {i}",
                               "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"service": f"service-{i // 10}", "account": f"account-{i}"}, signature="ss")},
                              secret, False, signature="a{sv}(oayays)b")
    fill_seconds = (time.perf_counter_ns() - start) / 1e9
    durations = []
    for _ in range(samples):
        i = random.randrange(items)
        attributes = dbus.Dictionary({"service": f"service-{i // 10}", "account": f"account-{i}"}, signature="ss")
        start = time.perf_counter_ns()
        unlocked, locked = service.SearchItems(attributes)
        durations.append(time.perf_counter_ns() - start)
        assert len(unlocked) == 1, (i, unlocked, locked)
    return durations, fill_seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--items", type=int, default=10000)
    parser.add_argument("--providers", default="floor,latchkey,gnome-keyring",
                        help="which providers to measure, comma-separated (GNOME Keyring's fill of 10,000 items takes ~18 min)")
    args = parser.parse_args()
    providers = set(args.providers.split(","))
    results, notes = {}, {}
    root = tempfile.mkdtemp(prefix="latchkey-bench-secret-service-")
    try:
        if "floor" in providers:
            floor(args, root, results)
        if "latchkey" in providers:
            latchkey(args, root, results, notes)
        if "gnome-keyring" in providers:
            gnome_keyring(args, root, results, notes)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    json.dump({"results": results, "notes": notes}, sys.stdout)


def floor(args, root, results):
    # Activation's floor (issue 56): latchkey-bench --bus-name-floor, a static program that connects, owns the
    # name and answers every call with "/" -- started by the bus from its .service file as the providers are.
    home = os.path.join(root, "floor")
    os.makedirs(home, mode=0o700)
    bus = PrivateBus(home, f"{args.bin}/latchkey-bench --bus-name-floor", {"PATH": "/usr/bin:/bin", "HOME": home})
    try:
        results[FLOOR] = {"activation": activation(bus, args.samples)}
    finally:
        bus.close()


FLOOR = "floor: a static program that owns the name (latchkey-bench --bus-name-floor)"


def latchkey(args, root, results, notes):
    # Latchkey: latchkeyd --secret-service on a keychain of its own (the cheapest Argon2id: the passphrase is
    # a fixture), started by the bus.
    home = os.path.join(root, "latchkey")
    os.makedirs(os.path.join(home, "run"), mode=0o700)
    keychain = os.path.join(home, "bench.keychain")
    socket = os.path.join(home, "run", "agent.sock")
    environment = {"PATH": "/usr/bin:/bin", "HOME": home, "LATCHKEY_KEYCHAIN": keychain, "LATCHKEY_AGENT_SOCKET": socket,
                   "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + os.path.join(home, "no-bus"), "LATCHKEY_PINENTRY": os.path.join(home, "no-pinentry")}
    subprocess.run([os.path.join(args.bin, "latchkey"), "create-keychain", "--kdf-memory", "19", "--kdf-passes", "2"],
                   env={**environment, "LATCHKEY_PASSPHRASE": "benchmark passphrase"}, check=True, stdout=subprocess.DEVNULL)
    bus = PrivateBus(home, f"{args.bin}/latchkeyd --secret-service --no-sync --no-ssh-agent", environment)
    try:
        results["Latchkey (latchkeyd)"] = {"activation": activation(bus, args.samples)}

        def unlock():
            subprocess.run([os.path.join(args.bin, "latchkey"), "unlock-keychain"],
                           env={**environment, "LATCHKEY_PASSPHRASE": "benchmark passphrase"}, check=True)
        search, fill = fill_and_search(bus, args.items, max(args.samples * 10, 200), unlock)
        results["Latchkey (latchkeyd)"]["search"] = search
        notes["Latchkey fill seconds (login collection)"] = fill
    finally:
        bus.close()


def gnome_keyring(args, root, results, notes):
    # GNOME Keyring, as Debian's activation file starts it.
    home = os.path.join(root, "gnome")
    os.makedirs(os.path.join(home, "run"), mode=0o700)
    environment = {"PATH": "/usr/bin:/bin", "HOME": home, "XDG_RUNTIME_DIR": os.path.join(home, "run"),
                   "XDG_DATA_HOME": os.path.join(home, "data")}
    bus = PrivateBus(home, "/usr/bin/gnome-keyring-daemon --start --foreground --components=secrets", environment)
    try:
        results["GNOME Keyring"] = {"activation": activation(bus, args.samples)}
        # Its items in its in-memory session collection: its login keyring rewrites its whole file for each
        # item (10,000 would take over half an hour here), and its search walks the same objects either way.
        search, fill = fill_and_search(bus, args.items, max(args.samples * 10, 200), collection_path=PATH + "/collection/session")
        results["GNOME Keyring"]["search"] = search
        notes["GNOME Keyring fill seconds (session collection)"] = fill
    finally:
        bus.close()


if __name__ == "__main__":
    main()
