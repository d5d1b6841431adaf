#!/usr/bin/python3
"""A TCP proxy in front of swtpm that makes the TPM vanish mid-call: listens on 127.0.0.1 PORT (commands)
and PORT+1 (control), forwards to TARGET and TARGET+1, and when the client sends its CUT-th message on the
command port (counted over every connection), closes that connection instead of forwarding it — the TPM
stops answering half-way through an operation. Prints "ready" once it listens. Usage:
tpm-cut-proxy.py PORT TARGET CUT"""
import socket
import sys
import threading

port, target, cut = (int(argument) for argument in sys.argv[1:4])
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


def serve(listener, target_port, counting):
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(("127.0.0.1", target_port))
        threading.Thread(target=relay, args=(client, server, counting), daemon=True).start()
        threading.Thread(target=relay, args=(server, client, False), daemon=True).start()


listeners = []
for offset in (0, 1):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port + offset))
    listener.listen(16)
    listeners.append(listener)
print("ready", flush=True)
threads = [threading.Thread(target=serve, args=(listeners[i], target + i, i == 0), daemon=True) for i in (0, 1)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
