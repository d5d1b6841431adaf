#!/usr/bin/env python3
"""The second review's forged credentials (issue 30, point 1), for NamespaceForgeryTests. Run as
`unshare -Urpf python3 namespace-forgery.py ...` by an unprivileged user: this process is then the root of
a new user and pid namespace, which lets it send messages whose SCM_CREDENTIALS name any pid of that
namespace.

Usage: namespace-forgery.py SOCKET KEYCHAIN REGISTERED QUERY-HEX RESULT-FILE
  A child connects to the agent's socket, hands the socket to this process (SCM_RIGHTS), and execs
  REGISTERED (a program the agent has registered). This process then says hello and sends QUERY-HEX (an
  encoded request, id 2), every frame with credentials naming the child's pid, and writes one line per
  answer to RESULT-FILE: "closed", or "status <n> <rest of the frame as hex>".
"""
import array
import os
import socket
import struct
import sys

import agentframes

path, keychain, registered, query_hex, result = sys.argv[1:6]
VERSION = bytes.fromhex(query_hex)[2]


def request(identifier, code, body):
    return agentframes.request(VERSION, identifier, code, body)


def send_as(connection, pid, message):
    """One frame, sent with credentials that name `pid` (allowed: we are root of the namespace)."""
    credentials = struct.pack("iII", pid, 0, 0)
    frame = struct.pack(">I", len(message)) + message
    connection.sendmsg([frame], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, credentials)])


read_frame, field = agentframes.read_frame, agentframes.field


def describe(frame):
    if frame is None:
        return "closed"
    status = struct.unpack("<i", frame[8:12])[0]
    return f"status {status} {frame[12:].hex()}"


ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
ready_read, ready_write = os.pipe()
child = os.fork()
if child == 0:
    ours.close()
    os.close(ready_read)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    theirs.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [connection.fileno()]))])
    connection.close()
    os.close(ready_write)
    os.execv(registered, [registered, "30"])

theirs.close()
os.close(ready_write)
message, ancillary, _, _ = ours.recvmsg(1, socket.CMSG_LEN(4))
fd = array.array("i", ancillary[0][2][:4])[0]
connection = socket.socket(fileno=fd)
# The child's write end closes at exec: it runs the registered program by the time this read returns.
os.read(ready_read, 1)
greeting = read_frame(connection)
lines = []
if greeting is None:
    lines.append("closed")
else:
    challenge = greeting[4:]
    send_as(connection, child, request(1, 1, field(keychain.encode()) + field(challenge)))
    lines.append(describe(read_frame(connection)))
    send_as(connection, child, bytes.fromhex(query_hex))
    lines.append(describe(read_frame(connection)))
os.kill(child, 9)
with open(result + ".partial", "w") as out:
    out.write("\n".join(lines) + "\n")
os.rename(result + ".partial", result)
