"""The machine's power and network state for routine conditions, and logind's sleep
inhibitors for keeping it awake (DESIGN §14), on the system bus.

* UPower: ``OnBattery`` on ``org.freedesktop.UPower``;
* NetworkManager: ``Connectivity`` (4 is full) and, when it does not check, ``State``
  (70 is connected globally) on ``org.freedesktop.NetworkManager``.

Each is read once at the start and then followed from ``PropertiesChanged`` (a typed slot
with the exact ``sa{sv}as`` signature, as ``timedated`` explains), so a change wakes the
scheduler through the :class:`~coven_core.host.HostWatch` and nothing polls. What no service
reports is left to the watch's portable reading. Only the owner of a service's name is
listened to.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import SLOT, QObject, Qt, QThread, Signal, Slot
from PySide6.QtDBus import (
    QDBus,
    QDBusConnection,
    QDBusMessage,
    QDBusUnixFileDescriptor,
)

from coven_core.host import WHO, HostWatch, Network, Power
from coven_desktop.osnotify.bus import PROPERTIES, SIGNATURE, service_available, unwrapped

log = logging.getLogger(__name__)

_SLOT: Any = SLOT("on_properties_changed(QString,QVariantMap,QStringList)")
#: A read at the start, or an inhibitor, must not hang the app on a stuck service.
CALL_TIMEOUT_MS = 2000
#: How long another thread waits for the GUI thread to take an inhibitor for it: the
#: call's own bound, and a second for a GUI thread that is busy painting.
ASK_TIMEOUT_S = CALL_TIMEOUT_MS / 1000 + 1

UPOWER = ("org.freedesktop.UPower", "/org/freedesktop/UPower", "org.freedesktop.UPower")
NETWORK_MANAGER = (
    "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager",
    "org.freedesktop.NetworkManager",
)  # fmt: skip
LOGIND = ("org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager")

_FULL_CONNECTIVITY, _NO_CHECK = 4, 0
_CONNECTED_GLOBAL = 70


def power_of(values: dict[str, Any]) -> Power | None:
    on_battery = values.get("OnBattery")
    return None if not isinstance(on_battery, bool) else (Power.BATTERY if on_battery else Power.AC)


def network_of(values: dict[str, Any]) -> Network | None:
    """Full connectivity is online; none, a portal or limited is offline; when
    NetworkManager does not check (0), its state says (connected globally or not)."""
    connectivity, state = values.get("Connectivity"), values.get("State")
    if isinstance(connectivity, int) and connectivity != _NO_CHECK:
        return Network.ONLINE if connectivity == _FULL_CONNECTIVITY else Network.OFFLINE
    if isinstance(state, int) and state != 0:
        return Network.ONLINE if state == _CONNECTED_GLOBAL else Network.OFFLINE
    return None


class PropertyWatch(QObject):
    """Some properties of one object of a system service, read once and then followed."""

    def __init__(
        self, bus: QDBusConnection, target: tuple[str, str, str], names: tuple[str, ...],
        deliver: Callable[[dict[str, Any]], None], parent: QObject | None = None,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        self._bus, self._target, self._names, self._deliver = bus, target, names, deliver
        self.values: dict[str, Any] = {}

    def start(self) -> bool:
        service, path, _interface = self._target
        if not self._bus.connect(service, path, PROPERTIES, "PropertiesChanged", SIGNATURE,
                                 self, _SLOT):  # fmt: skip
            return False
        for name in self._names:
            value = self._get(name)
            if value is not None:
                self.values[name] = value
        self._deliver(dict(self.values))
        return True

    def stop(self) -> None:
        service, path, _interface = self._target
        self._bus.disconnect(service, path, PROPERTIES, "PropertiesChanged", SIGNATURE, self,
                             _SLOT)  # fmt: skip

    def _get(self, name: str) -> object:
        service, path, interface = self._target
        message = QDBusMessage.createMethodCall(service, path, PROPERTIES, "Get")
        message.setArguments([interface, name])
        reply = self._bus.call(message, QDBus.CallMode.Block, CALL_TIMEOUT_MS)
        if reply.type() != QDBusMessage.MessageType.ReplyMessage:
            return None  # not there, or not answering: what it says later is news
        arguments = reply.arguments()
        return unwrapped(arguments[0]) if len(arguments) == 1 else None

    @Slot(str, "QVariantMap", "QStringList")
    def on_properties_changed(
        self, interface: str, changed: dict[str, Any], invalidated: list[str]
    ) -> None:
        if interface != self._target[2]:
            return
        news = {name: unwrapped(value) for name, value in changed.items() if name in self._names}
        for name in invalidated:
            if name in self._names:
                news[name] = self._get(name)
        if news:
            self.values.update(news)
            self._deliver(dict(self.values))


def watch_host(
    host: HostWatch, bus: QDBusConnection, parent: QObject | None
) -> list[PropertyWatch]:
    """Follow UPower and NetworkManager into ``host`` where they run; start nothing else."""
    if not bus.isConnected():
        return []

    def power(values: dict[str, Any]) -> None:
        found = power_of(values)
        if found is not None:
            host.set(power=found, power_source="upower")

    def network(values: dict[str, Any]) -> None:
        found = network_of(values)
        if found is not None:
            host.set(network=found, network_source="networkmanager")

    wanted = ((UPOWER, ("OnBattery",), power),
              (NETWORK_MANAGER, ("Connectivity", "State"), network))  # fmt: skip
    watches = []
    for target, names, deliver in wanted:
        if service_available(bus, target[0]):
            watch = PropertyWatch(bus, target, names, deliver, parent)
            if watch.start():
                watches.append(watch)
    return watches


def logind_inhibitor(bus: QDBusConnection) -> Callable[[str, str], int | None] | None:
    """``inhibit(mode, why)`` through logind, callable from any thread; None without logind.

    The descriptor is a duplicate the caller owns (Qt closes its own); Python makes it
    non-inheritable, so no command Coven starts ever holds the machine awake."""
    if not bus.isConnected() or not service_available(bus, LOGIND[0]):
        return None
    return MainThreadInhibitor(bus)


def _inhibit_now(bus: QDBusConnection, mode: str, why: str) -> int:
    message = QDBusMessage.createMethodCall(*LOGIND, "Inhibit")
    message.setArguments(["sleep", WHO, why, mode])
    reply = bus.call(message, QDBus.CallMode.Block, CALL_TIMEOUT_MS)
    if reply.type() != QDBusMessage.MessageType.ReplyMessage:
        raise OSError(f"logind refused a {mode} inhibitor: {reply.errorMessage()}")
    arguments = reply.arguments()
    handle = arguments[0] if len(arguments) == 1 else None
    if not isinstance(handle, QDBusUnixFileDescriptor) or not handle.isValid():
        raise OSError("logind answered Inhibit without a file descriptor")
    return os.dup(handle.fileDescriptor())


def _await_descriptor(answer: Future[int], seconds: float) -> int:
    """The descriptor the GUI thread took for us, within ``seconds``. An asker that stops
    waiting withdraws its request, or, if logind is being asked already, leaves word to
    close what comes: nobody holds the machine awake for a run that went on without it."""
    try:
        return answer.result(timeout=seconds)
    except TimeoutError:
        if not answer.cancel():
            answer.add_done_callback(_close_late)
        raise OSError(f"no answer from the app within {seconds:g} s") from None


def _close_late(answer: Future[int]) -> None:
    if not answer.cancelled() and answer.exception() is None:
        os.close(answer.result())


def _fulfil(answer: Future[int], take: Callable[[], int]) -> None:
    """Answer a request unless its asker withdrew it first."""
    if not answer.set_running_or_notify_cancel():
        return
    try:
        answer.set_result(take())
    except OSError as error:
        answer.set_exception(error)


class MainThreadInhibitor(QObject):
    """Takes logind inhibitors for any thread, always calling D-Bus on its own thread.

    Why not call from the scheduler's thread: PySide holds the GIL inside a blocking
    ``QDBusConnection.call``. When the GUI thread subscribed to a signal at that moment,
    Qt's bus thread held its connection lock and waited for the GIL, the caller held the
    GIL and waited for that lock, and the app hung at start (seen under gdb, one start in
    three in ``test_desktop_wiring``). On one thread, no such cycle can form."""

    _asked = Signal(object, str, str)

    def __init__(self, bus: QDBusConnection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bus = bus
        self._asked.connect(self._answer, Qt.ConnectionType.QueuedConnection)

    def __call__(self, mode: str, why: str) -> int | None:
        if QThread.currentThread() == self.thread():
            return _inhibit_now(self._bus, mode, why)
        answer: Future[int] = Future()
        self._asked.emit(answer, mode, why)
        return _await_descriptor(answer, ASK_TIMEOUT_S)

    @Slot(object, str, str)
    def _answer(self, answer: Future[int], mode: str, why: str) -> None:
        _fulfil(answer, lambda: _inhibit_now(self._bus, mode, why))
