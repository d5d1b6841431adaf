#!/usr/bin/env python3
"""The exec race against latchkeyd, as the adversarial review ran it (for AgentHardeningTests): a process
connects and says hello, then hands the connection to a program the agent would trust — the registered
one it execs — while another process of its own keeps the socket and asks for that program's secret.

Usage: exec-race.py MODE SOCKET KEYCHAIN REGISTERED-EXECUTABLE QUERY-HEX RESULT-FILE
  QUERY-HEX is the encoded copyMatching request (id 2) that asks for the secret, written by the test with
  the protocol's own encoder.
  child            connect, hello, fork; the parent execs the registered program; the child (which kept the
                   socket) asks for the secret.
  exec-after-send  connect, fork a reader; the parent sends hello and the request, then execs the registered
                   program at once; the reader (which kept the socket) collects the answers.
The result file gets one line per answer: "closed", or "status <n> <data as hex>".
"""
import os
import socket
import struct
import sys
import time

import agentframes

mode, path, keychain, registered, query_hex, result = sys.argv[1:7]
# The protocol version of the request the test encoded ("LK", version, ...): the hello speaks the same.
VERSION = bytes.fromhex(query_hex)[2]


def request(identifier, code, body):
    return agentframes.request(VERSION, identifier, code, body)


def send_frame(connection, message):
    connection.sendall(struct.pack(">I", len(message)) + message)


read_frame, field = agentframes.read_frame, agentframes.field


def write_result(lines):
    # Whole or not at all: the test waits for the file to appear.
    with open(result + ".partial", "w") as out:
        out.write("\n".join(lines) + "\n")
    os.rename(result + ".partial", result)


def describe(frame):
    if frame is None:
        return "closed"
    # "LK", version, id (4), operation (1), status (4); a failure then has its detail, a success its value.
    status = struct.unpack("<i", frame[8:12])[0]
    if status != 0:
        detail_length = struct.unpack("<I", frame[12:16])[0]
        return f"status {status} {frame[16:16 + detail_length].hex()}"
    return f"status {status} {frame[12:].hex()}"


connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.connect(path)
greeting = read_frame(connection)
challenge = greeting[4:]
hello = request(1, 1, field(keychain.encode()) + field(challenge))
query = bytes.fromhex(query_hex)
os.set_inheritable(connection.fileno(), True)

if mode == "child":
    send_frame(connection, hello)
    answer = read_frame(connection)
    if os.fork() == 0:
        time.sleep(0.5)  # the parent has become the registered program by now
        send_frame(connection, query)
        write_result([describe(read_frame(connection))])
        os._exit(0)
    os.execv(registered, [registered, "status"])
elif mode == "exec-after-send":
    if os.fork() == 0:
        write_result([describe(read_frame(connection)), describe(read_frame(connection))])
        os._exit(0)
    send_frame(connection, hello)
    send_frame(connection, query)
    os.execv(registered, [registered, "status"])
