#!/usr/bin/python3
"""A proxy in front of swtpm's Unix sockets that makes the TPM vanish mid-call: listens at LISTEN (commands)
and LISTEN.ctrl (control), forwards to TARGET and TARGET.ctrl, and when the client sends its CUT-th message
on the command socket (counted over every connection), closes that connection instead of forwarding it —
the TPM stops answering half-way through an operation. Prints "ready" once it listens. Usage:
tpm-cut-proxy.py LISTEN TARGET CUT"""
import socket
import sys
import threading

listen, target, cut = sys.argv[1], sys.argv[2], int(sys.argv[3])
lock = threading.Lock()
sent = 0


def close(*sockets):
    for s in sockets:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def relay(source, destination, counting):
    global sent
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            if counting:
                with lock:
                    sent += 1
                    cutting = sent == cut
                if cutting:
                    break
            destination.sendall(data)
    except OSError:
        pass
    finally:
        close(source, destination)


def serve(listener, target_path, counting):
    while True:
        client, _ = listener.accept()
        server = socket.socket(socket.AF_UNIX)
        server.connect(target_path)
        threading.Thread(target=relay, args=(client, server, counting), daemon=True).start()
        threading.Thread(target=relay, args=(server, client, False), daemon=True).start()


listeners = []
for suffix in ("", ".ctrl"):
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(listen + suffix)
    listener.listen(16)
    listeners.append(listener)
print("ready", flush=True)
suffixes = ("", ".ctrl")
threads = [threading.Thread(target=serve, args=(listeners[i], target + suffixes[i], i == 0), daemon=True) for i in (0, 1)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
