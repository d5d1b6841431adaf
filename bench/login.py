#!/usr/bin/python3
"""Login to the first secret, Latchkey (pam_latchkey) beside GNOME Keyring (pam_gnome_keyring), issue 33's
figure: the PAM session step to the first `secret-tool lookup` answered. Part of latchkey-bench --login and of
--peers.

    login.py --bin DIR --build-pam PATH [--samples N] [--providers latchkey,gnome]

Needs root (useradd, /etc/pam.d), pamtester, setpriv, stdbuf, systemd-socket-activate, dbus-daemon, secret-tool
(libsecret-tools), gnome-keyring and pam_gnome_keyring.so (Debian's libpam-gnome-keyring); script/install-peers
installs them. Python here only drives the peers (no python3-dbus needed).

For each provider, a throwaway user (useradd, a random login password set with chpasswd; `userdel -r` at the
end), a PAM service file this driver writes in /etc/pam.d and removes, and the user's runtime directory (a
directory of the driver's, the user's, mode 0700, as pam_systemd makes /run/user/<uid>). The service's stack:

    auth     required pam_unix.so
    auth     optional pam_latchkey.so latchkey=<bin>/latchkey latchkeyd=<bin>/latchkeyd | pam_gnome_keyring.so
    session  required pam_env.so (XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus)
    session  optional pam_latchkey.so create latchkey=<bin>/latchkey latchkeyd=<bin>/latchkeyd | pam_gnome_keyring.so auto_start

pam_env stands in for pam_systemd, which sets both in the session step; at the auth step the runtime
directory is not in PAM's environment yet, as at a real first login (so both modules only keep the password
there). There is no systemd user manager here; what it would have running when the session's modules run is
started by the driver, as the user, before the clock starts, and is the same for both providers:
- the session bus: a dbus-daemon listening on $XDG_RUNTIME_DIR/bus, whose configuration lists only this run's
  service directory, which holds the provider's org.freedesktop.secrets activation file (Latchkey's names
  `latchkeyd --secret-service`, in place of contrib/systemd's SystemdService=latchkeyd.service; GNOME
  Keyring's is Debian's, `gnome-keyring-daemon --start --foreground --components=secrets`);
- Latchkey only: latchkeyd.socket, as contrib/systemd/latchkeyd.socket has it, by systemd-socket-activate
  listening on $XDG_RUNTIME_DIR/latchkey/agent.sock and ssh-agent.sock and starting `latchkeyd --verbose` (with
  LATCHKEY_SECRET_SERVICE=1, as in latchkeyd.env) on the first connection, which is pam_latchkey's session
  step. So latchkeyd starts cold inside the measured time, derives the key from the login password (the
  keychain pam_latchkey's `create` made at the first login: the default Argon2id, 64 MiB, 3 passes), and owns
  org.freedesktop.secrets before it answers the unlock; the bus does not start a second one (checked: one
  latchkeyd per sample). GNOME Keyring: pam_gnome_keyring's session step starts `gnome-keyring-daemon
  --daemonize --login`, which unlocks the login keyring; secret-tool's first call then makes the bus run the
  activation file, which asks that daemon to start its secrets component (as gnome-session's autostart would).

First an unmeasured login creates the keychain or the login keyring and stores the item (`secret-tool
store`); then each sample (the two providers' samples alternate, so both see the same load) is a login from
the logged-out state (no provider running, a fresh bus, the runtime directory empty but for the sockets
above): the clock starts when pamtester has printed "successfully authenticated" (its stdout line-buffered
with stdbuf), that is just before pam_open_session; pamtester ends after the session step, then `secret-tool
lookup` runs as the user in the session's environment, and the clock stops when it has printed the secret.
The authentication step (pam_unix, and the modules keeping the password) is measured apart, from the start of
pamtester. pam_latchkey's auth step finds no agent (the runtime directory is not in PAM's environment yet), so
it starts deriving the keychain's key there, and the session step hands the derived key over (issue 56; the
notes count the logins whose agent says it unlocked so). After each sample the user's processes are ended by pid. Prints {"results": {provider: {"login":
[ns...], "session": [ns...], "authenticate": [ns...]}}, "notes": {...}} as JSON, where "session" is
pam_open_session alone (to pamtester's end); the notes hold each first login's time (making the keychain or
the login keyring, and storing the item) and the login keyring's hash iterations. Everything the run made
(users, PAM service files, directories, processes) is removed even when it fails or is stopped by SIGTERM.
"""
import argparse
import json
import os
import pwd
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SECRET = b"the first secret of the session"


def wait(what, condition, seconds=30):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.002)


def pids_of(uid):
    """The processes running as uid (all of them were started by this run: the user is its own)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(int(entry))
            except FileNotFoundError:
                pass
    return found


def command_of(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except FileNotFoundError:
        return ""


def end_pids(pids):
    """SIGTERM, then SIGKILL for what is left after 5 s; by pid."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if running(pid)]
        time.sleep(0.01)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


class Login:
    """One provider's throwaway user, PAM service, runtime directory and session bus."""

    def __init__(self, provider, args, work):
        self.provider = provider
        self.args = args
        self.work = os.path.join(work, provider)
        os.makedirs(self.work)
        os.chmod(self.work, 0o755)
        self.children = []  # Popen objects this driver started (the bus, the socket listener).
        self.name = "lkbench" + secrets.token_hex(4)
        self.password = "login password " + secrets.token_urlsafe(12)
        self.home = f"/tmp/{self.name}-home"
        self.runtime = f"/tmp/{self.name}-run"
        self.service = f"latchkey-bench-{self.name}"
        self.pam_file = f"/etc/pam.d/{self.service}"
        self.user_added = False
        self.uid = None

    # Setting up and tearing down.

    def create(self):
        subprocess.run(["/usr/sbin/useradd", "-m", "-d", self.home, "-s", "/usr/sbin/nologin", "-U", self.name], check=True,
                       stdout=subprocess.DEVNULL)
        self.user_added = True
        entry = pwd.getpwnam(self.name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid
        subprocess.run(["/usr/sbin/chpasswd"], input=f"{self.name}:{self.password}\n".encode(), check=True)
        os.mkdir(self.runtime, 0o700)
        os.chown(self.runtime, self.uid, self.gid)
        self.bus_socket = os.path.join(self.runtime, "bus")
        self.bus_address = "unix:path=" + self.bus_socket
        environment = os.path.join(self.work, "session.env")
        with open(environment, "w") as file:
            file.write(f"XDG_RUNTIME_DIR DEFAULT={self.runtime}\nDBUS_SESSION_BUS_ADDRESS DEFAULT={self.bus_address}\n")
        if self.provider == "latchkey":
            module = os.path.join(self.work, "pam_latchkey.so")
            subprocess.run([self.args.build_pam, module], check=True, stdout=subprocess.DEVNULL)
            tool = os.path.join(self.args.bin, "latchkey")
            # latchkeyd= names the agent the module vouches for before the password goes out (issue 50): the
            # run's own, not the installed one it would expect otherwise.
            agent = os.path.join(self.args.bin, "latchkeyd")
            auth = f"{module} latchkey={tool} latchkeyd={agent}"
            session = f"{module} create latchkey={tool} latchkeyd={agent}"
        else:
            auth, session = "pam_gnome_keyring.so", "pam_gnome_keyring.so auto_start"
        with open(self.pam_file, "w") as file:
            file.write(f"auth required pam_unix.so\nauth optional {auth}\n"
                       f"session required pam_env.so readenv=0 user_readenv=0 conffile={environment}\n"
                       f"session optional {session}\n")
        services = os.path.join(self.work, "services")
        os.makedirs(services)
        if self.provider == "latchkey":
            exec_line = f"{self.args.bin}/latchkeyd --secret-service --verbose"
        else:
            exec_line = "/usr/bin/gnome-keyring-daemon --start --foreground --components=secrets"  # Debian's file.
        with open(os.path.join(services, "org.freedesktop.secrets.service"), "w") as file:
            file.write(f"[D-BUS Service]\nName=org.freedesktop.secrets\nExec={exec_line}\n")
        self.bus_config = os.path.join(self.work, "bus.conf")
        with open(self.bus_config, "w") as file:
            file.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={self.bus_socket}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{services}</servicedir>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
""")

    def remove(self):
        for process in reversed(self.children):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.children = []
        if self.uid is not None:
            end_pids(pids_of(self.uid))
        if os.path.exists(self.pam_file):
            os.unlink(self.pam_file)
        if self.user_added:
            subprocess.run(["/usr/sbin/userdel", "-r", "-f", self.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.runtime, ignore_errors=True)
        shutil.rmtree(self.home, ignore_errors=True)

    # The user's environment and programs.

    def session_environment(self):
        return {"HOME": self.home, "USER": self.name, "LOGNAME": self.name, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                "XDG_RUNTIME_DIR": self.runtime, "DBUS_SESSION_BUS_ADDRESS": self.bus_address}

    def as_user(self, program):
        return ["/usr/bin/setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--init-groups"] + program

    def start(self, program, environment, log):
        process = subprocess.Popen(self.as_user(program), env=environment, cwd=self.home, stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=log, umask=0o077, start_new_session=True)
        self.children.append(process)
        return process

    def logged_out_state(self):
        """What the user manager would have running when the session's modules run: the bus, latchkeyd.socket."""
        for entry in os.listdir(self.runtime):
            path = os.path.join(self.runtime, entry)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        log = open(os.path.join(self.work, "session.log"), "ab")
        self.start(["dbus-daemon", "--config-file=" + self.bus_config, "--nofork", "--nopidfile"],
                   {**self.session_environment(), "DBUS_SESSION_BUS_ADDRESS": ""}, log)
        wait("the session bus", lambda: os.path.exists(self.bus_socket))
        if self.provider == "latchkey":
            directory = os.path.join(self.runtime, "latchkey")
            os.mkdir(directory, 0o700)
            os.chown(directory, self.uid, self.gid)
            agent, ssh = os.path.join(directory, "agent.sock"), os.path.join(directory, "ssh-agent.sock")
            variables = {**self.session_environment(), "LATCHKEY_SECRET_SERVICE": "1", "LATCHKEY_SYNC": "0",
                         "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + os.path.join(self.work, "no-system-bus"),
                         "LATCHKEY_PINENTRY": os.path.join(self.work, "no-pinentry")}
            listener = ["systemd-socket-activate", "-l", agent, "-l", ssh]
            for name in variables:
                listener += ["-E", name]
            self.start(listener + [os.path.join(self.args.bin, "latchkeyd"), "--verbose"], variables, log)
            wait("latchkeyd.socket", lambda: os.path.exists(agent) and os.path.exists(ssh))
        log.close()

    def log_out(self):
        """Ends the session's processes by pid: everything of the user's, then the bus and the listener."""
        end_pids(pids_of(self.uid))
        for process in self.children:
            process.wait()
        self.children = []

    # One login.

    def login(self):
        """authenticate + open_session, then the first lookup: (authenticate, session, login) in ns."""
        start = time.perf_counter_ns()
        pamtester = subprocess.Popen(["/usr/bin/stdbuf", "-oL", "/usr/bin/pamtester", "-v", self.service, self.name, "authenticate",
                                      "open_session"], env={"PATH": "/usr/bin:/bin"}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        pamtester.stdin.write(self.password.encode() + b"\n")
        pamtester.stdin.close()
        lines = []
        authenticated = None
        for line in pamtester.stdout:
            lines.append(line)
            if line == b"pamtester: successfully authenticated\n":
                authenticated = time.perf_counter_ns()
        pamtester.wait()
        opened = time.perf_counter_ns()
        stderr = pamtester.stderr.read()
        if pamtester.returncode != 0 or authenticated is None or lines[-1:] != [b"pamtester: successfully opened a session\n"]:
            raise RuntimeError(f"pamtester failed ({pamtester.returncode}): {b''.join(lines)!r} {stderr!r}")
        lookup = subprocess.Popen(self.as_user(["secret-tool", "lookup", "service", "latchkey-bench", "account", "first"]),
                                  env=self.session_environment(), cwd=self.home, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        answer = b""
        deadline = time.monotonic() + 60
        while SECRET not in answer and time.monotonic() < deadline:
            if not select.select([lookup.stdout], [], [], max(0, deadline - time.monotonic()))[0]:
                break
            chunk = os.read(lookup.stdout.fileno(), 4096)
            if not chunk:
                break
            answer += chunk
        answered = time.perf_counter_ns()
        if SECRET not in answer:
            lookup.kill()
        lookup.wait()
        if SECRET not in answer:
            raise RuntimeError(f"secret-tool lookup did not answer the secret ({lookup.returncode}): {lookup.stderr.read()!r}")
        return authenticated - start, opened - authenticated, answered - authenticated

    def first_login(self):
        """Unmeasured: the first login makes the keychain or the login keyring; the item is stored in it."""
        self.logged_out_state()
        self.login_without_lookup()
        stored = subprocess.run(self.as_user(["secret-tool", "store", "--label=latchkey-bench login", "service", "latchkey-bench",
                                              "account", "first"]), env=self.session_environment(), cwd=self.home, input=SECRET,
                                capture_output=True, timeout=60)
        if stored.returncode != 0:
            raise RuntimeError(f"secret-tool store failed: {stored.stderr!r}")
        self.log_out()

    def keyring_iterations(self):
        """GNOME Keyring's key derivation for the login keyring, from its file's header (big-endian: the magic,
        four version and algorithm bytes, the name, two 8-byte times, flags, lock timeout, hash iterations): the
        key is iterated SHA-256 of the password and an 8-byte salt, this many times."""
        with open(os.path.join(self.home, ".local/share/keyrings/login.keyring"), "rb") as file:
            data = file.read()
        if not data.startswith(b"GnomeKeyring\n\r\0\n"):
            raise RuntimeError("login.keyring is not in GNOME Keyring's binary format")
        offset = 20
        length = int.from_bytes(data[offset:offset + 4], "big")
        offset += 4 + (0 if length == 0xFFFFFFFF else length) + 8 + 8 + 4 + 4
        return int.from_bytes(data[offset:offset + 4], "big")

    def login_without_lookup(self):
        pamtester = subprocess.run(["/usr/bin/pamtester", "-v", self.service, self.name, "authenticate", "open_session"],
                                   env={"PATH": "/usr/bin:/bin"}, input=self.password.encode() + b"\n", capture_output=True,
                                   timeout=120)
        if pamtester.returncode != 0:
            raise RuntimeError(f"pamtester failed: {pamtester.stdout!r} {pamtester.stderr!r}")

    def check(self):
        """After a sample: Latchkey's login started exactly one latchkeyd (the bus started none of its own)."""
        if self.provider != "latchkey":
            return
        agents = [pid for pid in pids_of(self.uid) if "latchkeyd" in command_of(pid).split(" ")[0]]
        if len(agents) != 1:
            raise RuntimeError(f"{len(agents)} latchkeyd processes after the login: "
                               + "; ".join(command_of(pid) for pid in agents))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--build-pam", required=True)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--providers", default="latchkey,gnome")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("login.py: needs root (useradd, /etc/pam.d)")
    # A SIGTERM (latchkey-bench stopped) unwinds through the finally blocks: the users and PAM files go too.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(f"login.py: stopped by signal {number}"))
    names = {"latchkey": "Latchkey (pam_latchkey)", "gnome": "GNOME Keyring (pam_gnome_keyring)"}
    results, notes = {}, {}
    work = tempfile.mkdtemp(prefix="latchkey-bench-login-")
    os.chmod(work, 0o755)
    logins = []
    try:
        for provider in args.providers.split(","):
            login = Login(provider, args, work)
            logins.append(login)
            login.create()
            started = time.monotonic()
            login.first_login()
            notes[f"{names[provider]}: the first login (making the keychain or login keyring) and storing the item, seconds"] = time.monotonic() - started
            if provider == "gnome":
                notes["GNOME Keyring: the login keyring's key derivation, iterations of SHA-256"] = login.keyring_iterations()
            results[names[provider]] = {"authenticate": [], "session": [], "login": []}
        # The providers' samples alternate, so that both see the same load on a shared machine.
        for _ in range(args.samples):
            for login in logins:
                login.logged_out_state()
                authenticate, session, first = login.login()
                login.check()
                login.log_out()
                figures = results[names[login.provider]]
                figures["authenticate"].append(authenticate)
                figures["session"].append(session)
                figures["login"].append(first)
        for login in logins:
            if login.provider == "latchkey":
                with open(os.path.join(login.work, "session.log"), errors="replace") as file:
                    derived = file.read().count("latchkeyd: unlocked (with the key the login derived at its auth step)\n")
                notes["Latchkey: measured logins whose session step unlocked with the key derived at the auth step"] = derived
    except BaseException:
        for login in logins:
            path = os.path.join(login.work, "session.log")
            if os.path.exists(path):
                with open(path, errors="replace") as file:
                    sys.stderr.write(f"--- {login.provider}: the session's log\n{file.read()[-4000:]}\n")
        raise
    finally:
        for login in logins:
            login.remove()
        shutil.rmtree(work, ignore_errors=True)
    json.dump({"results": results, "notes": notes}, sys.stdout)


if __name__ == "__main__":
    main()
