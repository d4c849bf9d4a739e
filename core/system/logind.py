"""logind on the system bus for a host without Qt (``coven daemon``, DESIGN §14): its sleep
inhibitors, and its word that the machine goes to sleep or has woken.

jeepney speaks D-Bus in pure Python and passes file descriptors (an inhibitor *is* one). One
connection serves both: jeepney's router thread reads it and hands back replies, so the
scheduler's thread may call ``Inhibit`` while a listener thread waits for
``PrepareForSleep(bool)`` and tells ``on_sleep``. :meth:`Logind.close` stops both threads.

Only logind is heard: the bus delivers the signal to us only from the owner of
``org.freedesktop.login1`` (the match rule names it), and the listener checks that owner
again, since a peer may send a signal to us directly. Where there is no system bus (a
container, CI) or no logind on it, :func:`connect` logs why and returns None: the daemon then
runs as before, without inhibitors, and notices a sleep by drift (DESIGN §3).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from coven_core.clock import WakeReason, WakeSignal
from coven_core.host import WHO, Host, PortableHost

log = logging.getLogger(__name__)

SERVICE = "org.freedesktop.login1"
PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"
SIGNAL = "PrepareForSleep"
#: A call must not hang a pass on a stuck bus or logind (the app waits as long).
CALL_TIMEOUT = 2.0
#: How long closing waits for the listener thread, which only waits on its queue.
JOIN_TIMEOUT = 5.0

#: What the daemon's scheduler is woken with, as the app does (``osnotify.event``): a pass
#: records the sleep before the delay inhibitor goes, the first after a resume takes it again.
SLEEP_WAKES = {True: WakeReason.SYSTEM_SLEEPING, False: WakeReason.SYSTEM_RESUMED}

_STOP = None  # what close() puts on the listener's queue


class Unavailable(Exception):
    """Why there is no logind to ask here."""


class Logind:
    """One connection to logind: inhibitors for any thread, sleep announcements to one
    callback on a listener thread."""

    def __init__(self, connection: Any, on_sleep: Callable[[bool], None]) -> None:
        from jeepney.io.threading import DBusRouter

        self._connection = connection
        self._router = DBusRouter(connection)
        self._on_sleep = on_sleep
        self._heard: queue.Queue[Any] = queue.Queue()
        self._owner: str | None = None
        self._listener = threading.Thread(target=self._listen, name="coven-logind", daemon=True)

    def inhibit(self, mode: str, why: str) -> int:
        """A ``block`` or ``delay`` sleep inhibitor: a descriptor the caller owns and closes,
        never inherited by a command Coven starts. OSError when logind will not give one."""
        from jeepney import DBusAddress, new_method_call
        from jeepney.fds import FileDescriptor

        manager = DBusAddress(PATH, bus_name=SERVICE, interface=MANAGER)
        reply = self._call(new_method_call(manager, "Inhibit", "ssss", ("sleep", WHO, why, mode)))
        handle = reply[0] if len(reply) == 1 else None
        if not isinstance(handle, FileDescriptor):
            raise OSError("logind answered Inhibit without a file descriptor")
        fd: int = handle.to_raw_fd()
        os.set_inheritable(fd, False)  # recvmsg leaves it inheritable: no command may hold it
        return fd

    def start(self) -> None:
        """Hear ``PrepareForSleep`` from now on; Unavailable when logind is not on this bus
        or the bus refuses."""
        from jeepney import MatchRule, message_bus

        heard = MatchRule(type="signal", interface=MANAGER, member=SIGNAL, path=PATH)
        from_logind = MatchRule(type="signal", sender=SERVICE, interface=MANAGER, member=SIGNAL,
                                path=PATH)  # fmt: skip
        try:
            if not self._present():
                raise Unavailable("no logind on the system bus")
            self._router.filter(heard, queue=self._heard)  # before the bus sends any
            self._call(message_bus.AddMatch(from_logind))
        except OSError as error:
            raise Unavailable(f"logind cannot be heard ({error})") from None
        self._owner = self._service_owner()
        self._listener.start()

    def close(self) -> None:
        """Stop listening and close the connection (an inhibitor taken stays its holder's)."""
        if self._listener.is_alive():
            self._heard.put(_STOP)
            self._listener.join(JOIN_TIMEOUT)
        self._router.close()
        self._connection.close()

    def _present(self) -> bool:
        """Whether logind runs on this bus, or the bus can start it."""
        from jeepney import message_bus

        if self._call(message_bus.NameHasOwner(SERVICE))[0]:
            return True
        return SERVICE in self._call(message_bus.ListActivatableNames())[0]

    # -- the listener thread ----------------------------------------------------------------
    def _listen(self) -> None:
        while (message := self._heard.get()) is not _STOP:
            going = self._going_to_sleep(message)
            if going is not None:
                log.info("logind: %s", "going to sleep" if going else "resumed")
                self._on_sleep(going)

    def _going_to_sleep(self, message: Any) -> bool | None:
        """The signal's boolean, if it is logind's own ``PrepareForSleep``; else None."""
        from jeepney import HeaderFields

        body = message.body
        if len(body) != 1 or not isinstance(body[0], bool):
            return None
        sender = message.header.fields.get(HeaderFields.sender)
        if sender != self._owner:  # logind restarted, or an impostor: ask the bus who is logind
            self._owner = self._service_owner()
        return bool(body[0]) if sender == self._owner else None

    def _service_owner(self) -> str | None:
        from jeepney import message_bus

        try:
            return str(self._call(message_bus.GetNameOwner(SERVICE))[0])
        except OSError:  # not running (yet): bus-activated by the first Inhibit
            return None

    def _call(self, message: Any) -> tuple[Any, ...]:
        from jeepney import DBusErrorResponse
        from jeepney.io.common import RouterClosed
        from jeepney.wrappers import unwrap_msg

        try:
            reply = self._router.send_and_get_reply(message, timeout=CALL_TIMEOUT)
            return tuple(unwrap_msg(reply))
        except (DBusErrorResponse, RouterClosed) as error:  # TimeoutError is an OSError
            raise OSError(str(error)) from error


def connect(on_sleep: Callable[[bool], None]) -> Logind | None:
    """logind on the system bus (``DBUS_SYSTEM_BUS_ADDRESS``, else the standard socket),
    telling ``on_sleep`` of each ``PrepareForSleep``; None, with the reason logged, where
    there is no system bus or no logind on it."""
    try:
        logind = _connect(on_sleep)
    except Unavailable as why:
        log.info("no sleep inhibitors, sleep noticed by drift: %s", why)
        return None
    log.info("sleep inhibitors from logind; sleep and resume heard from it")
    return logind


def _connect(on_sleep: Callable[[bool], None]) -> Logind:
    if not sys.platform.startswith("linux"):
        raise Unavailable(f"no logind on {sys.platform}")
    try:
        from jeepney.io.threading import open_dbus_connection
    except ImportError as error:
        raise Unavailable(f"no D-Bus client ({error})") from None
    try:
        connection = open_dbus_connection("SYSTEM", enable_fds=True, auth_timeout=CALL_TIMEOUT)
    except (OSError, RuntimeError, ValueError) as error:  # Runtime: no unix: address
        where = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS") or "the standard socket"
        why = str(error) or type(error).__name__
        raise Unavailable(f"no system bus at {where} ({why})") from None
    logind = Logind(connection, on_sleep)
    try:
        logind.start()
    except Unavailable:
        logind.close()
        raise
    return logind


class LogindHost(PortableHost):
    """The daemon's host: the portable reading of power and network, logind's inhibitors."""

    def __init__(self, logind: Logind) -> None:
        super().__init__()
        self._logind = logind

    def inhibit(self, mode: str, why: str) -> int | None:
        return self._logind.inhibit(mode, why)

    def release(self, handle: int) -> None:
        os.close(handle)  # a descriptor: closing it lets logind's inhibitor go


@contextlib.contextmanager
def daemon_host(wake: WakeSignal) -> Iterator[Host]:
    """The host ``coven daemon`` schedules with: logind's where it is (each sleep and resume
    it announces wakes ``wake``), else the portable one. Leaving it stops the listener."""
    logind = connect(lambda going: wake.set(SLEEP_WAKES[going]))
    if logind is None:
        yield PortableHost()
        return
    try:
        yield LogindHost(logind)
    finally:
        logind.close()
