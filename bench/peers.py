#!/usr/bin/env python3
"""Drives the keychains people use on Linux today, for latchkey-bench --peers.

Each peer gets a private sandbox (HOME, XDG dirs, a private D-Bus session, a throwaway GnuPG key), is
filled with N items ("service-i/10", "account-i", a 32-byte token), and then measured:

- per-process CLI peers (one process per operation, as a script runs them): secret-tool (GNOME Keyring),
  pass (GnuPG), keepassxc-cli;
- in-process peers (a loop inside one Python process): keyring with keyrings.cryptfile, keyring with
  keyrings.alt's plaintext file backend, and the Secret Service through secretstorage-like keyring calls.

Prints one JSON object: {peer: {workload: [nanoseconds, ...]}, "notes": {...}}. Python drives the peers
only; nothing here is part of Latchkey.
"""
import argparse, json, os, random, shutil, signal, subprocess, sys, tempfile, time

def ns(start):
    return (time.perf_counter_ns() - start)

def run(cmd, env, input=None, check=True):
    out = subprocess.run(cmd, env=env, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and out.returncode != 0:
        # Only the program and its first argument: later arguments may carry a test secret.
        raise RuntimeError(f"{' '.join(cmd[:2])} exited {out.returncode}: {out.stderr.decode(errors='replace')[-300:]}")
    return out

class Sandbox:
    def __init__(self, name):
        self.root = tempfile.mkdtemp(prefix=f"latchkey-peer-{name}-")
        os.chmod(self.root, 0o700)
        self.env = {
            "HOME": self.root, "XDG_DATA_HOME": f"{self.root}/data", "XDG_CONFIG_HOME": f"{self.root}/config",
            "XDG_RUNTIME_DIR": f"{self.root}/run", "XDG_CACHE_HOME": f"{self.root}/cache",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
        }
        for d in ("data", "config", "run", "cache"):
            os.makedirs(f"{self.root}/{d}", mode=0o700, exist_ok=True)
        self.pids = []

    def close(self):
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.root, ignore_errors=True)

PRIVATE_BUS = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={root}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

def private_bus(sandbox):
    """A session bus of the sandbox's own whose configuration lists no service directories, so nothing is
    activated behind the provider's back (the Debian session configuration would start GNOME Keyring for
    org.freedesktop.secrets whenever the provider measured is not on the bus)."""
    configuration = f"{sandbox.root}/bus.conf"
    with open(configuration, "w") as file:
        file.write(PRIVATE_BUS.format(root=sandbox.root))
    out = run(["dbus-daemon", f"--config-file={configuration}", "--fork", "--print-address=1", "--print-pid=1"], sandbox.env).stdout.decode().split()
    sandbox.env["DBUS_SESSION_BUS_ADDRESS"] = out[0]
    sandbox.pids.append(int(out[1]))

def secret_service(sandbox):
    """A private D-Bus session with gnome-keyring-daemon serving org.freedesktop.secrets, unlocked."""
    private_bus(sandbox)
    daemon = subprocess.run(["gnome-keyring-daemon", "--unlock", "--components=secrets", "--daemonize"],
                            env=sandbox.env, input=b"peer-password", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for line in daemon.stdout.decode().splitlines():
        if line.startswith("GNOME_KEYRING_CONTROL="):
            sandbox.env["GNOME_KEYRING_CONTROL"] = line.split("=", 1)[1]
    # gnome-keyring-daemon forks; find it by the sandbox's HOME in its environment to stop it later (only
    # this sandbox's daemon: others on the machine, of other runs or users, are left alone).
    time.sleep(0.3)
    ps = run(["pgrep", "-f", "gnome-keyring-daemon --unlock"], sandbox.env, check=False).stdout.split()
    for pid in ps:
        try:
            with open(f"/proc/{int(pid)}/environ", "rb") as file:
                environment = file.read().split(b"\0")
        except OSError:  # Ended meanwhile, or another user's: not this sandbox's daemon.
            continue
        if f"HOME={sandbox.root}".encode() in environment:
            sandbox.pids.append(int(pid))

def item(i):
    return f"service-{i // 10}", f"account-{i}", f"token-{i:026d}"

def measure_cli(samples, size, op):
    values = []
    for _ in range(samples):
        i = random.randrange(size)
        start = time.perf_counter_ns()
        op(i)
        values.append(ns(start))
    return values

def measure_add_delete(size, samples, store, clear):
    """Adds fresh items (numbered from `size` on) one call at a time with store(service, account, token), then
    deletes them again with clear(service, account)."""
    added = []
    def add(_):
        n = size + len(added)
        added.append(n)
        store(*item(n))
    def delete(_):
        s, a, _t = item(added.pop())
        clear(s, a)
    r = {"add": measure_cli(max(20, samples // 5), size, add)}
    r["delete"] = measure_cli(len(added), size, delete)
    return r

def latchkey_secret_service(sandbox, args):
    """A private D-Bus session with latchkeyd --secret-service serving org.freedesktop.secrets on a keychain of
    its own, unlocked."""
    private_bus(sandbox)
    bin = args.latchkey_bin
    keychain = f"{sandbox.root}/secret-service.keychain"
    sandbox.env.update(LATCHKEY_KEYCHAIN=keychain, LATCHKEY_AGENT_SOCKET=f"{sandbox.root}/run/agent.sock")
    with_passphrase = dict(sandbox.env, LATCHKEY_PASSPHRASE="peer-password")
    run([f"{bin}/latchkey", "create-keychain", keychain], with_passphrase)
    agent = subprocess.Popen([f"{bin}/latchkeyd", "--secret-service", "--keychain", keychain, "--socket", sandbox.env["LATCHKEY_AGENT_SOCKET"]],
                             env=sandbox.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sandbox.pids.append(agent.pid)
    deadline = time.monotonic() + 10
    while not os.path.exists(sandbox.env["LATCHKEY_AGENT_SOCKET"]):
        if time.monotonic() > deadline or agent.poll() is not None:
            raise RuntimeError("latchkeyd --secret-service did not start")
        time.sleep(0.01)
    run([f"{bin}/latchkey", "unlock-keychain"], with_passphrase)

def merge(into, measured):
    """Appends each workload's samples of `measured` to those already in `into`."""
    for workload, values in measured.items():
        into.setdefault(workload, []).extend(values)

def peer_secret_service(size, samples, results, notes, args=None):
    """secret-tool and the in-process clients against GNOME Keyring and, given args.latchkey_bin, Latchkey's
    Secret Service: both started and filled first, then measured in alternating rounds (the order flipped
    each round), so a slow spell of the machine falls on both providers alike."""
    providers = [("GNOME Keyring", "")] + ([("Latchkey", " (Latchkey)")] if args and args.latchkey_bin else [])
    sandboxes, live = {}, []
    try:
        for provider, suffix in providers:
            sandbox = Sandbox("secret-service")
            sandboxes[provider] = sandbox
            try:
                if provider == "GNOME Keyring":
                    secret_service(sandbox)
                else:
                    latchkey_secret_service(sandbox, args)
                start = time.perf_counter_ns()
                # Fill through the Secret Service from one process (secret-tool would take one process per item).
                filler = subprocess.Popen([sys.executable, "-c", FILL_SECRET_SERVICE, str(size)], env=sandbox.env)
                if filler.wait() != 0:
                    raise RuntimeError(f"filling {provider} failed")
                notes[f"secret-tool{suffix} fill seconds"] = ns(start) / 1e9
                live.append((provider, suffix))
            except Exception as error:  # One provider failing leaves the other measured.
                notes[f"Secret Service ({provider}) failed"] = str(error)[-300:]
        rounds = 5
        per_round = max(2, samples // rounds)
        for round_index in range(rounds):
            for provider, suffix in (live if round_index % 2 == 0 else list(reversed(live))):
                env = sandboxes[provider].env
                measured = {"find": measure_cli(per_round, size, lambda i: run(["secret-tool", "lookup", "service", item(i)[0], "account", item(i)[1]], env))}
                measured.update(measure_add_delete(size, per_round,
                    lambda s, a, t: run(["secret-tool", "store", "--label", s, "service", s, "account", a], env, input=t.encode()),
                    lambda s, a: run(["secret-tool", "clear", "service", s, "account", a], env)))
                merge(results.setdefault("secret-tool" + suffix, {}), measured)
                # In-process through Python keyring's Secret Service backend, same daemon.
                merge(results.setdefault("keyring (Secret Service)" + suffix, {}),
                      in_process(env, "keyring.backends.SecretService.Keyring", size, per_round, prefilled=True))
                # The provider's own round trips from one process: GetSecret of a found item, CreateItem.
                out = subprocess.run([sys.executable, "-c", ROUND_TRIPS, str(size), str(per_round)], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                if out.returncode != 0:
                    raise RuntimeError(f"round trips ({provider}): {out.stderr.decode()[-300:]}")
                merge(results.setdefault("Secret Service round trips (" + provider + ")", {}), json.loads(out.stdout))
    finally:
        for sandbox in sandboxes.values():
            sandbox.close()

FILL_SECRET_SERVICE = r"""
import sys, secretstorage
size = int(sys.argv[1])
bus = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(bus)
for i in range(size):
    collection.create_item(f"service-{i // 10}", {"service": f"service-{i // 10}", "account": f"account-{i}",
                            "username": f"account-{i}"}, f"token-{i:026d}".encode())
"""

ROUND_TRIPS = r"""
import json, random, sys, time, secretstorage
from secretstorage.util import open_session
size, samples = int(sys.argv[1]), int(sys.argv[2])
bus = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(bus)
picked = [random.randrange(size) for _ in range(samples)]
# One DH session for the whole loop (a client's usual state): each call is then the round trip and one
# AES-CBC decryption, not a new key exchange.
session = open_session(bus)
items = [secretstorage.Item(bus, next(collection.search_items({"account": f"account-{i}"})).item_path, session=session) for i in picked]
r = {"GetSecret": [], "CreateItem": [], "GetSecrets": [], "GetSecretsRefused": [], "Ping": []}
for item, i in zip(items, picked):
    start = time.perf_counter_ns()
    secret = item.get_secret()
    r["GetSecret"].append(time.perf_counter_ns() - start)
    assert secret == f"token-{i:026d}".encode()
# secretstorage's get_secret is two calls (the Locked property, then GetSecret) and a decryption; one raw
# GetSecrets call of one item measures the provider's round trip alone, and Peer.Ping (answered inside the
# provider's D-Bus library) the floor under it: the client and the bus daemon's two hops.
from jeepney import new_method_call, DBusAddress
service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service")
peer = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.DBus.Peer")
for item in items:
    call = new_method_call(service, "GetSecrets", "aoo", ([item.item_path], session.object_path))
    start = time.perf_counter_ns()
    reply = bus.send_and_get_reply(call)
    r["GetSecrets"].append(time.perf_counter_ns() - start)
    assert len(reply.body[0]) == 1
# The same call refused at once (a session that does not exist): the client's and the bus's cost for this
# call's shape, with no provider work behind it.
from jeepney import MessageType
for item in items:
    call = new_method_call(service, "GetSecrets", "aoo", ([item.item_path], "/org/freedesktop/secrets/session/none"))
    start = time.perf_counter_ns()
    reply = bus.send_and_get_reply(call)
    r["GetSecretsRefused"].append(time.perf_counter_ns() - start)
    assert reply.header.message_type == MessageType.error
for _ in items:
    call = new_method_call(peer, "Ping")
    start = time.perf_counter_ns()
    bus.send_and_get_reply(call)
    r["Ping"].append(time.perf_counter_ns() - start)
for n in range(max(20, samples // 5)):
    start = time.perf_counter_ns()
    collection.create_item("fresh", {"service": "fresh", "account": f"fresh-{n}"}, b"fresh token")
    r["CreateItem"].append(time.perf_counter_ns() - start)
print(json.dumps(r))
"""

IN_PROCESS = r"""
import json, os, random, sys, time
backend_path, size, samples, prefilled = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
module, _, name = backend_path.rpartition(".")
backend = getattr(__import__(module, fromlist=[name]), name)()
# Reading keyring_key would prompt for the password; only the setter is safe to touch.
if isinstance(getattr(type(backend), "keyring_key", None), property):
    backend.keyring_key = "peer-password"
import keyring
keyring.set_keyring(backend)
def item(i):
    return f"service-{i // 10}", f"account-{i}", f"token-{i:026d}"
if not prefilled:
    start = time.perf_counter_ns()
    for i in range(size):
        s, a, t = item(i)
        keyring.set_password(s, a, t)
    fill = (time.perf_counter_ns() - start) / 1e9
else:
    fill = 0
r = {"fill seconds": [fill * 1e9]}
values = []
for _ in range(samples):
    s, a, t = item(random.randrange(size))
    start = time.perf_counter_ns()
    got = keyring.get_password(s, a)
    values.append(time.perf_counter_ns() - start)
    assert got == t, (s, a, got)
r["find"] = values
values = []
for n in range(max(20, samples // 5)):
    s, a, t = item(size + n)
    start = time.perf_counter_ns()
    keyring.set_password(s, a, t)
    values.append(time.perf_counter_ns() - start)
r["add"] = values
values = []
for n in range(max(20, samples // 5)):
    s, a, t = item(size + n)
    start = time.perf_counter_ns()
    keyring.delete_password(s, a)
    values.append(time.perf_counter_ns() - start)
r["delete"] = values
print(json.dumps(r))
"""

def in_process(env, backend, size, samples, prefilled=False):
    out = subprocess.run([sys.executable, "-c", IN_PROCESS, backend, str(size), str(samples), "1" if prefilled else "0"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if out.returncode != 0:
        raise RuntimeError(f"{backend}: {out.stderr.decode()[-500:]}")
    return json.loads(out.stdout)

def peer_keyring_files(size, samples, results, notes):
    sandbox = Sandbox("keyring")
    try:
        env = dict(sandbox.env)
        # keyrings.cryptfile derives its key with Argon2 on every call (about a quarter of a second here), so it
        # is filled with at most 50 items and sampled 20 times; its per-call cost does not depend on the size.
        small = min(size, 50)
        notes["keyring (cryptfile) items"] = small
        results["keyring (cryptfile)"] = in_process(env, "keyrings.cryptfile.cryptfile.CryptFileKeyring", small, min(samples, 20))
        results["keyring (alt plaintext file)"] = in_process(env, "keyrings.alt.file.PlaintextKeyring", size, samples)
    finally:
        sandbox.close()

def peer_pass(size, samples, results, notes):
    sandbox = Sandbox("pass")
    try:
        env = sandbox.env
        env["GNUPGHOME"] = f"{sandbox.root}/gnupg"
        env["PASSWORD_STORE_DIR"] = f"{sandbox.root}/store"
        os.makedirs(env["GNUPGHOME"], mode=0o700)
        run(["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "peer@example.com", "ed25519", "cert", "never"], env)
        fpr = run(["gpg", "--batch", "--list-keys", "--with-colons", "peer@example.com"], env).stdout.decode()
        fpr = [l.split(":")[9] for l in fpr.splitlines() if l.startswith("fpr")][0]
        run(["gpg", "--batch", "--passphrase", "", "--quick-add-key", fpr, "cv25519", "encr", "never"], env)
        run(["pass", "init", "peer@example.com"], env)
        insert = lambda s, a, t: run(["pass", "insert", "-m", f"{s}/{a}"], env, input=(t + "\n").encode())
        start = time.perf_counter_ns()
        for i in range(size):
            insert(*item(i))
        notes["pass fill seconds"] = ns(start) / 1e9
        r = {}
        r["find"] = measure_cli(samples, size, lambda i: run(["pass", "show", f"{item(i)[0]}/{item(i)[1]}"], env))
        r.update(measure_add_delete(size, samples, insert, lambda s, a: run(["pass", "rm", "-f", f"{s}/{a}"], env)))
        results["pass"] = r
    finally:
        sandbox.close()

def peer_keepassxc(size, samples, results, notes):
    sandbox = Sandbox("keepassxc")
    try:
        env = sandbox.env
        db = f"{sandbox.root}/peer.kdbx"
        xml = f"{sandbox.root}/items.xml"
        entries = "".join(
            f"<Entry><String><Key>Title</Key><Value>{item(i)[0]}-{item(i)[1]}</Value></String>"
            f"<String><Key>UserName</Key><Value>{item(i)[1]}</Value></String>"
            f"<String><Key>Password</Key><Value>{item(i)[2]}</Value></String></Entry>" for i in range(size))
        with open(xml, "w") as f:
            f.write(f"<KeePassFile><Root><Group><Name>Root</Name>{entries}</Group></Root></KeePassFile>")
        start = time.perf_counter_ns()
        run(["keepassxc-cli", "import", "-p", xml, db], env, input=b"peer-password\npeer-password\n")
        notes["keepassxc fill seconds"] = ns(start) / 1e9
        r = {}
        r["find"] = measure_cli(samples, size, lambda i: run(
            ["keepassxc-cli", "show", "-q", "-s", "-a", "Password", db, f"{item(i)[0]}-{item(i)[1]}"], env, input=b"peer-password\n"))
        results["keepassxc-cli"] = r
    finally:
        sandbox.close()

def process_start(size, samples, results, notes):
    """The floor of any per-process tool: starting /bin/true from this driver."""
    results["process start (/bin/true)"] = {"find": measure_cli(samples, size, lambda i: run(["/bin/true"], os.environ))}

def spawn_and_wait(argv, env):
    """Starts argv with its output on a pipe, reads it to the end and waits: nanoseconds, exit status, output.
    os.posix_spawn, not subprocess: the driver's own cost per process is then small beside a start-up."""
    read_end, write_end = os.pipe()
    actions = [(os.POSIX_SPAWN_DUP2, write_end, 1), (os.POSIX_SPAWN_CLOSE, read_end), (os.POSIX_SPAWN_CLOSE, write_end)]
    start = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True)
    os.close(write_end)
    chunks = []
    while True:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    elapsed = ns(start)
    os.close(read_end)
    return elapsed, os.waitstatus_to_exitcode(status), b"".join(chunks)

def foundation_program(notes):
    """The start-up baseline (bench/start/foundation-program.swift), built once into .build/peers/ with the
    toolchain's swiftc, statically linked; None (and a note) when it cannot be built."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = os.path.join(root, "bench", "start", "foundation-program.swift")
    output = os.path.join(root, ".build", "peers", "foundation-program")
    if not os.path.exists(output) or os.path.getmtime(output) < os.path.getmtime(source):
        os.makedirs(os.path.dirname(output), exist_ok=True)
        built = subprocess.run(["swiftc", "-O", "-static-stdlib", source, "-o", output],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if built.returncode != 0:
            notes["CLI start"] = "the Foundation program did not build: " + built.stderr.decode(errors="replace")[-200:]
            return None
    return output

def measure_start(args, env, results, notes):
    """The CLI's start (issue 31) beside a statically linked Foundation program: `latchkey --version` and a
    find through the agent (the CLI registered, the keychain unlocked), with /bin/true as the floor of starting
    any process from this driver. The four are run in turn in every round, so load changes hit all alike."""
    baseline = foundation_program(notes)
    if baseline is None:
        return
    bin = args.latchkey_bin
    s, a, t = item(0)
    programs = {
        "Foundation program": ([baseline, "--version"], None),
        "latchkey --version": ([f"{bin}/latchkey", "--version"], None),
        "latchkey find (agent)": ([f"{bin}/latchkey", "find-generic-password", "-s", s, "-a", a, "-w"], t),
        "process start (/bin/true)": (["/bin/true"], None),
    }
    samples = {name: [] for name in programs}
    for _ in range(5):  # Warm the page cache and the agent.
        for argv, _expected in programs.values():
            spawn_and_wait(argv, env)
    for _ in range(max(args.samples, 200)):
        for name, (argv, expected) in programs.items():
            elapsed, status, output = spawn_and_wait(argv, env)
            if status != 0 or (expected is not None and output.decode().strip() != expected):
                raise RuntimeError(f"{name} exited {status}")
            samples[name].append(elapsed)
    results["CLI start"] = samples
    linked = subprocess.run(["ldd", f"{bin}/latchkey"], stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout.decode()
    notes["CLI start: latchkey"] = ("statically linked Swift runtime" if "libswiftCore" not in linked
                                    else "**dynamically linked Swift runtime** (build with --static-swift-stdlib)")

def peer_latchkey(args, results, notes):
    """Latchkey's CLI, per process, as a script runs it: embedded (each process opens the keychain and runs
    Argon2id on the passphrase) and through latchkeyd (started here, unlocked once, the CLI registered)."""
    if not args.latchkey_bin:
        return
    bin = args.latchkey_bin
    root = tempfile.mkdtemp(prefix="latchkey-peer-agent-")
    os.chmod(root, 0o700)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": root,
           "XDG_RUNTIME_DIR": root, "XDG_CONFIG_HOME": f"{root}/config",
           "LATCHKEY_KEYCHAIN": args.latchkey_keychain, "LATCHKEY_AGENT_SOCKET": f"{root}/agent.sock"}
    with open(args.latchkey_passphrase_file) as f:
        passphrase = f.readline().rstrip("\n")
    with_passphrase = dict(env, LATCHKEY_PASSPHRASE=passphrase)
    agent = None
    try:
        def find(environment):
            def op(i):
                s, a, t = item(i)
                out = run([f"{bin}/latchkey", "find-generic-password", "-s", s, "-a", a, "-w"], environment).stdout
                if out.decode().strip() != t:
                    raise RuntimeError(f"latchkey found {out!r} for {s}/{a}")
            return op
        # The same process without the key derivation: start-up and opening the keychain, no passphrase.
        def open_only(i):
            run([f"{bin}/latchkey", "show-keychain-info", args.latchkey_keychain], env)
        results["latchkey CLI (embedded)"] = {"find": measure_cli(min(args.samples, 20), args.size, find(with_passphrase)),
                                              "open": measure_cli(args.samples, args.size, open_only)}

        agent = subprocess.Popen([f"{bin}/latchkeyd", "--keychain", args.latchkey_keychain, "--socket", env["LATCHKEY_AGENT_SOCKET"]],
                                 env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while not os.path.exists(env["LATCHKEY_AGENT_SOCKET"]):
            if time.monotonic() > deadline or agent.poll() is not None:
                raise RuntimeError("latchkeyd did not start: " + (agent.stderr.read().decode() if agent.poll() is not None else "timeout"))
            time.sleep(0.01)
        run([f"{bin}/latchkey", "unlock-keychain"], with_passphrase)
        for program in ("latchkey", "latchkey-bench"):
            run([f"{bin}/latchkey", "register-application", "--wildcard", f"{bin}/{program}"], with_passphrase)
        # From here on no passphrase: the agent holds the keys.
        r = {"find": measure_cli(args.samples, args.size, find(env))}
        r.update(measure_add_delete(args.size, args.samples,
            lambda s, a, t: run([f"{bin}/latchkey", "add-generic-password", "-s", s, "-a", a, "-w", t], env),
            lambda s, a: run([f"{bin}/latchkey", "delete-generic-password", "-s", s, "-a", a], env)))
        results["latchkey CLI (agent)"] = r
        measure_start(args, env, results, notes)
        out = run([f"{bin}/latchkey-bench", "--in-process", args.latchkey_keychain, "--size", str(args.size),
                   "--samples", str(args.samples), "--passphrase-file", args.latchkey_passphrase_file], env).stdout
        results.update(json.loads(out))
    finally:
        if agent is not None:
            agent.send_signal(signal.SIGTERM)
            agent.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)

def peer_git_credential(args, results, notes):
    """`git credential fill` (Debian's git, one process per fill, as git runs it before a fetch) through
    git-credential-latchkey — through latchkeyd (started here, unlocked once, the helper registered) and
    embedded (the passphrase in LATCHKEY_PASSPHRASE, so each fill runs Argon2id) — beside git-credential-libsecret
    (git's contrib helper, built by script/install-peers, on GNOME Keyring in a private D-Bus session, as
    peer_secret_service starts it) and git-credential-store (the plaintext ~/.git-credentials). Each is filled
    with `size` credentials of hosts host-i.example.com, one helper process per credential."""
    if not args.latchkey_bin:
        return
    bin = args.latchkey_bin
    helper = f"{bin}/git-credential-latchkey"
    if not os.path.exists(helper):
        notes["git credential fill"] = f"{helper} is not built (swift build -c release --product git-credential-latchkey)"
        return
    root = tempfile.mkdtemp(prefix="latchkey-peer-git-")
    os.chmod(root, 0o700)
    keychain = f"{root}/git.keychain"
    env = {"PATH": f"{bin}:" + os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": root,
           "XDG_RUNTIME_DIR": root, "XDG_CONFIG_HOME": f"{root}/config", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_TERMINAL_PROMPT": "0", "LATCHKEY_KEYCHAIN": keychain, "LATCHKEY_AGENT_SOCKET": f"{root}/agent.sock"}
    with_passphrase = dict(env, LATCHKEY_PASSPHRASE="peer-password")
    agent = None
    libsecret, libsecret_sandbox, libsecret_env = args.git_credential_libsecret, None, None

    def credential(i):
        return f"protocol=https\nhost=host-{i}.example.com\nusername=user-{i}\npassword={item(i)[2]}\n\n".encode()

    def fill(helper_name, environment):
        def op(i):
            out = run(["git", "-c", f"credential.helper={helper_name}", "credential", "fill"], environment,
                      input=f"protocol=https\nhost=host-{i}.example.com\n\n".encode()).stdout.decode()
            if f"password={item(i)[2]}" not in out:
                raise RuntimeError(f"git credential fill through {helper_name} did not find host-{i}")
        return op
    try:
        run([f"{bin}/latchkey", "create-keychain", keychain], with_passphrase)
        start = time.perf_counter_ns()
        store = "".join(f"https://user-{i}:{item(i)[2]}@host-{i}.example.com\n" for i in range(args.size))
        with open(f"{root}/.git-credentials", "w") as file:
            file.write(store)
        os.chmod(f"{root}/.git-credentials", 0o600)
        agent = subprocess.Popen([f"{bin}/latchkeyd", "--keychain", keychain, "--socket", env["LATCHKEY_AGENT_SOCKET"]],
                                 env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(env["LATCHKEY_AGENT_SOCKET"]):
            if time.monotonic() > deadline or agent.poll() is not None:
                raise RuntimeError("latchkeyd did not start")
            time.sleep(0.01)
        run([f"{bin}/latchkey", "unlock-keychain"], with_passphrase)
        run([f"{bin}/latchkey", "register-application", "--app-id", "git-credential-latchkey", "--access-group",
             "git-credential-latchkey", os.path.realpath(helper)], with_passphrase)
        for i in range(args.size):  # One helper process per credential, through the agent.
            run([helper, "store"], env, input=credential(i))
        notes["git-credential-latchkey fill seconds"] = ns(start) / 1e9
        if os.access(libsecret, os.X_OK):
            try:
                libsecret_sandbox = Sandbox("git-libsecret")
                secret_service(libsecret_sandbox)
                libsecret_env = dict(libsecret_sandbox.env, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
                start = time.perf_counter_ns()
                for i in range(args.size):  # One helper process per credential, as for Latchkey's.
                    run([libsecret, "store"], libsecret_env, input=credential(i))
                notes["git-credential-libsecret fill seconds"] = ns(start) / 1e9
            except Exception as error:  # The other helpers are still measured.
                notes["git-credential-libsecret failed"] = str(error)[-300:]
                libsecret_env = None
        else:
            notes["git-credential-libsecret"] = f"not measured: {libsecret} is not built (script/install-peers builds it)"
        samples = {"agent": [], "embedded": [], "store": [], "libsecret": []}
        # Alternating rounds, so a slow spell of the machine falls on every helper alike.
        for round in range(5):
            per_round = max(1, args.samples // 5)
            samples["agent"] += measure_cli(per_round, args.size, fill("latchkey", env))
            samples["store"] += measure_cli(per_round, args.size, fill("store", env))
            if libsecret_env is not None:
                samples["libsecret"] += measure_cli(per_round, args.size, fill(libsecret, libsecret_env))
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=10)
        agent = None
        samples["embedded"] = measure_cli(min(args.samples, 20), args.size, fill("latchkey", with_passphrase))
        results["git credential fill (git-credential-latchkey, agent)"] = {"git credential fill": samples["agent"]}
        results["git credential fill (git-credential-latchkey, embedded)"] = {"git credential fill": samples["embedded"]}
        results["git credential fill (git-credential-store)"] = {"git credential fill": samples["store"]}
        if samples["libsecret"]:
            results["git credential fill (git-credential-libsecret)"] = {"git credential fill": samples["libsecret"]}
    finally:
        if agent is not None:
            agent.send_signal(signal.SIGTERM)
            agent.wait(timeout=10)
        if libsecret_sandbox is not None:
            libsecret_sandbox.close()
        shutil.rmtree(root, ignore_errors=True)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--latchkey-bin", help="the directory holding latchkey, latchkeyd and latchkey-bench")
    parser.add_argument("--latchkey-keychain", help="a keychain filled with the same items as the peers")
    parser.add_argument("--latchkey-passphrase-file", help="its passphrase, first line")
    parser.add_argument("--git-credential-libsecret", help="git's contrib helper (script/install-peers builds it)",
                        default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                             ".build", "peers", "git-credential-libsecret", "git-credential-libsecret"))
    args = parser.parse_args()
    random.seed(7)
    results, notes = {}, {}
    peers = [lambda *a: process_start(args.size, args.samples, results, notes), lambda *a: peer_latchkey(args, results, notes)]
    peers.append(lambda *a: peer_secret_service(args.size, args.samples, results, notes, args=args))
    peers.append(lambda *a: peer_git_credential(args, results, notes))
    for peer in (peer_pass, peer_keepassxc, peer_keyring_files):
        peers.append(lambda *a, peer=peer: peer(args.size, args.samples, results, notes))
    names = ["process start", "latchkey", "the Secret Service (GNOME Keyring" + (" and Latchkey, alternating)" if args.latchkey_bin else ")"),
             "git credential fill", "pass", "keepassxc-cli", "keyring files"]
    for name, peer in zip(names, peers):
        print(f"latchkey-bench: peers: {name}...", file=sys.stderr, flush=True)
        try:
            peer()
        except Exception as error:  # A peer that fails is reported, not fatal.
            notes[name + " failed"] = str(error)[-300:]
    results["notes"] = notes
    print(json.dumps(results))

if __name__ == "__main__":
    main()
