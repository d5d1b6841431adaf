#!/usr/bin/python3
"""A stand-in for systemd-logind on a private D-Bus bus, for the agent's lock-on-sleep tests.

    fake-logind.py <bus address>

Owns org.freedesktop.login1 and serves, on /org/freedesktop/login1:
- org.freedesktop.login1.Manager.Inhibit(what, who, why, mode) -> fd, as logind does (the inhibitor is
  held until every copy of the returned descriptor is closed), and the PrepareForSleep(b) signal;
- org.latchkey.FakeLogind.Sleep(b): emits PrepareForSleep(b), as logind does before a suspend (true)
  and after the resume (false);
- org.latchkey.FakeLogind.Inhibitors() -> as: the inhibitors still held, "what who mode" each.
Prints "ready" once it owns the name, and a line for each Inhibit call.
"""
import os
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

MANAGER = "org.freedesktop.login1.Manager"
CONTROL = "org.latchkey.FakeLogind"


class Manager(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/freedesktop/login1")
        self.inhibitors = []  # (description, write end of a pipe whose read end went to the caller)

    @dbus.service.method(MANAGER, in_signature="ssss", out_signature="h")
    def Inhibit(self, what, who, why, mode):
        read_end, write_end = os.pipe()
        self.inhibitors.append((f"{what} {who} {mode}", write_end))
        print(f"inhibit {what} {who} {mode}", flush=True)
        descriptor = dbus.types.UnixFd(read_end)  # duplicates the descriptor
        os.close(read_end)
        return descriptor

    @dbus.service.signal(MANAGER, signature="b")
    def PrepareForSleep(self, start):
        pass

    @dbus.service.method(CONTROL, in_signature="b", out_signature="")
    def Sleep(self, start):
        self.PrepareForSleep(start)

    @dbus.service.method(CONTROL, in_signature="", out_signature="as")
    def Inhibitors(self):
        held = []
        for description, write_end in self.inhibitors:
            try:
                os.write(write_end, b"?")  # fails with EPIPE once the holder closed its descriptor
                held.append(description)
            except BrokenPipeError:
                pass
        return held


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(sys.argv[1])
    name = dbus.service.BusName("org.freedesktop.login1", bus)
    manager = Manager(bus)
    print("ready", flush=True)
    GLib.MainLoop().run()
    del name, manager


if __name__ == "__main__":
    main()
