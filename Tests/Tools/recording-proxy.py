#!/usr/bin/python3
"""A Unix-socket proxy that records every byte both ways: listens at LISTEN, forwards each connection to
TARGET, appends the bytes it relays to LOG. The sync tests put it between Latchkey and PostgreSQL to show
that no plaintext crosses the wire. Usage: recording-proxy.py LISTEN TARGET LOG"""
import os
import socket
import sys
import threading

listen_path, target_path, log_path = sys.argv[1:4]
lock = threading.Lock()
log = open(log_path, "ab", buffering=0)


def relay(source, destination):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            with lock:
                log.write(data)
            destination.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, destination):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
if os.path.exists(listen_path):
    os.unlink(listen_path)
server.bind(listen_path)
server.listen(64)
print("ready", flush=True)
while True:
    client, _ = server.accept()
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    upstream.connect(target_path)
    threading.Thread(target=relay, args=(client, upstream), daemon=True).start()
    threading.Thread(target=relay, args=(upstream, client), daemon=True).start()
