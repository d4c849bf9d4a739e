"""A fake logind for the inhibitor tests, in its own process (run by a Python with
dbus-python and PyGObject: QtDBus cannot send a descriptor from Python, and an in-process
service would deadlock on the blocking call's GIL).

``Inhibit`` hands out the write end of a pipe, as logind hands out a FIFO's; ``Held`` lists
``mode:why`` of those still held — a read end that sees no EOF has a writer somewhere.
``Announce(going)``, on a test interface, makes it send ``PrepareForSleep(going)`` as logind
does before a sleep (true) and after the resume (false)."""

import os
import select
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

MANAGER = "org.freedesktop.login1.Manager"
TEST = "io.coven.test.FakeLogind"


class Logind(dbus.service.Object):
    def __init__(self, bus: dbus.bus.BusConnection) -> None:
        super().__init__(bus, "/org/freedesktop/login1")
        self.taken: list[tuple[str, str, int]] = []

    @dbus.service.method(MANAGER, in_signature="ssss", out_signature="h")
    def Inhibit(self, what, who, why, mode):
        read, write = os.pipe()
        self.taken.append((str(mode), str(why), read))
        handle = dbus.types.UnixFd(write)  # a duplicate: ours is closed at once
        os.close(write)
        return handle

    @dbus.service.method(MANAGER, in_signature="", out_signature="as")
    def Held(self):
        return [f"{mode}:{why}" for mode, why, read in self.taken if _held(read)]

    @dbus.service.method(TEST, in_signature="b", out_signature="")
    def Announce(self, going):
        self.PrepareForSleep(going)

    @dbus.service.signal(MANAGER, signature="b")
    def PrepareForSleep(self, going):
        pass


def _held(read: int) -> bool:
    readable, _, _ = select.select([read], [], [], 0)
    return not readable  # nothing is ever written: readable means EOF, every writer gone


if __name__ == "__main__":
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    connection = dbus.bus.BusConnection(sys.argv[1])
    name = dbus.service.BusName("org.freedesktop.login1", connection)
    logind = Logind(connection)
    print("ready", flush=True)
    GLib.MainLoop().run()
