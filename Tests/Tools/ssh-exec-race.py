#!/usr/bin/env python3
"""The third review's SSH agent attack (issue 50, point 3), for SSHProgramRaceTests: an unregistered program
connects to the SSH agent, writes a sign request for a key open only to registered programs, forks a child
that keeps the socket, and execs a registered program in the connecting process (ssh, kept waiting on its
ProxyCommand). The request carries the writer's pid — now the registered program's. With MODE "stopped" the
agent is stopped from before the connection until after the exec, so it identifies the peer only then.
SOCKET-KIND "close-on-exec" is Python's default (the exec closes it in the connecting process: only the child
holds it); "inherited" keeps it open across the exec.

Usage: ssh-exec-race.py RESULT-FILE SOCKET AGENT-PID MODE SOCKET-KIND KEY-BLOB-HEX TARGET [ARGUMENT ...]
The result file gets "signature", "failure" or "closed", and the target is ended.
"""
import os
import signal
import socket
import struct
import sys
import time

from stopping import stop_and_wait

result, path, agent, mode, kind, blob = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], bytes.fromhex(sys.argv[6])
target = sys.argv[7:]




def string(data):
    return struct.pack(">I", len(data)) + data


if mode == "stopped":
    stop_and_wait(agent)
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.set_inheritable(kind == "inherited")
connection.connect(path)
body = bytes([13]) + string(blob) + string(b"data the registered program never asked to sign") + struct.pack(">I", 0)
connection.sendall(struct.pack(">I", len(body)) + body)

ready_read, ready_write = os.pipe()
parent = os.getpid()
if os.fork():
    os.close(ready_read)
    os.execv(target[0], target)  # ready_write closes at exec: the child learns the target runs.

os.close(ready_write)
os.read(ready_read, 1)
time.sleep(0.05)  # The exec is complete: the registered program runs in the pid the request carries.
if mode == "stopped":
    os.kill(agent, signal.SIGCONT)
connection.settimeout(10)
outcome = "closed"
try:
    header = connection.recv(4, socket.MSG_WAITALL)
    if len(header) == 4:
        reply = connection.recv(struct.unpack(">I", header)[0], socket.MSG_WAITALL)
        outcome = {14: "signature", 5: "failure"}.get(reply[0] if reply else -1, "other")
except (socket.timeout, OSError):
    outcome = "closed"
with open(result + ".partial", "w") as out:
    out.write(outcome + "\n")
os.rename(result + ".partial", result)
os.kill(parent, signal.SIGTERM)
