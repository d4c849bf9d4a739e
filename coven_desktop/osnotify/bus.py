"""Small D-Bus helpers shared by the logind, timedated, UPower and NetworkManager watches."""

from __future__ import annotations

from PySide6.QtDBus import QDBusConnection, QDBusMessage, QDBusVariant

PROPERTIES = "org.freedesktop.DBus.Properties"
#: ``PropertiesChanged``'s signature, fixed by the D-Bus specification.
SIGNATURE = "sa{sv}as"


def unwrapped(value: object) -> object:
    """A property's value, out of the variant QtDBus may leave it in."""
    return value.variant() if isinstance(value, QDBusVariant) else value


def service_available(bus: QDBusConnection, service: str) -> bool:
    """Whether ``service`` runs now or can be started on demand.

    timedated is bus-activated and usually not running: it starts when someone sets the zone,
    and then emits the change, so "activatable" counts as available.
    """
    owned = ask_bus(bus, "NameHasOwner", service)
    if owned is True:
        return True
    activatable = ask_bus(bus, "ListActivatableNames")
    return isinstance(activatable, list) and service in activatable


def ask_bus(bus: QDBusConnection, method: str, *arguments: object) -> object:
    """A method of the bus itself (``org.freedesktop.DBus``), by a plain message; its first
    reply argument, or None on an error.

    Not through ``bus.interface()``: that hands Python a wrapper of the connection's
    ``QDBusConnectionInterface``, a QObject that QtDBus deletes on its own thread when the
    connection goes. Deleting a wrapped QObject takes the GIL, and a blocking call on the
    GUI thread holds the GIL while it waits for QtDBus's thread: the two waited for each
    other for good (seen twice in tests/desktop/osnotify, with gdb: QtDBus's thread in
    ``QObject::~QObject`` → ``SignalManager::retrieveMetaObject`` → ``PyGILState_Ensure``, the
    GUI thread in ``isServiceRegistered``).
    """
    message = QDBusMessage.createMethodCall(_BUS, _BUS_PATH, _BUS, method)
    message.setArguments(list(arguments))
    reply = bus.call(message)
    if reply.type() != QDBusMessage.MessageType.ReplyMessage or not reply.arguments():
        return None
    return reply.arguments()[0]


_BUS, _BUS_PATH = "org.freedesktop.DBus", "/org/freedesktop/DBus"
