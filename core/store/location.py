"""Where the store lives, and whether that place is safe to keep it (DESIGN §9, §13).

The data directory must be private (0700 on POSIX), owned by the user, not reached through a
symbolic link and not on a network filesystem, where SQLite's locking cannot be trusted. Each
refusal says what is wrong and how to fix it.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath

import platformdirs

from coven_core.notation.i18n import _
from coven_core.store.errors import StoreLocationError

DATA_DIR_ENV = "COVEN_DATA_DIR"
"""The environment variable that chooses the data directory when ``--data-dir`` is not given."""

NETWORK_FILESYSTEMS: frozenset[str] = frozenset(
    {
        "nfs", "nfs4", "cifs", "smb3", "smbfs", "smb2", "ncpfs", "afs", "coda", "9p",
        "sshfs", "fuse.sshfs", "glusterfs", "fuse.glusterfs", "ceph", "fuse.ceph", "lustre",
        "gpfs", "davfs", "fuse.davfs2", "beegfs", "orangefs", "pvfs2", "fuse.rclone",
        "fuse.s3fs", "fuse.gcsfuse",
    }
)  # fmt: skip
"""Filesystem types (as the mount table names them) where the store is refused."""

_MOUNT_TABLES = (Path("/proc/self/mountinfo"), Path("/proc/mounts"))
_MOUNTINFO_LINE = re.compile(r"^\d+ \d+ \d+:\d+ ")
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")
_PRIVATE_BITS = 0o077
# The longest name a local filesystem holds, and the longest data directory whose store
# SQLite can open (its Unix VFS takes paths of at most 512 bytes; "/coven.db-journal" and
# room to spare come on top).
NAME_MAX = 255
LONGEST_DATA_DIR = 480


def resolve_data_dir(
    explicit: str | os.PathLike[str] | None, env: Mapping[str, str] | None = None
) -> Path:
    """The data directory: ``explicit`` (``--data-dir``), else ``$COVEN_DATA_DIR``, else the
    platform's user data directory.

    ``~`` is expanded and the result made absolute, but symbolic links are *not* resolved:
    :func:`prepare_data_dir` must be able to see them.
    """
    environ = os.environ if env is None else env
    if explicit is not None:
        chosen = os.fspath(explicit)
        if not chosen:
            raise StoreLocationError(_("--data-dir is empty; give the path of a directory."))
    else:
        chosen = environ.get(DATA_DIR_ENV, "")
    if not chosen:
        return platformdirs.user_data_path("coven", appauthor=False).absolute()
    return _checked_length(Path(chosen).expanduser().absolute())


def _checked_length(path: Path) -> Path:
    """Refuse a path no filesystem can hold, before any call on it fails with ENAMETOOLONG."""
    for part in path.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise StoreLocationError(
                _(
                    "the data directory has a name of {size} bytes ({start}…); a file name can be "
                    "at most {most} bytes. Choose another --data-dir."
                ).format(size=len(os.fsencode(part)), start=part[:32], most=NAME_MAX)
            )
    if len(os.fsencode(path)) > LONGEST_DATA_DIR:
        raise StoreLocationError(
            _(
                "the data directory's path is {size} bytes long; SQLite needs it to be at most "
                "{most}. Choose another --data-dir."
            ).format(size=len(os.fsencode(path)), most=LONGEST_DATA_DIR)
        )
    return path


def prepare_data_dir(
    path: Path, *, mount_table: Path | None = None, uid: int | None = None
) -> Path:
    """Create the data directory (0700) if missing, then refuse it unless it is safe.

    ``mount_table`` replaces ``/proc/self/mountinfo`` (or ``/proc/mounts``) and ``uid`` the
    effective user id, for tests. The network check runs before anything is created.
    """
    path = path.absolute()
    if path.is_symlink():
        real = os.path.realpath(path)
        raise _symlink_error(path, hint=_("Point --data-dir at the real directory"), target=real)
    _refuse_network_filesystem(path, mount_table)
    _create_private_dir(path)
    if not path.is_dir():
        raise StoreLocationError(
            _("{path} is not a directory; point --data-dir at a directory for the store.").format(
                path=path
            )
        )
    _refuse_unsafe_owner_or_mode(path, os.stat(path), "700", uid)
    return path


def check_store_file(path: Path, *, uid: int | None = None) -> None:
    """Refuse an existing store file (or its ``-wal``/``-shm``/``-journal`` companion) that is a
    symbolic link, not a regular file, readable by others, or owned by someone else.

    A missing file passes: :func:`~coven_core.store.connection.open_connection` creates it 0600.
    """
    for candidate in _store_files(path):
        if candidate.is_symlink():
            real_dir = os.path.dirname(os.path.realpath(candidate))
            hint = _("Point --data-dir at the directory that holds the real file")
            raise _symlink_error(candidate, hint=hint, target=real_dir)
        if not candidate.exists():
            continue
        info = os.stat(candidate)
        if not stat.S_ISREG(info.st_mode):
            raise StoreLocationError(
                _(
                    "{path} is not a regular file; move it away or choose another --data-dir."
                ).format(path=candidate)
            )
        _refuse_unsafe_owner_or_mode(candidate, info, "600", uid)


def filesystem_type(path: Path, mount_table: Path | None = None) -> str | None:
    """The type of the filesystem ``path`` lies on (``ext4``, ``nfs4`` …), from the mount
    table's longest mount point that contains it; None where no mount table can be read.
    """
    table = mount_table if mount_table is not None else _default_mount_table()
    if table is None:
        return None
    try:
        text = table.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return None
    return _longest_prefix_fstype(str(PurePosixPath(path.resolve())), _parse_mounts(text))


def _store_files(path: Path) -> Iterator[Path]:
    yield path
    for suffix in ("-wal", "-shm", "-journal"):
        yield path.with_name(path.name + suffix)


def _symlink_error(path: Path, *, hint: str, target: str) -> StoreLocationError:
    return StoreLocationError(
        _("{path} is a symbolic link; Coven refuses a store reached through a link. {hint}: "
          "{target}").format(path=path, hint=hint, target=target)
    )  # fmt: skip


def _refuse_network_filesystem(path: Path, mount_table: Path | None) -> None:
    fstype = filesystem_type(path, mount_table)
    if fstype is not None and fstype in NETWORK_FILESYSTEMS:
        raise StoreLocationError(
            _(
                "{path} is on a network filesystem ({fstype}); SQLite locking is not reliable "
                "there. Use a local directory with --data-dir."
            ).format(path=path, fstype=fstype)
        )


def _create_private_dir(path: Path) -> None:
    if os.path.lexists(path):
        return
    try:
        path.mkdir(mode=0o700, parents=True)
        # mkdir's mode is filtered by the umask; state it exactly.
        os.chmod(path, 0o700)
    except FileExistsError:
        return  # created concurrently; the checks that follow judge it
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise StoreLocationError(
            _(
                "cannot create the data directory {path}: {reason}. Choose a writable directory "
                "with --data-dir."
            ).format(path=path, reason=reason)
        ) from exc


def _refuse_unsafe_owner_or_mode(
    path: Path, info: os.stat_result, private_mode: str, uid: int | None
) -> None:
    if os.name != "posix":
        return  # POSIX ownership and mode bits do not describe access on Windows
    owner = os.geteuid() if uid is None else uid
    if info.st_uid != owner:
        raise StoreLocationError(
            _(
                "{path} is owned by user id {owner}, not by you (user id {you}); Coven only keeps "
                "its store where you own it. Use a directory of your own with --data-dir."
            ).format(path=path, owner=info.st_uid, you=owner)
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & _PRIVATE_BITS:
        command = f"chmod {private_mode} {shlex.quote(str(path))}"
        said = _("{path} has permissions {mode}; Coven keeps its store private to you. Run: "
                 "{command}")  # fmt: skip
        raise StoreLocationError(said.format(path=path, mode=f"{mode:04o}", command=command))


def _default_mount_table() -> Path | None:
    for table in _MOUNT_TABLES:
        if table.exists():
            return table
    return None  # not Linux: no /proc to read


def _parse_mounts(text: str) -> list[tuple[str, str]]:
    """(mount point, fstype) pairs, in table order, from mountinfo or /proc/mounts text."""
    mounts = []
    for line in text.splitlines():
        entry = _parse_mount_line(line)
        if entry is not None:
            mounts.append(entry)
    return mounts


def _parse_mount_line(line: str) -> tuple[str, str] | None:
    fields = line.split(" ")
    if _MOUNTINFO_LINE.match(line):
        # id parent major:minor root mount-point options [optional...] - fstype source super
        if "-" not in fields[6:]:
            return None
        point, fstype = fields[4], _field(fields, fields.index("-", 6) + 1)
    else:
        # source mount-point fstype options dump pass
        point, fstype = _field(fields, 1), _field(fields, 2)
    if not fstype or not point.startswith("/"):
        return None
    return posixpath.normpath(_unescape(point)), fstype


def _field(fields: list[str], index: int) -> str:
    return fields[index] if index < len(fields) else ""


def _unescape(field: str) -> str:
    return _OCTAL_ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), field)


def _longest_prefix_fstype(path: str, mounts: list[tuple[str, str]]) -> str | None:
    """By plain string tests on normalised paths: pathlib here cost a store's every opening
    (and each doctor run) about a millisecond for a table of 20 mounts."""
    best: tuple[int, str] | None = None
    for point, fstype in mounts:
        # ">=": of two mounts on one point, the later one in the table is on top. Every
        # point that contains the path is an ancestor of it: the longer is the deeper.
        if _contains(point, path) and (best is None or len(point) >= best[0]):
            best = (len(point), fstype)
    return None if best is None else best[1]


def _contains(point: str, path: str) -> bool:
    return point == "/" or path == point or path.startswith(point + "/")
