"""A good citizen (issue 18): the real daemon logs to its data directory, keeps secrets out of
the log, and a shutdown starts nothing."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from tests.system.conftest import Harness, wait_for

SECRET = "hunter2-do-not-log-me"


def test_the_daemon_logs_to_a_private_file_and_stderr_but_never_a_secret(
    harness: Harness,
) -> None:
    rid = harness.add("secretive", ("sh", "-c", 'test -n "$TOKEN"'), env=(("TOKEN", SECRET),))
    harness.start_daemon(args=("--log-level", "debug"))
    assert wait_for(lambda: harness.disposition(rid))
    (stderr,) = harness.stop_all()
    assert harness.disposition(rid) == "succeeded"  # the command did see its secret
    log = harness.data / "logs" / "coven.log"
    text = log.read_text()
    assert "scheduling the store in" in text and "stopped" in text
    assert "pass startup" in text and "dispatched 1" in text  # debug records are there
    assert "scheduling the store in" in stderr
    assert SECRET not in text and SECRET not in stderr
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700


def test_a_long_data_dir_with_its_temp_name_taken_by_another_user(
    tmp_path: Path, harness: Harness
) -> None:
    """The wake sockets once moved to ``$TMPDIR/coven-wake-<hash>`` for a long path, where
    another user could create the name first and stop the daemon from starting."""
    long = Harness(tmp_path / ("d" * 60) / ("e" * 60), harness.target, harness.offset)
    shared = tmp_path / "tmp"
    shared.mkdir()
    wake_dir = (long.data / "wake").resolve()
    taken = shared / f"coven-wake-{hashlib.sha256(os.fsencode(wake_dir)).hexdigest()[:16]}"
    taken.mkdir(mode=0o777)
    if os.geteuid() == 0:
        os.chown(taken, 12345, 12345)
    daemon = long.start_daemon(env={"TMPDIR": str(shared)})
    try:
        assert wait_for(lambda: list(wake_dir.glob("*.sock")) or daemon.poll() is not None)
        assert daemon.poll() is None, daemon.stderr.read() if daemon.stderr else ""
        assert sorted(shared.iterdir()) == [taken] and list(taken.iterdir()) == []
    finally:
        long.stop_all()
    assert daemon.returncode == 0
    assert list(wake_dir.iterdir()) == []
