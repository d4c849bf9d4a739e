"""Delivery of a successful attempt's output to its routine's folder (DESIGN §9, §11).

Crash points 10–12 live here: the captured ``stdout`` is written to a temp file in the output
folder and fsync'd (10, failpoint ``delivery.temp_written``), renamed over the final name and the
folder fsync'd (11, failpoint ``delivery.renamed``); the engine then commits the returned
:class:`Receipt` in its own transaction (12). This module is pure filesystem: it never opens the
store.

A crash between any two steps is mended by :func:`repair`, which finishes the *delivery* and
never runs the command again: a delivered file whose hash matches the captured output just gets
its receipt, anything else is delivered afresh. Environment failures (full disk, no permission,
read-only or failing disk) raise :class:`DeliveryError`, which the engine classifies as
``delivery_failed``: delivery is retried, the action never.

Delivered output is bounded per routine by :func:`prune_outputs` (count and bytes).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
from collections.abc import Callable, Collection, Generator, Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from coven_core.errors import CovenError
from coven_core.runner.spec import STDOUT_FILE

#: Retention per routine (DESIGN §11): at most this many delivered files …
DEFAULT_KEEP_COUNT = 100
#: … and at most this many bytes of them.
DEFAULT_KEEP_BYTES = 100 * 1024 * 1024

#: Crash point 10: the temp file is written and fsync'd, the final name not yet in place.
FAILPOINT_TEMP_WRITTEN = "delivery.temp_written"
#: Crash point 11: the final name is in place and the folder fsync'd, no receipt committed yet.
FAILPOINT_RENAMED = "delivery.renamed"

Failpoint = Callable[[str], None]

_CHUNK = 1 << 20
_TEMP_MARK = ".tmp-"
# NAME_MAX is 255 bytes on common file systems; the temp name adds a dot, the mark and 16 hex.
_MAX_NAME_BYTES = 200
_TEMP_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_BINARY", 0)
)
# What output_name produces; prune_outputs touches nothing else (temp files start with a dot).
_DELIVERED_NAME = re.compile(r"\d{8}T\d{6}Z-[A-Za-z0-9-]+\.out")

_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EACCES: "permission was denied",
    errno.EPERM: "the operation is not permitted",
    errno.EROFS: "the file system is read-only",
    errno.EIO: "the disk reported an input/output error",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.EISDIR: "a folder stands where a file was expected",
    errno.ENAMETOOLONG: "the path is too long",
    errno.ELOOP: "the path has too many symbolic links",
    errno.EMFILE: "too many files are open",
    errno.ENFILE: "too many files are open",
}


@dataclass(frozen=True)
class Receipt:
    """Evidence of one delivered output, for the engine to commit with the run."""

    path: str
    size: int
    sha256: str  # lowercase hex
    delivered_at: datetime


class DeliveryError(CovenError):
    """The environment refused a delivery (full disk, permission, read-only or failing disk).

    The engine classifies it as ``delivery_failed``: delivery is retried, the command never.
    A failed delivery leaves no temp file behind and does not touch any delivered file.
    """

    def __init__(self, message: str, *, folder: Path, os_error: OSError) -> None:
        super().__init__(message)
        self.folder = folder
        self.os_error = os_error


def has_output(attempt_dir: str) -> bool:
    """Whether the attempt captured any stdout. An empty (or missing) one has nothing to
    deliver: no file, no fsyncs, no receipt (bench_apscheduler, "drain": four deliveries
    of nothing took a third of each pass)."""
    try:
        return os.stat(Path(attempt_dir) / STDOUT_FILE).st_size > 0
    except FileNotFoundError:
        return False  # the command wrote nothing
    except OSError:
        return True  # unreadable from here: the delivery itself will say why


def output_name(scheduled_utc: datetime, occurrence_id: str) -> str:
    """A safe file name that sorts in time order: ``<UTC stamp>-[<kind>-]<digest>.out``.

    The stamp comes first so name order is time order (retention relies on it); the rest of the
    occurrence id (``gap``, ``missed``, ``manual-…``) keeps it readable and a digest of the whole
    id keeps two occurrences at one instant apart, whatever the sanitising folded together.
    """
    if scheduled_utc.tzinfo is None:
        raise ValueError(f"the scheduled instant {scheduled_utc} has no time zone")
    stamp = scheduled_utc.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    tail = occurrence_id.rpartition("@")[2].removeprefix(stamp)
    kind = re.sub(r"[^A-Za-z0-9]+", "-", tail).strip("-")[:32].rstrip("-")
    digest = hashlib.sha256(occurrence_id.encode("utf-8")).hexdigest()[:10]
    return f"{stamp}-{kind}-{digest}.out" if kind else f"{stamp}-{digest}.out"


def deliver(
    source: Path,
    folder: Path,
    name: str,
    *,
    now: datetime,
    failpoint: Failpoint | None = None,
) -> Receipt:
    """Copy ``source`` (the attempt's captured stdout) to ``folder/name`` crash-safely.

    Temp write (0600) + fsync → rename → folder fsync; the folder is created (0700) if missing.
    A missing ``source`` is empty output. The receipt is returned, not committed: committing it
    is the engine's step 12. Raises :class:`DeliveryError` when the environment refuses, and
    ``ValueError`` for a name that is not a plain file name.
    """
    _check_name(name)
    final = folder / name
    with _reporting(f"delivering output to {final}", folder):
        _make_private_dirs(folder)
    temp, size, sha256 = _write_temp(source, final)
    _fire(failpoint, FAILPOINT_TEMP_WRITTEN)
    _publish(temp, final)
    _fire(failpoint, FAILPOINT_RENAMED)
    return Receipt(os.fspath(final), size, sha256, now)


def repair(
    source: Path, folder: Path, name: str, *, now: datetime, failpoint: Failpoint | None = None
) -> Receipt:
    """Finish the delivery of an occurrence that succeeded but has no committed receipt.

    Leftover temp files for ``name`` are removed. If ``folder/name`` already holds exactly the
    captured output (same sha256), it is made durable and gets its receipt without being
    rewritten; otherwise (missing, partial, different) it is delivered again. The command is
    never re-run: only its captured output is consulted.
    """
    _check_name(name)
    final = folder / name
    _remove_temps(final)
    found = _delivered_digest(final)
    if found is None or found != _digest(_source_chunks(source, folder)):
        return deliver(source, folder, name, now=now, failpoint=failpoint)
    with _reporting(f"delivering output to {final}", folder):
        _sync_file(final)
        _sync_dir(folder)
    return Receipt(os.fspath(final), found[0], found[1], now)


def prune_outputs(
    folder: Path,
    *,
    keep_count: int = DEFAULT_KEEP_COUNT,
    keep_bytes: int = DEFAULT_KEEP_BYTES,
    protected: Collection[str] = (),
) -> list[str]:
    """Remove the oldest delivered files until at most ``keep_count`` files and ``keep_bytes``
    bytes remain, never a name in ``protected`` (evidence still needed). Returns removed names.

    Only files named the way :func:`output_name` names them are counted or removed; temp files
    and anything a person put in the folder are left alone. Protected files still count toward
    the bounds, so the bounds may stay exceeded when only protected files are left.
    """
    if keep_count < 0 or keep_bytes < 0:
        raise ValueError("retention bounds cannot be negative")
    with _reporting(f"pruning delivered output in {folder}", folder):
        doomed = _oldest_beyond(_delivered_files(folder), keep_count, keep_bytes, protected)
        for name in doomed:
            with suppress(FileNotFoundError):
                os.unlink(folder / name)
    return doomed


# --- the steps of a delivery ---------------------------------------------------------------


def _check_name(name: str) -> None:
    problem = _name_problem(name)
    if problem is not None:
        raise ValueError(f"refusing the output name {name!r}: {problem}")


def _name_problem(name: str) -> str | None:
    if not name:
        return "it is empty"
    if "\x00" in name:
        return "it contains a NUL character"
    if "/" in name or "\\" in name:
        return "it contains a path separator"
    if ".." in name:
        return "it contains '..'"
    if name.startswith("."):
        return "hidden names are reserved for temp files"
    if len(name.encode("utf-8", "surrogateescape")) > _MAX_NAME_BYTES:
        return f"it is longer than {_MAX_NAME_BYTES} bytes"
    return None


def _make_private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents as 0700, each entry made durable."""
    if folder.is_dir():
        return
    if folder.parent != folder:
        _make_private_dirs(folder.parent)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        if folder.is_dir():
            return  # created by someone else in the meantime
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", os.fspath(folder)) from None
    _sync_dir(folder.parent)


def _write_temp(source: Path, final: Path) -> tuple[Path, int, str]:
    """Write the source to a fresh temp beside ``final``; returns it with size and sha256."""
    temp = final.with_name(f".{final.name}{_TEMP_MARK}{secrets.token_hex(8)}")
    with _reporting(f"delivering output to {final}", final.parent):
        fd = os.open(temp, _TEMP_FLAGS, 0o600)
    try:
        with _reporting(f"delivering output to {final}", final.parent):
            try:
                size, sha256 = _copy_into(fd, source, final.parent)
                os.fsync(fd)
            finally:
                os.close(fd)
    except BaseException:
        _discard(temp)
        raise
    return temp, size, sha256


def _copy_into(fd: int, source: Path, folder: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with closing(_source_chunks(source, folder)) as chunks:
        for chunk in chunks:
            _write_all(fd, chunk)
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _publish(temp: Path, final: Path) -> None:
    with _reporting(f"delivering output to {final}", final.parent):
        try:
            os.replace(temp, final)
        except BaseException:
            _discard(temp)
            raise
        _sync_dir(final.parent)


def _remove_temps(final: Path) -> None:
    prefix = f".{final.name}{_TEMP_MARK}"
    with _reporting(f"cleaning up an unfinished delivery in {final.parent}", final.parent):
        try:
            names = os.listdir(final.parent)
        except FileNotFoundError:
            return
        for leftover in names:
            if leftover.startswith(prefix):
                with suppress(FileNotFoundError):
                    os.unlink(final.parent / leftover)


# --- reading, hashing, syncing ---------------------------------------------------------------


def _source_chunks(source: Path, folder: Path) -> Generator[bytes, None, None]:
    """The captured output in chunks; a missing file is empty output (the command wrote none)."""
    action = f"reading the captured output {source} to deliver it to {folder}"
    return _chunks(source, action, folder)


def _chunks(path: Path, action: str, folder: Path) -> Generator[bytes, None, None]:
    with _reporting(action, folder):
        try:
            stream = open(path, "rb")  # noqa: SIM115 - closed below; one error report for both
        except FileNotFoundError:
            return
        with stream:
            while chunk := stream.read(_CHUNK):
                yield chunk


def _digest(chunks: Generator[bytes, None, None]) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with closing(chunks):
        for chunk in chunks:
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def _delivered_digest(final: Path) -> tuple[int, str] | None:
    """Size and sha256 of what is already at the final name, None if nothing is."""
    with _reporting(f"checking the delivered output {final}", final.parent):
        if not os.path.lexists(final):
            return None
    return _digest(_chunks(final, f"checking the delivered output {final}", final.parent))


def _sync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_dir(path: Path) -> None:
    """Make the folder's entries (a rename, a new child) durable."""
    if os.name == "nt":
        return  # a folder cannot be opened for fsync there; NTFS journals the rename itself
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _discard(temp: Path) -> None:
    # Best effort while another error is on its way out; repair() removes what survives.
    with suppress(OSError):
        os.unlink(temp)


def _fire(failpoint: Failpoint | None, point: str) -> None:
    if failpoint is not None:
        failpoint(point)


@contextmanager
def _reporting(action: str, folder: Path) -> Iterator[None]:
    """Turn an OSError into a :class:`DeliveryError` naming the cause and the place."""
    try:
        yield
    except OSError as exc:
        cause = _CAUSES.get(exc.errno or 0, "an unexpected file system error occurred")
        detail = exc.strerror or str(exc)
        message = f"{cause} while {action} ({detail})"
        raise DeliveryError(message, folder=folder, os_error=exc) from exc


# --- retention --------------------------------------------------------------------------------


def _delivered_files(folder: Path) -> list[tuple[str, int]]:
    """``(name, size)`` of the delivered files, oldest first."""
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    files = [
        (entry.name, entry.stat(follow_symlinks=False).st_size)
        for entry in entries
        if _DELIVERED_NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False)
    ]
    return sorted(files)


def _oldest_beyond(
    files: list[tuple[str, int]], keep_count: int, keep_bytes: int, protected: Collection[str]
) -> list[str]:
    count = len(files)
    total = sum(size for _, size in files)
    doomed: list[str] = []
    for name, size in files:
        if count <= keep_count and total <= keep_bytes:
            break
        if name in protected:
            continue
        doomed.append(name)
        count -= 1
        total -= size
    return doomed
