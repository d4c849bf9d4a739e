"""logind for ``coven daemon`` (issue #23, DESIGN §14): inhibitors and ``PrepareForSleep``
through jeepney, against a fake logind in its own process on a private system bus; and no bus
or no logind, as in a container or CI."""

from __future__ import annotations

import logging
import os
import sys
import threading

import pytest

from coven_core.clock import WakeReason, WakeSignal
from coven_core.host import PortableHost
from coven_core.system.logind import LogindHost, connect, daemon_host
from tests.system.conftest import wait_for
from tests.systembus.fixtures import LOGIND_PATH, MANAGER, FakeLogind

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="logind is Linux's")

WAIT = 10.0  # real-time: the fake logind is another process


def _next_wake(wake: WakeSignal) -> WakeReason | None:
    with wake.condition:
        wake.condition.wait_for(wake.is_set, WAIT)
    return wake.take()


def test_the_daemon_host_takes_logind_inhibitors_no_command_inherits(
    fake_logind: FakeLogind,
) -> None:
    with daemon_host(WakeSignal()) as host:
        assert isinstance(host, LogindHost)
        fd = host.inhibit("block", "routine backup is running (b@1)")
        assert fd is not None and not os.get_inheritable(fd)
        assert fake_logind.held() == ["block:routine backup is running (b@1)"]
        os.close(fd)
        assert fake_logind.held() == []


def test_prepare_for_sleep_wakes_the_scheduler_as_the_app_does(fake_logind: FakeLogind) -> None:
    wake = WakeSignal()
    with daemon_host(wake):
        fake_logind.prepare_for_sleep(True)
        assert _next_wake(wake) is WakeReason.SYSTEM_SLEEPING
        fake_logind.prepare_for_sleep(False)
        assert _next_wake(wake) is WakeReason.SYSTEM_RESUMED


def test_only_logind_is_heard(fake_logind: FakeLogind) -> None:
    """Another peer's PrepareForSleep, broadcast or sent to us directly, wakes nobody."""
    from jeepney import DBusAddress, HeaderFields, message_bus, new_signal
    from jeepney.io.blocking import Proxy, open_dbus_connection

    heard: list[bool] = []
    logind = connect(heard.append)
    assert logind is not None
    try:
        with open_dbus_connection(fake_logind.address) as impostor:
            bus = Proxy(message_bus, impostor, timeout=5)
            emitter = DBusAddress(LOGIND_PATH, interface=MANAGER)
            impostor.send(new_signal(emitter, "PrepareForSleep", "b", (False,)))
            for name in bus.ListNames()[0]:
                if name.startswith(":") and name != impostor.unique_name:
                    direct = new_signal(emitter, "PrepareForSleep", "b", (False,))
                    direct.header.fields[HeaderFields.destination] = name
                    impostor.send(direct)
            bus.GetId()  # a round trip: the bus has routed all of the above
        fake_logind.prepare_for_sleep(True)
        assert wait_for(lambda: heard, WAIT)
        assert heard == [True]
    finally:
        logind.close()


def test_closing_stops_every_thread_it_started(fake_logind: FakeLogind) -> None:
    before = set(threading.enumerate())
    with daemon_host(WakeSignal()):
        assert any(thread.name == "coven-logind" for thread in threading.enumerate())
    assert set(threading.enumerate()) <= before


def test_without_a_system_bus_the_daemon_host_is_the_portable_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """tests/conftest.py points DBUS_SYSTEM_BUS_ADDRESS at a socket that is not there."""
    caplog.set_level(logging.INFO, "coven_core.system.logind")
    with daemon_host(WakeSignal()) as host:
        assert type(host) is PortableHost
        assert host.inhibit("delay", "recording the runs in flight") is None
    assert "no sleep inhibitors, sleep noticed by drift: no system bus" in caplog.text


def test_without_logind_on_the_bus_the_daemon_host_is_the_portable_one(
    system_bus_address: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "coven_core.system.logind")
    before = set(threading.enumerate())
    with daemon_host(WakeSignal()) as host:
        assert type(host) is PortableHost
    assert "no logind on the system bus" in caplog.text
    assert set(threading.enumerate()) <= before  # the connection it tried is closed
