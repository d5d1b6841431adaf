"""Stopping a process for a race test: SIGSTOP, then wait until every one of its threads is stopped —
kill() returns before the stop is done, and a thread still running could act on what the test does next."""
import os
import signal
import time

def stop_and_wait(pid):
    """SIGSTOP `pid` and wait until every thread of it is stopped: kill() returns before the stop is done, and
    a thread of the agent still running could accept the connection made next."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        states = []
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/stat") as stat:
                    states.append(stat.read().rsplit(")", 1)[1].split()[0])
            except FileNotFoundError:
                continue  # A thread that ended meanwhile.
        if states and all(state in ("T", "t") for state in states):
            return
        time.sleep(0.001)
    raise SystemExit(f"{pid} did not stop")
