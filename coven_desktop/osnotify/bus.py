"""Small D-Bus helpers shared by the logind, timedated, UPower and NetworkManager watches."""

from __future__ import annotations

from PySide6.QtDBus import QDBusConnection, QDBusVariant

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
    interface = bus.interface()
    registered = interface.isServiceRegistered(service)
    if registered.isValid() and registered.value():
        return True
    activatable = interface.activatableServiceNames()
    return activatable.isValid() and service in (activatable.value() or [])
