"""Sleep inhibitors where there is no logind: an IOKit power assertion on macOS, a power
request on Windows (DESIGN §14), through ctypes, so that neither costs a dependency.

Both are held by a handle the process owns, and both die with the process (the kernel drops
a dead process's assertions and closes its handles), so a crash can never leave the machine
awake — the promise logind's descriptors keep on Linux. Each keeps the system from sleeping
when idle, as ``caffeinate -i`` and a backup's "keep awake" do; neither can delay a suspend a
person asks for, so a ``delay`` inhibitor is None here and such a sleep is noticed by drift
(DESIGN §3), as on any host without inhibitors.

The libraries are passed in, so tests drive both with fakes on any system.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Protocol


class PowerRequests(Protocol):
    def inhibit(self, mode: str, why: str) -> int | None:
        """A handle holding a ``block`` sleep inhibitor; None for ``delay`` (see above)."""
        ...

    def release(self, handle: int) -> None: ...


#: What keeps a Mac from idle sleep (``kIOPMAssertionTypePreventUserIdleSystemSleep``).
MAC_ASSERTION = b"PreventUserIdleSystemSleep"
_MAC_LEVEL_ON = 255  # kIOPMAssertionLevelOn
_CF_UTF8 = 0x08000100  # kCFStringEncodingUTF8


class MacAssertions:
    """``IOPMAssertionCreateWithName``, released with ``IOPMAssertionRelease``."""

    def __init__(self, iokit: Any, corefoundation: Any) -> None:
        self._iokit, self._cf = iokit, corefoundation

    def inhibit(self, mode: str, why: str) -> int | None:
        if mode != "block":
            return None
        kind, name = self._string(MAC_ASSERTION), self._string(why.encode("utf-8"))
        try:
            handle = ctypes.c_uint32(0)
            code = self._iokit.IOPMAssertionCreateWithName(
                kind, _MAC_LEVEL_ON, name, ctypes.byref(handle)
            )
        finally:
            self._cf.CFRelease(kind)
            self._cf.CFRelease(name)
        if code != 0:
            raise OSError(f"IOKit refused a power assertion (IOReturn {code:#x})")
        return handle.value

    def release(self, handle: int) -> None:
        code = self._iokit.IOPMAssertionRelease(handle)
        if code != 0:
            raise OSError(f"IOKit could not release power assertion {handle} ({code:#x})")

    def _string(self, text: bytes) -> Any:
        made = self._cf.CFStringCreateWithCString(None, text, _CF_UTF8)
        if not made:
            raise OSError("CoreFoundation could not make a string")
        return made


_POWER_REQUEST_SYSTEM_REQUIRED = 1  # PowerRequestSystemRequired
_REASON_CONTEXT_VERSION, _REASON_SIMPLE_STRING = 0, 0x1
_INVALID_HANDLE = ctypes.c_void_p(-1).value


class _ReasonContext(ctypes.Structure):
    """``REASON_CONTEXT`` with a simple string: what ``powercfg /requests`` shows."""

    _fields_ = [
        ("Version", ctypes.c_ulong),
        ("Flags", ctypes.c_ulong),
        ("SimpleReasonString", ctypes.c_wchar_p),
    ]


class WindowsRequests:
    """``PowerCreateRequest`` + ``PowerSetRequest(PowerRequestSystemRequired)``; released by
    clearing and closing the handle. Not ``SetThreadExecutionState``, which belongs to the
    thread that calls it: a run's inhibitor is taken and let go by different passes."""

    def __init__(self, kernel32: Any) -> None:
        self._kernel32 = kernel32

    def inhibit(self, mode: str, why: str) -> int | None:
        if mode != "block":
            return None
        reason = _ReasonContext(_REASON_CONTEXT_VERSION, _REASON_SIMPLE_STRING, why)
        handle = self._kernel32.PowerCreateRequest(ctypes.byref(reason))
        if not handle or handle == _INVALID_HANDLE:
            raise OSError(f"Windows refused a power request ({_last_error()})")
        if not self._kernel32.PowerSetRequest(handle, _POWER_REQUEST_SYSTEM_REQUIRED):
            error = _last_error()
            self._kernel32.CloseHandle(handle)
            raise OSError(f"Windows refused to set a power request ({error})")
        return int(handle)

    def release(self, handle: int) -> None:
        cleared = self._kernel32.PowerClearRequest(handle, _POWER_REQUEST_SYSTEM_REQUIRED)
        closed = self._kernel32.CloseHandle(handle)
        if not (cleared and closed):
            raise OSError(f"Windows could not release power request {handle} ({_last_error()})")


def _last_error() -> str:
    getter = getattr(ctypes, "get_last_error", None)
    return f"error {getter()}" if getter is not None else "no error code"


def for_this_platform() -> PowerRequests | None:
    """The system's own sleep inhibitors off Linux; None on Linux (logind's, over D-Bus) and
    where the libraries cannot be loaded."""
    try:
        if sys.platform == "darwin":
            return _mac()
        if sys.platform == "win32":
            return _windows()
    except (OSError, AttributeError):
        return None
    return None


def _mac() -> MacAssertions:
    frameworks = "/System/Library/Frameworks"
    iokit = ctypes.cdll.LoadLibrary(f"{frameworks}/IOKit.framework/IOKit")
    cf = ctypes.cdll.LoadLibrary(f"{frameworks}/CoreFoundation.framework/CoreFoundation")
    cf.CFStringCreateWithCString.restype = ctypes.c_void_p
    cf.CFStringCreateWithCString.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32]
    cf.CFRelease.argtypes = [ctypes.c_void_p]
    iokit.IOPMAssertionCreateWithName.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32),
    ]  # fmt: skip
    iokit.IOPMAssertionCreateWithName.restype = ctypes.c_int32
    iokit.IOPMAssertionRelease.argtypes = [ctypes.c_uint32]
    iokit.IOPMAssertionRelease.restype = ctypes.c_int32
    return MacAssertions(iokit, cf)


def _windows() -> WindowsRequests:
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.PowerCreateRequest.restype = ctypes.c_void_p
    kernel32.PowerCreateRequest.argtypes = [ctypes.POINTER(_ReasonContext)]
    kernel32.PowerSetRequest.argtypes = [ctypes.c_void_p, ctypes.c_int]
    kernel32.PowerClearRequest.argtypes = [ctypes.c_void_p, ctypes.c_int]
    kernel32.CloseHandle.argtypes = [ctypes.c_void_p]
    return WindowsRequests(kernel32)
