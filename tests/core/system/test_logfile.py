"""The rotating log file in the data directory (issue 18)."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from coven_core.system import logfile


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """Put the root logger back as pytest had it, whatever ``logfile.start`` installed."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    return data


def test_records_go_to_a_private_file_whatever_the_umask(
    data_dir: Path, restored_logging: None
) -> None:
    previous = os.umask(0)
    try:
        path = logfile.start(data_dir, "warning")
        logging.getLogger("coven_core.scheduling.scheduler").warning(
            "pass failed, retrying later: %s", "x"
        )
        logging.getLogger("coven_core.scheduling.scheduler").info("not at this level")
    finally:
        os.umask(previous)
    assert path == data_dir / "logs" / "coven.log"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    (line,) = logfile.recent_lines(data_dir)
    assert line.endswith("WARNING coven_core.scheduling.scheduler: pass failed, retrying later: x")


def test_the_file_rotates_within_a_bounded_size_and_count(
    data_dir: Path, restored_logging: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logfile, "MAX_BYTES", 1000)
    logfile.start(data_dir, "info")
    for n in range(200):
        logging.getLogger("coven").info("record %s", n)
    files = sorted(path.name for path in (data_dir / "logs").iterdir())
    assert files == ["coven.log", "coven.log.1", "coven.log.2", "coven.log.3"]
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in (data_dir / "logs").iterdir())
    assert logfile.recent_lines(data_dir, 2)[-1].endswith("record 199")


def test_starting_again_replaces_our_handlers_only(data_dir: Path, restored_logging: None) -> None:
    before = len(logging.getLogger().handlers)
    logfile.start(data_dir, stderr=True)
    logfile.start(data_dir, stderr=True)
    assert len(logging.getLogger().handlers) == before + 2


def test_recent_lines_of_a_long_file_start_at_a_whole_line(data_dir: Path) -> None:
    path = logfile.log_path(data_dir)
    path.parent.mkdir()
    path.write_text("".join(f"line {n} " + "x" * 50 + "\n" for n in range(10_000)))
    lines = logfile.recent_lines(data_dir, 3)
    assert [line.split()[1] for line in lines] == ["9997", "9998", "9999"]
    assert logfile.recent_lines(data_dir / "nowhere") == []
