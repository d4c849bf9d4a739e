"""The end of a process the app did not start, told without polling where pidfds exist."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest
import qasync
from pytestqt.qtbot import QtBot

from coven_desktop.osnotify import process_end
from coven_desktop.osnotify.process_end import ProcessEnds

pidfds = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="no pidfds here")


def _gone_pid() -> int:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    return ended.pid


def _turns(loop: qasync.QEventLoop) -> None:
    """What the loop has to do now: a few turns, no waiting for time to pass."""
    for _ in range(3):
        loop.run_until_complete(asyncio.sleep(0))


@pidfds
def test_it_says_once_when_a_watched_process_ends(qtbot: QtBot, loop: qasync.QEventLoop) -> None:
    ends = ProcessEnds()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        ends.watch([sleeper.pid])
        with qtbot.assertNotEmitted(ends.ended):
            _turns(loop)  # alive: nothing to say, and nothing polls
        with qtbot.waitSignal(ends.ended, timeout=5000):
            sleeper.kill()
        sleeper.wait()
        with qtbot.assertNotEmitted(ends.ended):
            ends.watch([sleeper.pid])  # the same pids again: said once is enough
            _turns(loop)
    finally:
        sleeper.kill()
        sleeper.wait()
        ends.stop()


@pidfds
def test_a_process_gone_before_it_is_watched_is_said_at_once(
    qtbot: QtBot, loop: qasync.QEventLoop
) -> None:
    ends = ProcessEnds()
    with qtbot.waitSignal(ends.ended, timeout=2000):
        ends.watch([_gone_pid()])


def test_without_pidfds_it_asks_to_look_again_now_and_then(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pidfds(_pid: int) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(process_end.os, "pidfd_open", no_pidfds, raising=False)
    monkeypatch.setattr(process_end, "FALLBACK_MS", 50)
    ends = ProcessEnds()
    ends.watch([os.getpid()])
    with qtbot.waitSignal(ends.ended, timeout=2000):
        pass
    ends.watch([])
    # real-time: a stopped timer shows only by its interval passing in silence
    with qtbot.assertNotEmitted(ends.ended, wait=200):
        pass
