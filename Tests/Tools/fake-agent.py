#!/usr/bin/env python3
"""A process pretending to be latchkeyd (for the agent-socket trust tests): listens on a Unix socket and
records, in a log file, how many bytes each connection sent. Latchkey's client must never send it anything.

Usage: fake-agent.py SOCKET LOG [--greet]
"""
import os
import socket
import sys

path, log = sys.argv[1], sys.argv[2]
greet = "--greet" in sys.argv[3:]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o777)
server.listen(16)
with open(log, "a") as out:
    out.write("listening\n")
while True:
    connection, _ = server.accept()
    connection.settimeout(2)
    received = b""
    try:
        if greet:
            # A greeting as the real agent sends it: "LK", version 2, "G", a 16-byte challenge.
            body = b"LK\x02G" + bytes(16)
            connection.sendall(len(body).to_bytes(4, "big") + body)
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
    except OSError:
        pass
    connection.close()
    with open(log, "a") as out:
        out.write(f"connection sent {len(received)} bytes: {received!r}\n")
