#!/usr/bin/python3
"""A stand-in for systemd-logind on a private D-Bus bus, for the agent's lock-on-sleep tests.

    fake-logind.py <bus address>

Owns org.freedesktop.login1 and serves, on /org/freedesktop/login1:
- org.freedesktop.login1.Manager.Inhibit(what, who, why, mode) -> fd, as logind does (the inhibitor is
  held until every copy of the returned descriptor is closed), and the PrepareForSleep(b) signal;
- org.latchkey.FakeLogind.Sleep(b): emits PrepareForSleep(b), as logind does before a suspend (true)
  and after the resume (false);
- org.latchkey.FakeLogind.Inhibitors() -> as: the inhibitors still held, "what who mode" each;
- org.freedesktop.login1.Manager.ListSessions() -> a(susso): session "c1" of the uid given as the second
  argument (default: this process's) and "c2" of that uid + 1, each on /org/freedesktop/login1/session/<id>;
- org.latchkey.FakeLogind.LockSession(s id): emits the session's Lock signal, as `loginctl lock-session` does;
- org.latchkey.FakeLogind.SetLockedHint(s id, b locked): emits PropertiesChanged(Session, {LockedHint}) on the
  session, as logind does when a screen locker calls SetLockedHint.
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
SESSION = "org.freedesktop.login1.Session"
PROPERTIES = "org.freedesktop.DBus.Properties"


class Session(dbus.service.Object):
    def __init__(self, bus, session_id, uid):
        self.path = f"/org/freedesktop/login1/session/{session_id}"
        super().__init__(bus, self.path)
        self.session_id = session_id
        self.uid = uid

    @dbus.service.signal(SESSION, signature="")
    def Lock(self):
        pass

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class Manager(dbus.service.Object):
    def __init__(self, bus, uid):
        super().__init__(bus, "/org/freedesktop/login1")
        self.inhibitors = []  # (description, write end of a pipe whose read end went to the caller)
        self.sessions = {"c1": Session(bus, "c1", uid), "c2": Session(bus, "c2", uid + 1)}

    @dbus.service.method(MANAGER, in_signature="", out_signature="a(susso)")
    def ListSessions(self):
        return [(s.session_id, dbus.UInt32(s.uid), f"user{s.uid}", "seat0", dbus.ObjectPath(s.path)) for s in self.sessions.values()]

    @dbus.service.method(CONTROL, in_signature="s", out_signature="")
    def LockSession(self, session_id):
        self.sessions[session_id].Lock()

    @dbus.service.method(CONTROL, in_signature="sb", out_signature="")
    def SetLockedHint(self, session_id, locked):
        self.sessions[session_id].PropertiesChanged(SESSION, {"LockedHint": dbus.Boolean(locked)}, dbus.Array([], signature="s"))

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
    manager = Manager(bus, int(sys.argv[2]) if len(sys.argv) > 2 else os.getuid())
    print("ready", flush=True)
    GLib.MainLoop().run()
    del name, manager


if __name__ == "__main__":
    main()
