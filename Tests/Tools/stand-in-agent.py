#!/usr/bin/env python3
"""A program of the user that stands in for latchkeyd on the agent's socket (issue 50, point 4): it listens
where the agent would, greets every connection as the agent does, answers every request with success, and
records what it was sent. pam_latchkey must send it nothing after the greeting.

Usage: stand-in-agent.py SOCKET REPORT plain
       stand-in-agent.py SOCKET REPORT exec-agent LATCHKEYD RUNTIME
plain: this process listens and serves, made not dumpable (prctl) so that only what it runs gives it away.
exec-agent: this process listens, forks a child that serves, and then runs the real latchkeyd (keeping the
listening socket, on a runtime directory of its own): the socket's SO_PEERCRED names latchkeyd, while the
child accepts. The child says it is ready once that latchkeyd runs and is not dumpable.

REPORT gets "ready PID" (the process that accepts), then per connection "connection", one "frame HEX" per frame received, and "closed".
Ends on SIGTERM.
"""
import ctypes
import os
import socket
import struct
import sys
import time

path, report_path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
PR_SET_DUMPABLE = 4


def line(text):
    with open(report_path, "a") as report:
        report.write(text + "\n")


def ready():
    """The report's first line, "ready PID", put in place whole (written aside, then renamed): the test waits
    for the report to exist and reads the pid at once."""
    with open(report_path + ".writing", "w") as report:
        report.write(f"ready {os.getpid()}\n")
    os.rename(report_path + ".writing", report_path)


def frame(body):
    return struct.pack(">I", len(body)) + body


def read_frame(connection):
    header = b""
    while len(header) < 4:
        chunk = connection.recv(4 - len(header))
        if not chunk:
            return None
        header += chunk
    length = struct.unpack(">I", header)[0]
    body = b""
    while len(body) < length:
        chunk = connection.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    return body


def serve(server):
    while True:
        connection, _ = server.accept()
        line("connection")
        connection.settimeout(30)
        try:
            # The agent's greeting: "LK", the protocol's version (8), "G", a 16-byte challenge.
            connection.sendall(frame(b"LK\x08G" + os.urandom(16)))
            while True:
                body = read_frame(connection)
                if body is None:
                    break
                line(f"frame {body.hex()}")
                # Success for whatever it was: "LK", version, the request's id, its operation, status 0.
                if len(body) >= 8:
                    connection.sendall(frame(b"LK\x08" + body[3:7] + body[7:8] + struct.pack("<i", 0)))
        except OSError:
            pass
        connection.close()
        line("closed")


directory = os.path.dirname(path)
os.makedirs(directory, mode=0o700, exist_ok=True)
if os.path.exists(path):
    os.unlink(path)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(16)
if mode == "plain":
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    ready()
    serve(server)
elif mode == "exec-agent":
    latchkeyd, runtime = sys.argv[4], sys.argv[5]
    parent = os.getpid()
    if os.fork() == 0:
        # Wait until the parent runs latchkeyd and has made itself not dumpable (its /proc is root's then).
        # (Its executable can be read only while it is dumpable: seen once, then its /proc turns root's.)
        execed = False
        for _ in range(3000):
            try:
                execed = execed or os.readlink(f"/proc/{parent}/exe") == latchkeyd
            except OSError:
                pass
            if execed and os.stat(f"/proc/{parent}/status").st_uid == 0:
                break
            time.sleep(0.001)
        ready()
        serve(server)
    os.set_inheritable(server.fileno(), True)
    environment = dict(os.environ, XDG_RUNTIME_DIR=runtime, LATCHKEY_KEYCHAIN=runtime + "/none.keychain")
    os.execve(latchkeyd, [latchkeyd, "--no-ssh-agent", "--wait-for-keychain", "300"], environment)
