#!/usr/bin/env python3
"""The Secret Service exec race (issue 30, point 2), for SecretServiceIsolationTests: a process connects to
the session bus, forks, and execs TARGET in the connecting process; the child keeps the connection and
asks the Secret Service for the target's items — reads them, and overwrites the one with ATTRIBUTES.

Usage: bus-exec-race.py RESULT-FILE ATTRIBUTES-JSON STDIN TARGET [ARGUMENT ...]
The target's standard input is a pipe the child holds: STDIN is written to it once the child is done (so
`secret-tool store`, which reads the password before it connects, runs without a connection of its own
while the child asks). The result file gets one line per call the child makes: "ok <what it got>" or
"error <D-Bus error name>".
"""
import json
import os
import sys

from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

result, attributes, text, target = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4:]
service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service")
connection = open_dbus_connection(bus="SESSION")
ready_read, ready_write = os.pipe()
input_read, input_write = os.pipe()
child = os.fork()
if child:
    os.close(ready_read)
    os.close(input_write)
    os.dup2(input_read, 0)
    os.execv(target[0], target)  # ready_write closes at exec: the child learns the target runs.

os.close(ready_write)
os.close(input_read)
os.read(ready_read, 1)


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
os.write(input_write, text.encode())
os.close(input_write)
with open(result + ".partial", "w") as out:
    out.write("\n".join(lines) + "\n")
os.rename(result + ".partial", result)
