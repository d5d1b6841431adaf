#!/usr/bin/python3
"""The Debian package's system test (script/package-test prepares the root and runs this).

debian-system-test.py WORK DEB: boots WORK/root with systemd-nspawn --boot and drives its console through real
password logins (getty, then /bin/login: PAM's "login" service), as root and as alice. Each check prints
"PASS name" or "FAIL name: detail"; the last line is "N passed, N failed"; the exit status is 1 when one failed.
The console's transcript goes to WORK/console.log.
"""
import re
import sys

import pexpect

WORK, DEB = sys.argv[1], sys.argv[2]
ALICE_PASSWORD = "alice login password"
PROMPT = "@LK@ "
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail.strip()[-1500:]), flush=True)
    return ok


console = pexpect.spawn(
    "systemd-nspawn",
    ["-q", "--register=no", "--keep-unit", "-D", WORK + "/root", "--boot", "--machine=latchkey-system-test"],
    encoding="utf-8", codec_errors="replace", timeout=180, dimensions=(60, 400))
console.logfile_read = open(WORK + "/console.log", "w")


def login(user, password):
    """A password login on the console: getty's prompt, /bin/login's, then a shell set up for the test."""
    console.expect("login: ", timeout=300)
    console.sendline(user)
    console.expect("Password: ")
    console.sendline(password)
    console.expect([r"\$ $", r"# $"], timeout=120)
    console.sendline("stty -echo; export TERM=dumb PS1='" + PROMPT + "'")
    console.expect(PROMPT)
    run("owner() { pid=$(busctl --user call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus "
        "GetConnectionUnixProcessID s org.freedesktop.secrets 2>/dev/null | cut -d' ' -f2); "
        "if [ -n \"$pid\" ]; then basename \"$(ps -o args= -p \"$pid\" | cut -d' ' -f1)\"; else echo none; fi; }")


def logout():
    console.sendline("exit")


def run(command, timeout=300):
    """Runs a shell command; its output (standard output and error) and exit status."""
    console.sendline(command + " 2>&1; echo @RC=$?@")
    console.expect(r"@RC=(\d+)@", timeout=timeout)
    output, status = console.before, int(console.match.group(1))
    console.expect(PROMPT)
    return output.replace("\r\n", "\n").strip("\n"), status


def owner():
    return run("owner")[0].strip()


def lookups(first, last, label):
    output, _ = run("for i in $(seq %d %d); do [ \"$(timeout 20 secret-tool lookup test item n $i)\" = \"secret $i\" ] "
                    "|| echo missing $i; done; echo looked up" % (first, last))
    return check(label, output.strip().endswith("looked up") and "missing" not in output, output)


# 1. GNOME Keyring, holding 50 items, unlocked by the console login's PAM lines (GDM's).
login("alice", ALICE_PASSWORD)
check("GNOME Keyring holds org.freedesktop.secrets", owner() == "gnome-keyring-daemon", owner())
lookups(1, 50, "the login unlocked GNOME Keyring: it serves the 50 items")
logout()

# 2. The package.
login("root", "system-test-root")
output, status = run("DEBIAN_FRONTEND=noninteractive apt-get install -y /root/" + DEB, timeout=600)
check("apt install ./" + DEB, status == 0, output)
output, _ = run("grep -h pam_latchkey /etc/pam.d/common-auth /etc/pam.d/common-session /etc/pam.d/common-password")
check("pam-auth-update applied the profile (auth, session, password)", output.count("pam_latchkey.so") == 3, output)
output, _ = run("grep -E '^session' /etc/pam.d/common-session | awk '{print $3}' | tr '\\n' ' '")
check("the session line comes after pam_systemd's",
      re.search(r"pam_systemd\.so .*pam_latchkey\.so", output) is not None, output)
output, status = run("systemctl --global is-enabled latchkeyd.socket")
check("latchkeyd.socket is enabled for every user", output.strip() == "enabled", output)
check("no keychain was made by the installation",
      run("test -e /home/alice/.local/share/latchkey/login.keychain")[1] != 0)
logout()

# 3. A password login creates and unlocks the keychain; desktop enable moves the 50 items.
login("alice", ALICE_PASSWORD)
check("the login created the keychain", run("test -f ~/.local/share/latchkey/login.keychain")[1] == 0)
output, _ = run("latchkey doctor --desktop")
print(output, flush=True)
check("the login unlocked it (doctor: latchkeyd serves it, unlocked)", re.search(r"serves .*, unlocked", output) is not None,
      output)
output, status = run("latchkey desktop enable --dry-run")
check("desktop enable --dry-run counts the 50 items", status == 0 and "copy 50 items from GNOME Keyring" in output,
      output)
output, status = run("LATCHKEY_PASSPHRASE='%s' latchkey desktop enable" % ALICE_PASSWORD, timeout=300)
print(output, flush=True)
check("desktop enable copies the 50 items", status == 0 and "copied 50 items from GNOME Keyring" in output, output)
check("latchkeyd holds org.freedesktop.secrets", owner() == "latchkeyd", owner())
run("printf '%s\\n' | latchkey unlock-keychain --passphrase-fd 0" % ALICE_PASSWORD)
lookups(1, 50, "Latchkey serves the 50 items")
# The bus starts latchkeyd through the user's activation file and its unit.
run("systemctl --user stop latchkeyd.service")
check("with latchkeyd stopped no one holds the name", owner() == "none", owner())
run("timeout 30 secret-tool lookup test item n 1")
check("secret-tool's request starts latchkeyd through the user bus", owner() == "latchkeyd", owner())
run("printf '%s\\n' | latchkey unlock-keychain --passphrase-fd 0" % ALICE_PASSWORD)
output, status = run("for i in 51 52 53; do printf 'secret %s' $i | timeout 20 secret-tool store --label=\"Item $i\" "
                     "test item n $i || echo failed $i; done; echo stored")
check("secret-tool stores 3 more items in Latchkey", "failed" not in output, output)
lookups(51, 53, "secret-tool looks them up")
logout()

# 4. The next login unlocks Latchkey; desktop disable moves everything back into GNOME Keyring.
login("alice", ALICE_PASSWORD)
check("after the next login latchkeyd holds the name", owner() == "latchkeyd", owner())
lookups(1, 53, "the login unlocked Latchkey: its 53 items, with no other unlock")
output, status = run("LATCHKEY_PASSPHRASE='%s' latchkey desktop disable" % ALICE_PASSWORD, timeout=300)
print(output, flush=True)
if status != 0:
    check("desktop disable says what is left when GNOME Keyring is locked",
          "run `latchkey desktop disable` again" in output, output)
    logout()
    login("alice", ALICE_PASSWORD)
    output, status = run("LATCHKEY_PASSPHRASE='%s' latchkey desktop disable" % ALICE_PASSWORD, timeout=300)
    print(output, flush=True)
check("desktop disable moves the 3 new items back", status == 0 and "copied 3 items into GNOME Keyring" in output,
      output)
logout()
login("alice", ALICE_PASSWORD)
check("after the next login GNOME Keyring holds the name", owner() == "gnome-keyring-daemon", owner())
lookups(1, 53, "GNOME Keyring serves all 53 items")
logout()

# 5. Purged: the keychain file stays, GNOME Keyring serves.
login("root", "system-test-root")
output, status = run("DEBIAN_FRONTEND=noninteractive apt-get purge -y latchkey", timeout=600)
check("apt purge latchkey", status == 0, output)
check("the purge left alice's keychain file", run("test -f /home/alice/.local/share/latchkey/login.keychain")[1] == 0)
check("no PAM line names pam_latchkey any more", run("grep -r pam_latchkey /etc/pam.d")[1] == 1)
logout()
login("alice", ALICE_PASSWORD)
check("after the purge GNOME Keyring holds the name", owner() == "gnome-keyring-daemon", owner())
lookups(1, 53, "GNOME Keyring serves all 53 items after the purge")
logout()
login("root", "system-test-root")
console.sendline("systemctl poweroff")
console.expect(pexpect.EOF, timeout=120)

passed = results.count(True)
print("%d passed, %d failed" % (passed, len(results) - passed))
sys.exit(0 if passed == len(results) else 1)
