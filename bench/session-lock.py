#!/usr/bin/python3
"""How soon latchkeyd locks after the login session locks (issue 33's goal: keys wiped within 100 ms of logind's
Lock signal). Part of latchkey-bench --session-lock.

    session-lock.py --bin DIR --fake-logind PATH [--samples N]

A private dbus-daemon stands in for the system bus and Tests/Tools/fake-logind.py for logind (session "c1" is
this user's), as in SessionLockTests. latchkeyd --verbose runs on a keychain of its own, unlocked. Each sample:
the clock starts just before the call that makes fake-logind emit the session's Lock signal, and stops when
latchkeyd's log line "latchkeyd: locked (the session locked (c1))" is read from its stderr pipe (the agent
writes it once the keys are wiped: AgentState.lock); the lock is then confirmed through the agent's socket
with `latchkey show-keychain-info`, and the keychain unlocked again for the next sample. Measured this way
there is no polling interval: the line is read as soon as it is written. Prints {"lock": [ns...]} as JSON.
Needs python3-dbus, python3-gi and dbus-daemon. GNOME Keyring does not lock on session lock: no figure.
"""
import argparse
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time

import dbus

PASSPHRASE = "benchmark passphrase"


def wait(what, condition, seconds=20):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.005)


class LineReader:
    """The agent's stderr, read line by line without blocking past a deadline."""

    def __init__(self, stream):
        self.stream = stream
        os.set_blocking(stream.fileno(), False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(stream, selectors.EVENT_READ)
        self.buffer = b""

    def until(self, text, seconds=10):
        deadline = time.monotonic() + seconds
        needle = text.encode()
        while True:
            index = self.buffer.find(needle)
            if index >= 0:
                self.buffer = self.buffer[index + len(needle):]
                return time.perf_counter_ns()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RuntimeError(f"timed out waiting for {text!r}")
            for _ in self.selector.select(remaining):
                chunk = os.read(self.stream.fileno(), 65536)
                if not chunk:
                    raise RuntimeError("latchkeyd ended")
                self.buffer += chunk


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--fake-logind", required=True)
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="latchkey-bench-session-lock-")
    processes = []
    try:
        socket = os.path.join(root, "system_bus_socket")
        config = os.path.join(root, "system-bus.conf")
        with open(config, "w") as file:
            file.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy>
</busconfig>
""")
        address = "unix:path=" + socket
        base = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        processes.append(subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--nofork", "--nopidfile"], env=base,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait("the private system bus", lambda: os.path.exists(socket))
        logind = subprocess.Popen(["/usr/bin/python3", args.fake_logind, address], env=base, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        processes.append(logind)
        LineReader(logind.stdout).until("ready\n")

        home = os.path.join(root, "home")
        os.makedirs(os.path.join(home, "run"), mode=0o700)
        environment = {**base, "HOME": home, "LATCHKEY_KEYCHAIN": os.path.join(home, "bench.keychain"),
                       "LATCHKEY_AGENT_SOCKET": os.path.join(home, "run", "agent.sock")}
        latchkey = os.path.join(args.bin, "latchkey")
        subprocess.run([latchkey, "create-keychain", "--kdf-memory", "19", "--kdf-passes", "2"],
                       env={**environment, "LATCHKEY_PASSPHRASE": PASSPHRASE}, check=True, stdout=subprocess.DEVNULL)
        agent = subprocess.Popen([os.path.join(args.bin, "latchkeyd"), "--verbose", "--no-sync", "--no-ssh-agent"],
                                 env={**environment, "DBUS_SYSTEM_BUS_ADDRESS": address,
                                      "LATCHKEY_PINENTRY": os.path.join(home, "no-pinentry")},
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        processes.append(agent)
        log = LineReader(agent.stderr)
        log.until("locking when the session locks")
        control = dbus.Interface(dbus.bus.BusConnection(address).get_object("org.freedesktop.login1", "/org/freedesktop/login1"),
                                 "org.latchkey.FakeLogind")
        durations = []
        for _ in range(args.samples):
            subprocess.run([latchkey, "unlock-keychain"], env={**environment, "LATCHKEY_PASSPHRASE": PASSPHRASE}, check=True,
                           stdout=subprocess.DEVNULL)
            info = subprocess.run([latchkey, "show-keychain-info"], env=environment, check=True, capture_output=True, text=True).stdout
            if "unlocked" not in info.lower():
                raise RuntimeError("the keychain did not unlock: " + info)
            start = time.perf_counter_ns()
            control.LockSession("c1")
            durations.append(log.until("latchkeyd: locked (the session locked (c1))\n") - start)
            info = subprocess.run([latchkey, "show-keychain-info"], env=environment, capture_output=True, text=True)
            if "unlocked" in info.stdout.lower():
                raise RuntimeError("the agent said it locked, show-keychain-info says unlocked")
        json.dump({"lock": durations}, sys.stdout)
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
