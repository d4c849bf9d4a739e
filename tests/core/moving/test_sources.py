"""Where an import reads its jobs (DESIGN §15): files, a crontab's text, and this user's
crontab through ``crontab -l`` — the same for the CLI and the app's Import window."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from coven_core.errors import ValidationError
from coven_core.moving.dst_differences import Scheduler
from coven_core.moving.plan import import_preview
from coven_core.moving.sources import read_jobs, users_crontab

DATA = Path(__file__).parent / "data"
START = datetime(2027, 1, 1, tzinfo=UTC)


def fake_crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    program = tmp_path / "bin" / "crontab"
    program.parent.mkdir()
    program.write_text(f"#!/bin/sh\n{script}\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(program.parent))


def test_a_crontab_file_and_its_text_read_alike() -> None:
    text = (DATA / "crontab").read_text()
    assert read_jobs(Scheduler.CRON, DATA / "crontab", "UTC") == read_jobs(
        Scheduler.CRON, text, "UTC"
    )


def test_the_users_crontab_is_what_crontab_l_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_crontab(tmp_path, monkeypatch, "echo '30 2 * * * rsync -a ~/Documents /mnt/backup'")
    plan = import_preview(Scheduler.CRON, users_crontab(), "Europe/Berlin", START)
    [routine] = plan.routines
    assert (routine.spec.schedule, routine.spec.timezone) == ("cron:30 2 * * *", "Europe/Berlin")
    assert any("02:30" in difference.sentence for difference in routine.differences)


def test_no_crontab_says_what_crontab_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_crontab(tmp_path, monkeypatch, "echo 'no crontab for ada' >&2; exit 1")
    with pytest.raises(ValidationError, match="crontab -l: no crontab for ada"):
        users_crontab()


def test_no_crontab_command_points_at_a_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValidationError, match="choose a crontab file"):
        users_crontab()


@pytest.mark.parametrize("origin", list(Scheduler)[:3])
def test_a_missing_file_is_named(origin: Scheduler, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"nothing\.here' is not a readable file"):
        read_jobs(origin, tmp_path / "nothing.here", "UTC")


def test_a_binary_crontab_is_refused_by_name(tmp_path: Path) -> None:
    binary = tmp_path / "crontab.bin"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValidationError, match="cannot be read as text"):
        read_jobs(Scheduler.CRON, binary, "UTC")
