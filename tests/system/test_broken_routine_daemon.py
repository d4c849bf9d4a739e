"""A real ``coven daemon`` with one broken routine among others (issue #18, DESIGN §6): the
broken one is named and stopped, the daemon stays up, and the others run as planned."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.system.conftest import Harness, wait_for


def test_the_daemon_runs_the_others_and_names_the_broken_one(
    harness: Harness, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    bad = harness.add("bad", ("/bin/true",))
    good = harness.add("good", ("sh", "-c", f"echo ran > {marker}"))
    harness.query("UPDATE revisions SET timezone = 'Mars/Olympus' WHERE routine_id = ?", (bad,))
    daemon = harness.start_daemon()
    if not wait_for(lambda: harness.disposition(good) == "succeeded"):
        daemon.send_signal(signal.SIGTERM)  # what it said is the evidence: it failed once in CI
        _, said = daemon.communicate(timeout=30)
        pytest.fail(f"good never ran; the daemon said:\n{said.decode(errors='replace')[-6000:]}")
    assert marker.read_text() == "ran\n"
    assert daemon.poll() is None, "the daemon stopped"
    daemon.send_signal(signal.SIGTERM)
    _, stderr = daemon.communicate(timeout=30)
    assert daemon.returncode == 0
    assert "routine 'bad' is broken" in stderr.decode()
    assert harness.disposition(bad) is None  # nothing was decided for it: it is not lost,
    events = harness.query("SELECT count(*) FROM events WHERE kind = 'routine_broken'")
    assert events == [(1,)]  # it waits, named, for an edit or a delete
