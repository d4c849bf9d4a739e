"""A good citizen (issue 18): the real daemon logs to its data directory, keeps secrets out of
the log, and a shutdown starts nothing."""

from __future__ import annotations

import stat

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
