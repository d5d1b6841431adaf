#!/usr/bin/env python3
"""Asks latchkeyd, as whichever program runs this (python3: unregistered unless registered), for requests
that carry no argument or one text field, one after another, and prints each answer's status (for
AgentAdministrationTests and UnlockThrottleTests).

Usage: agent-ask.py SOCKET OPERATION-CODE[:TEXT]...
Prints one line per request: "<operation> <status>".
"""
import socket
import struct
import sys

import agentframes

path, requests = sys.argv[1], [word.split(":", 1) for word in sys.argv[2:]]
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.connect(path)
greeting = agentframes.read_frame(connection)
version, challenge = greeting[2], greeting[4:]


def ask(identifier, code, body):
    message = agentframes.request(version, identifier, code, body)
    connection.sendall(struct.pack(">I", len(message)) + message)
    frame = agentframes.read_frame(connection)
    return None if frame is None else struct.unpack("<i", frame[8:12])[0]


ask(1, 1, agentframes.field(b"") + agentframes.field(challenge))
for number, words in enumerate(requests):
    body = agentframes.field(words[1].encode()) if len(words) == 2 else b""
    print(words[0], ask(2 + number, int(words[0]), body))
