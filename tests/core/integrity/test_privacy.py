"""Everything Coven writes in the data directory is private, whatever the umask (§13)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from coven_core.clock import VirtualClock
from coven_core.integrity.doctor import doctor
from coven_core.integrity.privacy import LooseEntry, loose_entries
from coven_core.integrity.retention import RetentionPolicy, sweep
from coven_core.model import RevisionSpec
from tests.core.conftest import real_runners


def test_loose_entries_name_group_or_other_bits_and_skip_links(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "private").mkdir(parents=True, mode=0o700)
    root.chmod(0o700)
    (root / "private" / "kept").write_text("")
    (root / "private" / "kept").chmod(0o600)
    (root / "open").mkdir(mode=0o755)
    (root / "open").chmod(0o755)
    (root / "open" / "read").write_text("")
    (root / "open" / "read").chmod(0o644)
    (root / "link").symlink_to("/etc")
    assert sorted(loose_entries(root)) == [
        LooseEntry(root / "open", 0o755, True),
        LooseEntry(root / "open" / "read", 0o644, False),
    ]
    assert LooseEntry(root / "open", 0o755, True).fix == f"chmod 700 {root / 'open'}"


@pytest.fixture
def no_umask() -> Iterator[None]:
    """The loosest umask there is; the runners started meanwhile inherit it."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def test_real_runs_deliveries_retention_and_doctor_leave_nothing_loose(
    tmp_path: Path, clock: VirtualClock, no_umask: None
) -> None:
    with real_runners(tmp_path / "data", clock) as real:
        argv = ("/bin/sh", "-c", "echo out; echo err >&2")
        spec = RevisionSpec("@yearly", "UTC", argv, env=(("TOKEN", "s3"),))
        real.operator.add_routine("talks", spec)
        real.run_now_to_the_end("talks")  # settles, then delivers the output
        sweep(real.store, clock.now_utc(), RetentionPolicy())
        report = doctor(real.store, clock.now_utc())
    data_dir = real.store.data_dir
    assert list((data_dir / "output").rglob("*"))  # something was delivered
    assert list((data_dir / "attempts").rglob("journal.jsonl"))  # a pooled runner: no spec.json
    assert not [
        p for p in (data_dir / "attempts").rglob("*") if p.is_file() and b"s3" in p.read_bytes()
    ]
    assert list(loose_entries(data_dir)) == []
    loose = [f.message for f in report.findings if f.check == "location" and f.severity != "info"]
    assert loose == []
