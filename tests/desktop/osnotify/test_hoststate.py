"""Power, network and sleep inhibitors on a private system bus (issue #23, DESIGN §14): fake
UPower and NetworkManager emit their real signals into the host's state, and a fake logind in
its own process hands out inhibitors whose life the test watches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtDBus import QDBusConnection, QDBusVariant
from pytestqt.qtbot import QtBot

from coven_core.clock import VirtualClock
from coven_core.host import HostWatch, Network, Power
from coven_desktop.osnotify.hoststate import (
    NETWORK_MANAGER,
    UPOWER,
    logind_inhibitor,
    network_of,
    watch_host,
)
from tests.core.conftest import make_engine
from tests.desktop.osnotify.conftest import FakeServices
from tests.systembus.fixtures import FakeLogind

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="UPower, NetworkManager and logind are Linux's"
)


# -- UPower and NetworkManager ------------------------------------------------------------------
@pytest.fixture
def services(connect_bus: Callable[[], QDBusConnection]) -> FakeServices:
    return FakeServices(connect_bus(), (UPOWER[0], NETWORK_MANAGER[0]))


def test_upower_and_networkmanager_changes_reach_the_state_and_wake(
    qtbot: QtBot, services: FakeServices, connect_bus: Callable[[], QDBusConnection]
) -> None:
    woken: list[str] = []
    host = HostWatch(on_change=lambda: woken.append("wake"))
    watches = watch_host(host, connect_bus(), None)
    assert len(watches) == 2  # the fakes answer no Get: the state stays unknown until news
    assert host.state().power is Power.UNKNOWN
    services.changed(UPOWER, {"OnBattery": True})
    qtbot.waitUntil(lambda: host.state().power is Power.BATTERY, timeout=5000)
    services.changed(NETWORK_MANAGER, {"Connectivity": QDBusVariant(2)})  # a portal
    services.changed(NETWORK_MANAGER, {"Connectivity": 4})
    qtbot.waitUntil(lambda: host.state().network is Network.ONLINE, timeout=5000)
    state = host.state()
    assert (state.power_source, state.network_source) == ("upower", "networkmanager")
    assert len(woken) >= 2
    for watch in watches:
        watch.stop()


def test_networkmanager_without_a_connectivity_check_is_read_from_its_state() -> None:
    assert network_of({"Connectivity": 0, "State": 70}) is Network.ONLINE
    assert network_of({"Connectivity": 0, "State": 20}) is Network.OFFLINE
    assert network_of({"Connectivity": 3, "State": 70}) is Network.OFFLINE  # limited
    assert network_of({}) is None


def test_without_the_services_nothing_is_watched(
    connect_bus: Callable[[], QDBusConnection],
) -> None:
    host = HostWatch()
    assert watch_host(host, connect_bus(), None) == []
    assert logind_inhibitor(connect_bus()) is None


# -- logind's inhibitors (a fake logind in its own process: tests/systembus) ---------------------
def test_an_inhibitor_is_held_until_its_descriptor_is_closed(
    fake_logind: FakeLogind, connect_bus: Callable[[], QDBusConnection]
) -> None:
    bus = connect_bus()
    inhibit = logind_inhibitor(bus)
    assert inhibit is not None
    fd = inhibit("block", "routine backup is running")
    assert fd is not None and not os.get_inheritable(fd)  # no command inherits it
    assert fake_logind.held() == ["block:routine backup is running"]
    os.close(fd)
    assert fake_logind.held() == []


def test_a_keep_awake_run_holds_logind_until_it_settles(
    fake_logind: FakeLogind, connect_bus: Callable[[], QDBusConnection], tmp_path: Path
) -> None:
    bus = connect_bus()
    engine = make_engine(tmp_path / "data", VirtualClock(datetime(2026, 3, 1, 12, tzinfo=UTC)))
    try:
        from coven_core.scheduling.awake import SleepGuard

        engine.scheduler.host = HostWatch(inhibit=logind_inhibitor(bus))
        engine.scheduler.awake = SleepGuard(engine.scheduler.host.inhibit)
        engine.runtime.auto_exit = None
        engine.add("backup", "0 13 * * *", keep_awake=True)
        engine.scheduler.awake.take_delay()
        engine.run_until(engine.clock.now_utc() + timedelta(hours=1, minutes=1))
        (launch,) = engine.runtime.running.values()
        assert fake_logind.held_modes() == ["block", "delay"]
        engine.runtime.finish(launch)
        engine.run_until(engine.clock.now_utc())
        assert fake_logind.held_modes() == ["delay"]
        engine.scheduler.awake.release_all()
        assert fake_logind.held() == []
    finally:
        engine.store.close()


_HOLDER = textwrap.dedent(
    """
    import sys, time
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtDBus import QDBusConnection
    from coven_desktop.osnotify.hoststate import logind_inhibitor
    app = QCoreApplication([])
    bus = QDBusConnection.connectToBus(sys.argv[1], "holder")
    fd = logind_inhibitor(bus)("block", "held by a process that crashes")
    print("held", fd, flush=True)
    time.sleep(60)  # real-time: the holder lives until the test kills it (the crash)
    """
)


def test_a_crash_of_the_holder_frees_the_machine(fake_logind: FakeLogind) -> None:
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, fake_logind.address],
                              stdout=subprocess.PIPE, text=True, env={**os.environ})  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().startswith("held")
        assert fake_logind.held() == ["block:held by a process that crashes"]
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        assert fake_logind.held() == []
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_another_thread_gets_its_inhibitor_through_the_gui_thread(
    fake_logind: FakeLogind, connect_bus: Callable[[], QDBusConnection], qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The scheduler's thread never calls D-Bus itself (a deadlock with PySide's GIL)."""
    from coven_desktop.osnotify import hoststate

    callers: list[threading.Thread] = []
    call = hoststate._inhibit_now

    def recorded(*args: Any) -> int:
        callers.append(threading.current_thread())
        return call(*args)

    monkeypatch.setattr(hoststate, "_inhibit_now", recorded)
    bus = connect_bus()
    inhibit = logind_inhibitor(bus)
    assert inhibit is not None
    got: dict[str, int | None] = {}
    worker = threading.Thread(target=lambda: got.update(fd=inhibit("block", "from a worker")))
    worker.start()
    qtbot.waitUntil(lambda: "fd" in got, timeout=5000)
    worker.join()
    assert fake_logind.held() == ["block:from a worker"]
    assert callers == [threading.main_thread()]
    fd = got["fd"]
    assert fd is not None
    os.close(fd)


def test_a_request_withdrawn_before_it_was_answered_never_reaches_logind() -> None:
    from coven_desktop.osnotify.hoststate import _await_descriptor, _fulfil

    answer: Future[int] = Future()
    with pytest.raises(OSError, match="no answer"):
        _await_descriptor(answer, 0.01)

    def logind() -> int:
        raise AssertionError("a withdrawn request reached logind")

    _fulfil(answer, logind)


def test_a_descriptor_that_comes_after_its_asker_gave_up_is_closed() -> None:
    from coven_desktop.osnotify.hoststate import _await_descriptor, _fulfil

    answer: Future[int] = Future()
    late, other_end = os.pipe()

    def logind_answers_late() -> int:
        with pytest.raises(OSError, match="no answer"):
            _await_descriptor(answer, 0.01)  # the asker gives up while logind is asked
        return late

    _fulfil(answer, logind_answers_late)
    with pytest.raises(OSError):
        os.fstat(late)  # closed: nobody holds the machine awake for a run that went on
    os.close(other_end)
