"""Small D-Bus helpers shared by the logind and timedated watches."""

from __future__ import annotations

from PySide6.QtDBus import QDBusConnection


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
