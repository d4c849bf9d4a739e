"""Delivery of captured output: crash points 10–12, repair, environment failures, retention."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coven_core.errors import CovenError
from coven_core.scheduling import delivery
from coven_core.scheduling.delivery import (
    DEFAULT_KEEP_BYTES,
    DEFAULT_KEEP_COUNT,
    FAILPOINT_RENAMED,
    FAILPOINT_TEMP_WRITTEN,
    DeliveryError,
    Receipt,
    deliver,
    has_output,
    output_name,
    prune_outputs,
    repair,
)

NOW = datetime(2026, 3, 8, 7, 30, 5, tzinfo=UTC)
SCHEDULED = datetime(2026, 3, 8, 7, 30, tzinfo=UTC)
NAME = output_name(SCHEDULED, "r1@20260308T073000Z")
PAYLOAD = b"report line 1\nreport line 2\n\x00\xff binary too\n"


class Crash(Exception):
    """Stands in for the process dying at a failpoint."""


def crash_at(point: str):
    def failpoint(name: str) -> None:
        if name == point:
            raise Crash(name)

    return failpoint


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def temps(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if ".tmp-" in n)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "attempt" / "stdout"
    path.parent.mkdir()
    path.write_bytes(PAYLOAD)
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "data" / "output" / "r1"


# --- deliver ----------------------------------------------------------------------------------


def test_deliver_writes_the_bytes_privately_and_returns_the_receipt(
    source: Path, folder: Path
) -> None:
    receipt = deliver(source, folder, NAME, now=NOW)

    final = folder / NAME
    assert receipt == Receipt(str(final), len(PAYLOAD), sha(PAYLOAD), NOW)
    assert final.read_bytes() == PAYLOAD
    assert mode(final) == 0o600
    assert mode(folder) == 0o700
    assert mode(folder.parent) == 0o700  # the missing parents are private too
    assert os.listdir(folder) == [NAME]


def test_deliver_leaves_an_existing_folder_as_it_is(source: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)

    deliver(source, folder, NAME, now=NOW)

    assert mode(folder) == 0o755  # a folder the person chose keeps its permissions


def test_missing_source_is_delivered_as_empty_output(tmp_path: Path, folder: Path) -> None:
    receipt = deliver(tmp_path / "no-such-stdout", folder, NAME, now=NOW)

    assert (folder / NAME).read_bytes() == b""
    assert (receipt.size, receipt.sha256) == (0, sha(b""))


def test_has_output_says_whether_there_is_anything_to_deliver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not has_output(str(tmp_path))  # no stdout file: the command wrote nothing
    (tmp_path / "stdout").write_bytes(b"")
    assert not has_output(str(tmp_path))
    (tmp_path / "stdout").write_bytes(b"x")
    assert has_output(str(tmp_path))

    def refused(path: object) -> os.stat_result:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(delivery.os, "stat", refused)
    assert has_output(str(tmp_path))  # not readable here: the delivery will report it


def test_empty_source_is_delivered_as_empty_output(tmp_path: Path, folder: Path) -> None:
    empty = tmp_path / "stdout"
    empty.write_bytes(b"")

    receipt = deliver(empty, folder, NAME, now=NOW)

    assert (folder / NAME).read_bytes() == b""
    assert (receipt.size, receipt.sha256) == (0, sha(b""))


def test_output_larger_than_one_chunk_is_copied_whole(tmp_path: Path, folder: Path) -> None:
    big = tmp_path / "stdout"
    data = os.urandom(3 * 1024 * 1024 + 17)
    big.write_bytes(data)

    receipt = deliver(big, folder, NAME, now=NOW)

    assert (folder / NAME).read_bytes() == data
    assert (receipt.size, receipt.sha256) == (len(data), sha(data))


def test_failpoints_fire_after_the_temp_write_and_after_the_rename(
    source: Path, folder: Path
) -> None:
    seen: list[tuple[str, list[str]]] = []

    def record(point: str) -> None:
        seen.append((point, sorted(os.listdir(folder))))

    deliver(source, folder, NAME, now=NOW, failpoint=record)

    (first, at_first), (second, at_second) = seen
    assert (first, second) == (FAILPOINT_TEMP_WRITTEN, FAILPOINT_RENAMED)
    assert len(at_first) == 1 and at_first[0].startswith(f".{NAME}.tmp-")
    assert at_second == [NAME]


# --- crash points and repair ------------------------------------------------------------------


def test_crash_after_the_temp_write_is_repaired_by_delivering(source: Path, folder: Path) -> None:
    with pytest.raises(Crash):
        deliver(source, folder, NAME, now=NOW, failpoint=crash_at(FAILPOINT_TEMP_WRITTEN))
    assert not (folder / NAME).exists()
    assert len(temps(folder)) == 1
    assert mode(folder / temps(folder)[0]) == 0o600

    receipt = repair(source, folder, NAME, now=NOW)

    assert os.listdir(folder) == [NAME]
    assert (folder / NAME).read_bytes() == PAYLOAD
    assert receipt == Receipt(str(folder / NAME), len(PAYLOAD), sha(PAYLOAD), NOW)


def test_crash_after_the_rename_gets_its_receipt_without_a_rewrite(
    source: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(Crash):
        deliver(source, folder, NAME, now=NOW, failpoint=crash_at(FAILPOINT_RENAMED))
    before = (folder / NAME).stat()
    monkeypatch.setattr(delivery, "deliver", pytest.fail)  # a rewrite would go through it

    later = NOW + timedelta(minutes=3)
    receipt = repair(source, folder, NAME, now=later)

    after = (folder / NAME).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert receipt == Receipt(str(folder / NAME), len(PAYLOAD), sha(PAYLOAD), later)


def test_repair_rewrites_a_partial_delivered_file(source: Path, folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / NAME).write_bytes(PAYLOAD[:7])

    receipt = repair(source, folder, NAME, now=NOW)

    assert (folder / NAME).read_bytes() == PAYLOAD
    assert (receipt.size, receipt.sha256) == (len(PAYLOAD), sha(PAYLOAD))
    assert mode(folder / NAME) == 0o600


def test_repair_delivers_when_nothing_was_written(source: Path, folder: Path) -> None:
    receipt = repair(source, folder, NAME, now=NOW)

    assert (folder / NAME).read_bytes() == PAYLOAD
    assert receipt.sha256 == sha(PAYLOAD)


def test_repair_removes_only_the_temps_of_its_own_name(source: Path, folder: Path) -> None:
    folder.mkdir(parents=True)
    other = output_name(SCHEDULED + timedelta(hours=1), "r1@20260308T083000Z")
    (folder / f".{NAME}.tmp-aaaa").write_bytes(b"half")
    (folder / f".{NAME}.tmp-bbbb").write_bytes(b"")
    (folder / f".{other}.tmp-cccc").write_bytes(b"in flight")

    repair(source, folder, NAME, now=NOW)

    assert sorted(os.listdir(folder)) == sorted([NAME, f".{other}.tmp-cccc"])


@pytest.mark.parametrize("point", [FAILPOINT_TEMP_WRITTEN, FAILPOINT_RENAMED])
def test_a_process_killed_at_a_failpoint_is_repaired(
    source: Path, folder: Path, point: str
) -> None:
    script = (
        "import os, sys\n"
        "from datetime import datetime, UTC\n"
        "from pathlib import Path\n"
        "from coven_core.scheduling.delivery import deliver\n"
        "def die(name):\n"
        "    if name == sys.argv[4]:\n"
        "        os._exit(137)\n"
        "deliver(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3],\n"
        "        now=datetime.now(UTC), failpoint=die)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(source), str(folder), NAME, point], check=False
    )
    assert done.returncode == 137

    receipt = repair(source, folder, NAME, now=NOW)

    assert os.listdir(folder) == [NAME]
    assert (folder / NAME).read_bytes() == PAYLOAD
    assert receipt.sha256 == sha(PAYLOAD)


# --- environment failures ---------------------------------------------------------------------


def disk_fills_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first write into a file goes through partly, the next finds the disk full."""
    real_write = os.write
    calls = {"n": 0}

    def write(fd: int, data: bytes) -> int:
        if fd <= 2:
            return real_write(fd, data)
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data[:5]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(delivery.os, "write", write)


def test_a_full_disk_is_a_delivery_error_leaving_no_trace(
    source: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = output_name(SCHEDULED - timedelta(days=1), "r1@20260307T073000Z")
    deliver(source, folder, older, now=NOW - timedelta(days=1))
    before = (folder / older).stat()
    disk_fills_up(monkeypatch)

    with pytest.raises(DeliveryError) as caught:
        deliver(source, folder, NAME, now=NOW)

    message = str(caught.value)
    assert "disk is full" in message and str(folder) in message
    assert caught.value.folder == folder
    assert caught.value.os_error.errno == errno.ENOSPC
    assert isinstance(caught.value, CovenError)
    assert os.listdir(folder) == [older]
    after = (folder / older).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (folder / older).read_bytes() == PAYLOAD


def test_a_full_disk_during_repair_keeps_the_partial_file_it_found(
    source: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder.mkdir(parents=True)
    (folder / NAME).write_bytes(b"partial")
    disk_fills_up(monkeypatch)

    with pytest.raises(DeliveryError, match="disk is full"):
        repair(source, folder, NAME, now=NOW)

    assert os.listdir(folder) == [NAME]
    assert (folder / NAME).read_bytes() == b"partial"


def test_a_read_only_file_system_at_the_rename_leaves_no_temp(
    source: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def replace(src: object, dst: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(delivery.os, "replace", replace)

    with pytest.raises(DeliveryError, match="read-only") as caught:
        deliver(source, folder, NAME, now=NOW)

    assert str(folder) in str(caught.value)
    assert os.listdir(folder) == []


def test_an_io_error_at_fsync_leaves_no_temp(
    source: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    folder.mkdir(parents=True)
    monkeypatch.setattr(delivery.os, "fsync", fsync)

    with pytest.raises(DeliveryError, match="input/output error"):
        deliver(source, folder, NAME, now=NOW)

    assert os.listdir(folder) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions")
def test_an_unwritable_folder_is_a_delivery_error(source: Path, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o500)
    try:
        with pytest.raises(DeliveryError, match="permission was denied") as caught:
            deliver(source, locked / "r1", NAME, now=NOW)
    finally:
        os.chmod(locked, 0o700)
    assert str(locked) in str(caught.value)


def test_a_refused_folder_creation_is_a_delivery_error(
    source: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def mkdir(path: object, mode: int = 0o777) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(delivery.os, "mkdir", mkdir)

    with pytest.raises(DeliveryError, match="permission was denied") as caught:
        deliver(source, folder, NAME, now=NOW)

    assert str(folder) in str(caught.value)


def test_a_file_where_the_folder_should_be_is_a_delivery_error(
    source: Path, tmp_path: Path
) -> None:
    squatter = tmp_path / "output"
    squatter.write_bytes(b"not a folder")

    with pytest.raises(DeliveryError, match="not a folder"):
        deliver(source, squatter, NAME, now=NOW)
    with pytest.raises(DeliveryError, match="not a folder"):
        deliver(source, squatter / "r1", NAME, now=NOW)

    assert squatter.read_bytes() == b"not a folder"


def test_an_unreadable_source_is_a_delivery_error_leaving_no_temp(
    tmp_path: Path, folder: Path
) -> None:
    not_a_file = tmp_path / "stdout"
    not_a_file.mkdir()

    with pytest.raises(DeliveryError, match="captured output") as caught:
        deliver(not_a_file, folder, NAME, now=NOW)

    assert str(folder) in str(caught.value)
    assert os.listdir(folder) == []


# --- names ------------------------------------------------------------------------------------

BAD_NAMES = ["", "a/b", "/abs", "..", "../x", "a..b", "a\x00b", "a\\b", ".hidden", "x" * 201]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_refused_before_touching_the_disk(
    source: Path, folder: Path, name: str
) -> None:
    with pytest.raises(ValueError, match="refusing the output name"):
        deliver(source, folder, name, now=NOW)
    with pytest.raises(ValueError, match="refusing the output name"):
        repair(source, folder, name, now=NOW)
    assert not folder.exists()


def test_output_names_sort_in_time_order_and_are_accepted() -> None:
    start = datetime(2026, 3, 8, 23, 0, tzinfo=UTC)
    instants = [start + timedelta(minutes=37 * i) for i in range(40)]
    names = [output_name(t, f"r1@{t:%Y%m%dT%H%M%SZ}") for t in instants]

    assert names == sorted(names)
    assert names[0] == output_name(start, "r1@20260308T230000Z")
    assert names[0].startswith("20260308T230000Z-") and names[0].endswith(".out")
    assert delivery._DELIVERED_NAME.fullmatch(names[0])
    assert all(delivery._name_problem(n) is None for n in names)


def test_output_names_tell_apart_occurrences_at_one_instant() -> None:
    ids = [
        "r1@20260308T073000Z",
        "r1@20260308T073000Z~gap",
        "r1@20260301T000000Z~missed",
        "r1@manual~0123456789abcdef",
        "r1@manual~0123456789abcdee",
    ]
    names = [output_name(SCHEDULED, i) for i in ids]

    assert len(set(names)) == len(ids)
    assert all(n.startswith("20260308T073000Z-") for n in names)
    assert "-gap-" in names[1] and "-manual-" in names[3]
    assert all(delivery._DELIVERED_NAME.fullmatch(n) for n in names)


def test_output_name_converts_to_utc_and_refuses_naive_instants() -> None:
    plus_two = datetime(2026, 3, 8, 9, 30, tzinfo=timezone(timedelta(hours=2)))
    assert output_name(plus_two, "r1@x").startswith("20260308T073000Z-")
    with pytest.raises(ValueError, match="no time zone"):
        output_name(datetime(2026, 3, 8, 7, 30), "r1@x")


def test_odd_occurrence_ids_still_give_safe_names() -> None:
    for weird in ["", "@", "r/../x@../../etc", "r1@\x00\x00", "r1@" + "é" * 300]:
        name = output_name(SCHEDULED, weird)
        assert delivery._name_problem(name) is None
        assert delivery._DELIVERED_NAME.fullmatch(name)


# --- retention --------------------------------------------------------------------------------


def fill(folder: Path, sizes: list[int]) -> list[str]:
    """Delivered files an hour apart, oldest first."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for i, size in enumerate(sizes):
        at = SCHEDULED + timedelta(hours=i)
        name = output_name(at, f"r1@{at:%Y%m%dT%H%M%SZ}")
        (folder / name).write_bytes(b"x" * size)
        names.append(name)
    return names


def test_prune_keeps_the_newest_by_count(folder: Path) -> None:
    names = fill(folder, [1, 1, 1, 1, 1])

    removed = prune_outputs(folder, keep_count=3, keep_bytes=10**9)

    assert removed == names[:2]
    assert sorted(os.listdir(folder)) == names[2:]


def test_prune_keeps_the_newest_by_bytes(folder: Path) -> None:
    names = fill(folder, [10, 10, 10, 10])

    removed = prune_outputs(folder, keep_count=100, keep_bytes=25)

    assert removed == names[:2]
    assert sorted(os.listdir(folder)) == names[2:]


def test_prune_satisfies_both_bounds(folder: Path) -> None:
    names = fill(folder, [50, 1, 1, 1, 1])

    assert prune_outputs(folder, keep_count=4, keep_bytes=3) == names[:2]


def test_prune_never_removes_protected_names(folder: Path) -> None:
    names = fill(folder, [1, 1, 1, 1])

    removed = prune_outputs(folder, keep_count=2, keep_bytes=10**9, protected={names[0]})

    assert removed == names[1:3]
    assert sorted(os.listdir(folder)) == [names[0], names[3]]


def test_prune_stops_when_only_protected_files_are_left(folder: Path) -> None:
    names = fill(folder, [10, 10, 10])

    removed = prune_outputs(folder, keep_count=0, keep_bytes=0, protected=set(names[1:]))

    assert removed == names[:1]
    assert sorted(os.listdir(folder)) == names[1:]


def test_prune_ignores_everything_it_did_not_deliver(folder: Path) -> None:
    names = fill(folder, [1, 1])
    others = [f".{names[1]}.tmp-abcd", "notes.txt", "20260101T000000Z-x.out.bak"]
    for other in others:
        (folder / other).write_bytes(b"keep me" * 1000)
    (folder / "20250101T000000Z-dir.out").mkdir()

    removed = prune_outputs(folder, keep_count=0, keep_bytes=0)

    assert removed == names
    assert sorted(os.listdir(folder)) == sorted([*others, "20250101T000000Z-dir.out"])


def test_prune_of_a_missing_folder_removes_nothing(tmp_path: Path) -> None:
    assert prune_outputs(tmp_path / "never-delivered") == []


def test_prune_refuses_negative_bounds(folder: Path) -> None:
    with pytest.raises(ValueError):
        prune_outputs(folder, keep_count=-1, keep_bytes=0)


def test_retention_defaults_are_a_hundred_files_and_a_hundred_mib(folder: Path) -> None:
    assert (DEFAULT_KEEP_COUNT, DEFAULT_KEEP_BYTES) == (100, 100 * 1024 * 1024)
    names = fill(folder, [0] * 102)

    assert prune_outputs(folder) == names[:2]


# --- property ---------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=4096))
def test_delivered_bytes_and_hash_match_the_source(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "stdout"
        source.write_bytes(data)
        folder = Path(scratch) / "out"

        receipt = deliver(source, folder, NAME, now=NOW)

        assert Path(receipt.path).read_bytes() == data
        assert (receipt.size, receipt.sha256) == (len(data), sha(data))
        assert repair(source, folder, NAME, now=NOW) == receipt
