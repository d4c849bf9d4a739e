"""Sleep inhibitors off Linux (issue #23, DESIGN §14): an IOKit assertion on macOS, a power
request on Windows. Neither system is here, so their libraries are fakes that keep what the
real ones would: which assertions and requests are held, with what reason."""

from __future__ import annotations

import ctypes
import itertools
from typing import Any

import pytest

from coven_core import keepawake
from coven_core.keepawake import MAC_ASSERTION, MacAssertions, WindowsRequests


class FakeCoreFoundation:
    def __init__(self) -> None:
        self.strings: dict[int, bytes] = {}
        self._ids = itertools.count(1000)

    def CFStringCreateWithCString(self, allocator: None, text: bytes, encoding: int) -> int:
        made = next(self._ids)
        self.strings[made] = text
        return made

    def CFRelease(self, made: int) -> None:
        del self.strings[made]


class FakeIOKit:
    def __init__(self, cf: FakeCoreFoundation, refuse: int = 0) -> None:
        self.cf, self.refuse = cf, refuse
        self.held: dict[int, tuple[bytes, int, bytes]] = {}
        self._ids = itertools.count(7)

    def IOPMAssertionCreateWithName(self, kind: int, level: int, name: int, out: Any) -> int:
        if self.refuse:
            return self.refuse
        assertion = next(self._ids)
        self.held[assertion] = (self.cf.strings[kind], level, self.cf.strings[name])
        out._obj.value = assertion  # what the pointer points at
        return 0

    def IOPMAssertionRelease(self, assertion: int) -> int:
        return 0 if self.held.pop(assertion, None) else 0xE00002C2  # kIOReturnBadArgument


def test_a_mac_keeps_awake_with_a_named_assertion_until_it_is_released() -> None:
    cf = FakeCoreFoundation()
    iokit = FakeIOKit(cf)
    mac = MacAssertions(iokit, cf)
    handle = mac.inhibit("block", "routine backup is running (o1)")
    assert handle is not None
    assert iokit.held == {handle: (MAC_ASSERTION, 255, b"routine backup is running (o1)")}
    assert cf.strings == {}  # the strings were let go once the assertion held its own
    mac.release(handle)
    assert iokit.held == {}
    with pytest.raises(OSError, match="could not release"):
        mac.release(handle)


def test_a_mac_cannot_delay_a_sleep_and_says_so_by_holding_nothing() -> None:
    cf = FakeCoreFoundation()
    iokit = FakeIOKit(cf)
    assert MacAssertions(iokit, cf).inhibit("delay", "recording") is None
    assert iokit.held == {}


def test_a_refused_assertion_is_an_error_naming_iokit_s_code() -> None:
    cf = FakeCoreFoundation()
    with pytest.raises(OSError, match="IOReturn 0xe00002c1"):
        MacAssertions(FakeIOKit(cf, refuse=0xE00002C1), cf).inhibit("block", "why")
    assert cf.strings == {}


class FakeKernel32:
    def __init__(self, refuse_set: bool = False) -> None:
        self.refuse_set = refuse_set
        self.requests: dict[int, str] = {}  # handle → reason
        self.set: set[int] = set()
        self._handles = itertools.count(0x40)

    def PowerCreateRequest(self, reason: Any) -> int:
        context = reason._obj
        assert (context.Version, context.Flags) == (0, 1)  # a simple reason string
        handle = next(self._handles)
        self.requests[handle] = context.SimpleReasonString
        return handle

    def PowerSetRequest(self, handle: int, kind: int) -> bool:
        if self.refuse_set:
            return False
        assert kind == 1  # PowerRequestSystemRequired
        self.set.add(handle)
        return True

    def PowerClearRequest(self, handle: int, kind: int) -> bool:
        if handle not in self.set:
            return False
        self.set.discard(handle)
        return True

    def CloseHandle(self, handle: int) -> bool:
        return self.requests.pop(handle, None) is not None


def test_windows_keeps_awake_with_a_power_request_until_it_is_cleared_and_closed() -> None:
    kernel32 = FakeKernel32()
    windows = WindowsRequests(kernel32)
    handle = windows.inhibit("block", "routine backup is running (o1)")
    assert handle is not None and handle in kernel32.set
    assert kernel32.requests == {handle: "routine backup is running (o1)"}
    assert windows.inhibit("delay", "recording") is None
    windows.release(handle)
    assert kernel32.requests == {} and kernel32.set == set()


def test_a_request_windows_will_not_set_is_closed_and_an_error() -> None:
    kernel32 = FakeKernel32(refuse_set=True)
    with pytest.raises(OSError, match="refused to set"):
        WindowsRequests(kernel32).inhibit("block", "why")
    assert kernel32.requests == {}  # nothing left open


@pytest.mark.parametrize("platform", ["linux", "freebsd13"])
def test_other_systems_have_no_power_requests_here(
    monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    monkeypatch.setattr(keepawake.sys, "platform", platform)
    assert keepawake.for_this_platform() is None


def test_a_system_whose_library_does_not_load_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(path: str) -> ctypes.CDLL:
        raise OSError(f"{path}: no such file")

    monkeypatch.setattr(keepawake.sys, "platform", "darwin")
    monkeypatch.setattr(keepawake.ctypes.cdll, "LoadLibrary", missing)
    assert keepawake.for_this_platform() is None
