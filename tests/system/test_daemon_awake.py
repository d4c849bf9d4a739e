"""A real ``coven daemon`` keeps the machine awake through logind (issue #23, DESIGN §14): a
fake logind in its own process on a private system bus hands out the inhibitors and announces
the sleep; the test asks it which inhibitors are still held. Without a bus the daemon runs as
before and says why it holds none."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from tests.system.conftest import Harness, wait_for
from tests.systembus.fixtures import FakeLogind

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="logind is Linux's")


def _until_released(release: Path) -> tuple[str, ...]:
    """A command that runs until the test creates ``release``."""
    return ("sh", "-c", f"until [ -e '{release}' ]; do sleep 0.05; done")


def _occurrence(harness: Harness, routine: str) -> tuple[str, str]:
    rows = harness.query("SELECT id, state FROM occurrences WHERE routine_id = ?", (routine,))
    return rows[0] if rows else ("", "")


def test_a_keep_awake_run_holds_a_block_inhibitor_until_it_settles(
    harness: Harness, fake_logind: FakeLogind, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    routine = harness.add("backup", _until_released(release), keep_awake=True)
    daemon = harness.start_daemon()
    assert wait_for(lambda: "delay" in fake_logind.held_modes()), "no delay inhibitor at start"
    assert wait_for(lambda: _occurrence(harness, routine)[1] == "running"), "it never ran"
    occurrence = _occurrence(harness, routine)[0]
    assert sorted(fake_logind.held()) == [
        f"block:routine backup is running ({occurrence})",
        "delay:recording the runs in flight before the machine sleeps",
    ]
    release.touch()
    assert wait_for(lambda: harness.disposition(routine) == "succeeded")
    assert wait_for(lambda: fake_logind.held_modes() == ["delay"]), fake_logind.held()
    (stderr,) = harness.stop_all()
    assert daemon.returncode == 0, stderr
    assert fake_logind.held() == []
    assert "sleep inhibitors from logind" in stderr


def test_a_sleep_is_recorded_before_the_delay_goes_and_the_delay_is_held_again_on_resume(
    harness: Harness, fake_logind: FakeLogind, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    routine = harness.add("sync", _until_released(release))
    daemon = harness.start_daemon()
    assert wait_for(lambda: _occurrence(harness, routine)[1] == "running"), "it never ran"
    assert fake_logind.held_modes() == ["delay"]
    fake_logind.prepare_for_sleep(True)
    assert wait_for(lambda: fake_logind.held() == []), "the delay inhibitor was kept"
    # Let go only once the pass committed: the sleep, with the run in flight, is on record.
    (data,) = harness.query("SELECT data FROM events WHERE kind = 'sleeping'")
    assert json.loads(data[0])["in_flight"] == [_occurrence(harness, routine)[0]]
    fake_logind.prepare_for_sleep(False)
    assert wait_for(lambda: fake_logind.held_modes() == ["delay"]), "not taken again"
    # by the pass the resume woke, whose record is committed as it ends (after the delay)
    resumed = "SELECT count(*) FROM passes WHERE wake_reason = 'system_resumed'"
    assert wait_for(lambda: harness.query(resumed) == [(1,)]), "no pass woken by the resume"
    release.touch()
    assert wait_for(lambda: harness.disposition(routine) == "succeeded")
    daemon.send_signal(signal.SIGINT)  # Ctrl-C: the listener thread stops, the daemon drains
    _, stderr = daemon.communicate(timeout=30)
    assert daemon.returncode == 0, stderr.decode()
    assert fake_logind.held() == []


def test_without_a_system_bus_the_daemon_runs_as_before_and_says_why(
    harness: Harness, tmp_path: Path
) -> None:
    routine = harness.add("backup", ("true",), keep_awake=True)
    nowhere = {"DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={tmp_path / 'no-bus'}"}
    daemon = harness.start_daemon(env=nowhere)
    assert wait_for(lambda: harness.disposition(routine) == "succeeded")
    (stderr,) = harness.stop_all()
    assert daemon.returncode == 0, stderr
    assert "no sleep inhibitors, sleep noticed by drift: no system bus" in stderr
