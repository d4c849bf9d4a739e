"""Fixtures for the OS-notification tests: a virtual clock, a host zone the test moves, and
QtDBus connections to the private "system" bus (tests/systembus) with fake logind and
timedated on it."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMetaType
from PySide6.QtDBus import QDBusArgument, QDBusConnection, QDBusMessage, QDBusVariant

from coven_core.clock import VirtualClock
from coven_desktop.osnotify import Notifier, start_notifiers
from coven_desktop.osnotify.bus import ask_bus
from tests.systembus.fixtures import LOGIND, LOGIND_PATH

TIMEDATED = "org.freedesktop.timedate1"
TIMEDATE_PATH = "/org/freedesktop/timedate1"

_names = itertools.count()


class HostZone:
    """The host's zone as the test sets it; calling it is the injected ``local_zone``."""

    def __init__(self, key: str | None) -> None:
        self.key = key

    def __call__(self) -> str | None:
        return self.key


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))


@pytest.fixture
def host_zone() -> HostZone:
    return HostZone("Europe/Berlin")


@pytest.fixture
def start(qapp: Any, clock: VirtualClock, host_zone: HostZone) -> Iterator[Callable[..., Notifier]]:
    """``start_notifiers`` with the virtual clock and test zone; every notifier is stopped after."""
    started: list[Notifier] = []

    def _start(**options: Any) -> Notifier:
        defaults: dict[str, Any] = {
            "now": clock.now_utc,
            "monotonic": clock.monotonic,
            "boot_time": clock.boot_time,
            "local_zone": host_zone,
            "open_timer": lambda: None,
        }
        notifier = start_notifiers(None, **(defaults | options))
        started.append(notifier)
        return notifier

    yield _start
    for notifier in started:
        notifier.stop()


# -- the private system bus (tests/systembus) ------------------------------------------------
@pytest.fixture
def connect_bus(qapp: Any, system_bus_address: str) -> Iterator[Callable[[], QDBusConnection]]:
    """Opens connections to the private bus (systemBus() is cached per process: not usable)."""
    names: list[str] = []

    def _connect() -> QDBusConnection:
        names.append(f"coven-test-{next(_names)}")
        connection = QDBusConnection.connectToBus(system_bus_address, names[-1])
        assert connection.isConnected(), connection.lastError().message()
        return connection

    yield _connect
    for name in names:
        QDBusConnection.disconnectFromBus(name)


class FakeSystem:
    """A peer on the private bus playing logind and/or timedated: it owns their names and
    emits their signals, in order, from one connection."""

    def __init__(self, connection: QDBusConnection, services: tuple[str, ...]) -> None:
        self.connection = connection
        for service in services:
            assert connection.registerService(service), service

    def emit(self, path: str, interface: str, name: str, arguments: list[Any]) -> None:
        message = QDBusMessage.createSignal(path, interface, name)
        message.setArguments(arguments)
        assert self.connection.send(message)

    def prepare_for_sleep(self, going: Any) -> None:
        self.emit(LOGIND_PATH, "org.freedesktop.login1.Manager", "PrepareForSleep", [going])

    def properties_changed(self, changed: dict[str, Any], invalidated: list[str]) -> None:
        arguments = ["org.freedesktop.timedate1", changed, _string_array(invalidated)]
        self.emit(TIMEDATE_PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged", arguments)

    def timezone_set(self, zone: str) -> None:
        """What systemd-timedated sends after SetTimezone."""
        self.properties_changed({"Timezone": QDBusVariant(zone)}, [])

    def flush(self) -> None:
        """Return once the bus has routed every signal sent so far (one blocking round trip)."""
        assert ask_bus(self.connection, "NameHasOwner", LOGIND) is not None  # see ask_bus


class FakeServices(FakeSystem):
    """UPower or NetworkManager: their properties change (issue #23)."""

    def changed(self, target: tuple[str, str, str], values: dict[str, Any]) -> None:
        _service, path, interface = target
        changed = {name: QDBusVariant(value) for name, value in values.items()}
        self.emit(path, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                  [interface, changed, ["x"]])  # fmt: skip


def _string_array(items: list[str]) -> Any:
    """An ``as`` even when empty (an empty Python list would go out as ``av``)."""
    if items:
        return items
    argument = QDBusArgument()
    argument.beginArray(QMetaType.Type.QString)
    argument.endArray()
    return argument


@pytest.fixture
def fake_system(connect_bus: Callable[[], QDBusConnection]) -> FakeSystem:
    """Both logind and timedated."""
    return FakeSystem(connect_bus(), (LOGIND, TIMEDATED))


@pytest.fixture
def no_bus(qapp: Any, tmp_path: Path) -> Iterator[QDBusConnection]:
    """A system bus that is not there (as on these machines), whatever the host has."""
    connection = QDBusConnection.connectToBus(f"unix:path={tmp_path / 'absent'}", "coven-no-bus")
    assert not connection.isConnected()
    yield connection
    QDBusConnection.disconnectFromBus("coven-no-bus")
