#!/usr/bin/env python3
"""A scripted pinentry for the agent's tests: it speaks the Assuan protocol of GnuPG's pinentry on standard
input and output, logs what it was asked, and answers GETPIN as the test says.

Environment:
  FAKE_PINENTRY_LOG     a file to append one line per command to ("SETDESC <decoded text>", "GETPIN", ...)
  FAKE_PINENTRY_DELAY   seconds to wait before answering GETPIN or CONFIRM (a user who takes a while)
  FAKE_PINENTRY_ANSWER  a file whose first line says how to answer GETPIN and CONFIRM:
                          pin:<text>   the user typed <text> (GETPIN); pressed Allow (CONFIRM)
                          confirm      the user pressed Allow (CONFIRM; GETPIN gets an empty passphrase)
                          cancel       the user pressed Cancel (ERR 83886179 Operation cancelled)
                          notok        the user pressed the third button, SETNOTOK's (ERR 83886194 Not confirmed)
                          timeout      nobody answered (ERR 83886142 Timeout)
                          die          pinentry ends without an answer
"""
import os
import sys
import time
from urllib.parse import unquote


def log(line):
    with open(os.environ["FAKE_PINENTRY_LOG"], "a") as out:
        out.write(line + "\n")


def answer():
    with open(os.environ["FAKE_PINENTRY_ANSWER"]) as source:
        return source.readline().rstrip("\n")


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def escape(data):
    return "".join(c if c not in "%\r\n" else "%%%02X" % ord(c) for c in data)


say("OK Pleased to meet you")
for raw in sys.stdin:
    line = raw.rstrip("\n")
    command, _, argument = line.partition(" ")
    log(f"{command} {unquote(argument)}".rstrip())
    if command == "GETINFO" and argument == "version":
        say("D 1.2.1")
        say("OK")
        continue
    if command in ("GETPIN", "CONFIRM"):
        time.sleep(float(os.environ.get("FAKE_PINENTRY_DELAY", "0")))
        how = answer()
        if command == "CONFIRM" and (how.startswith("pin:") or how == "confirm"):
            say("OK")
            continue
        if how == "confirm":
            how = "pin:"
        if how.startswith("pin:"):
            say("D " + escape(how[4:]))
            say("OK")
        elif how == "cancel":
            say("ERR 83886179 Operation cancelled <Pinentry>")
        elif how == "notok":
            say("ERR 83886194 Not confirmed <Pinentry>")
        elif how == "timeout":
            say("ERR 83886142 Timeout <Pinentry>")
        else:
            sys.exit(0)
    elif command == "BYE":
        say("OK closing connection")
        break
    else:
        say("OK")
