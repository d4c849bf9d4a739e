"""Linux wall-clock steps: a timerfd that is cancelled whenever the clock is set.

A timer on ``CLOCK_REALTIME`` armed with ``TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`` at the
far future never expires; when anyone sets the wall clock (``date -s``, an NTP step, a resume
from sleep) its descriptor becomes readable and ``read`` fails with ``ECANCELED``. A
``QSocketNotifier`` watches it, so it costs no wakeup at all until that happens. The timer must
then be armed again. It cannot be set off in a test without changing the system clock, so the
timer is injected (:class:`ClockSetTimer`) and the read and the arming are injectable too.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import logging
import os
import sys
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject, QSocketNotifier

from coven_desktop.osnotify.notifier import Notifier

log = logging.getLogger(__name__)

CLOCK_REALTIME = 0
TFD_CLOEXEC = 0o2000000
TFD_NONBLOCK = 0o4000
TFD_TIMER_ABSTIME = 1
TFD_TIMER_CANCEL_ON_SET = 2
#: The largest time_t: the kernel saturates it, so the timer never expires.
FAR_FUTURE = 2 ** (8 * ctypes.sizeof(ctypes.c_long) - 1) - 1


class _Timespec(ctypes.Structure):
    _fields_ = (("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long))


class _Itimerspec(ctypes.Structure):
    _fields_ = (("it_interval", _Timespec), ("it_value", _Timespec))


class ClockSetTimer(Protocol):
    """A readable descriptor that says "the wall clock was set"."""

    def fileno(self) -> int: ...

    def was_set(self) -> bool:
        """Consume the readiness; True when the wall clock was set."""
        ...

    def arm(self) -> None: ...

    def close(self) -> None: ...


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.timerfd_create.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.timerfd_settime.argtypes = (
        ctypes.c_int,
        ctypes.c_int,
        ctypes.POINTER(_Itimerspec),
        ctypes.POINTER(_Itimerspec),
    )
    return libc


def _failed(call: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{call}: {os.strerror(code)}")


def create_timerfd() -> int:
    fd: int = _libc().timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK)
    if fd < 0:
        raise _failed("timerfd_create")
    return fd


def arm_cancel_on_set(fd: int) -> None:
    spec = _Itimerspec()
    spec.it_value.tv_sec = FAR_FUTURE
    flags = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET
    if _libc().timerfd_settime(fd, flags, ctypes.byref(spec), None) != 0:
        raise _failed("timerfd_settime")


class CancelOnSetTimer:
    """The real timer (or, in tests, any descriptor with an injected ``read`` and ``arm``)."""

    def __init__(
        self,
        fd: int,
        *,
        arm: Callable[[int], None] = arm_cancel_on_set,
        read: Callable[[int, int], bytes] = os.read,
    ) -> None:
        self._fd = fd
        self._arm = arm
        self._read = read

    @classmethod
    def open(cls) -> CancelOnSetTimer:
        timer = cls(create_timerfd())
        try:
            timer.arm()
        except OSError:
            timer.close()
            raise
        return timer

    def fileno(self) -> int:
        return self._fd

    def arm(self) -> None:
        self._arm(self._fd)

    def was_set(self) -> bool:
        try:
            self._read(self._fd, 8)
        except BlockingIOError:
            return False
        except OSError as error:
            if error.errno == errno.ECANCELED:
                return True
            raise
        return False  # it expired: impossible at the far future, and harmless

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def open_clock_set_timer() -> ClockSetTimer | None:
    """The real timer on Linux; None elsewhere or when the kernel refuses it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return CancelOnSetTimer.open()
    except (OSError, AttributeError) as error:  # AttributeError: a libc without timerfd
        log.info("no timerfd for wall-clock steps: %s", error)
        return None


class ClockSetWatch(QObject):
    name = "timerfd"
    kinds = frozenset({"clock_changed"})

    def __init__(self, notifier: Notifier, timer: ClockSetTimer) -> None:
        super().__init__(notifier)
        self._notifier = notifier
        self._timer = timer
        self._socket = QSocketNotifier(timer.fileno(), QSocketNotifier.Type.Read, self)
        self._socket.activated.connect(self._on_readable)

    def _on_readable(self) -> None:
        try:
            was_set = self._timer.was_set()
            if was_set:
                self._timer.arm()  # before reporting, so a second step is not missed
        except OSError as error:
            log.warning("the wall-clock timer failed and is stopped: %s", error)
            self.stop()
            return
        if was_set:
            self._notifier.report_clock_set(self.name)

    def stop(self) -> None:
        self._socket.setEnabled(False)  # before the descriptor closes under it
        self._timer.close()
