"""Waking a scheduler in another process at once (CONTRACT §3.1).

The scheduler never polls, so a change made elsewhere (the ``coven`` CLI while the daemon or
the tray app runs) must be pushed to it. Each scheduler process starts a :class:`WakeListener`:
an AF_UNIX datagram socket in the store's wake directory, read by one daemon thread that blocks
in ``recv`` and sets the scheduler's :class:`~coven_core.clock.WakeSignal`. :func:`notify`
sends one datagram, the reason's ``.value`` in ASCII, to every socket there.

A wake is best-effort: a lost datagram only delays work until the scheduler's safety cap.
So :func:`notify` never raises, and removes the sockets of processes that died without closing.

Where AF_UNIX datagrams are missing (Windows) cross-process wakes are not yet supported: the
listener does nothing and :func:`notify` reaches no one (see :data:`SUPPORTED`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import socket
import stat
import sys
import tempfile
import threading
from pathlib import Path
from types import TracebackType

from coven_core.clock import WakeReason, WakeSignal
from coven_core.errors import CovenError

#: Whether wakes can cross processes here. Elsewhere listeners are inert and notify returns 0.
SUPPORTED = sys.platform != "win32" and hasattr(socket, "AF_UNIX")

#: The longest socket path we bind: below macOS's 104-byte ``sun_path`` (Linux allows 108).
MAX_SOCKET_PATH = 100
#: Room kept for ``/<pid>-<token>.sock`` whatever the pid, so that every process on one wake
#: directory takes the same decision in :func:`socket_dir`.
_NAME_ROOM = 32
_SUFFIX = ".sock"
_STOP = b"__stop__"  # what close() sends itself; any datagram ends the thread once closing
_MAX_PAYLOAD = 64
_JOIN_TIMEOUT = 5.0


class WakeDirError(CovenError):
    """The wake directory cannot be used: someone else's, not a directory, or too long a path."""


def socket_dir(wake_dir: Path) -> Path:
    """The directory where the sockets for ``wake_dir`` actually live.

    Normally ``wake_dir`` itself (resolved). When a socket path in it could pass the AF_UNIX
    limit, it is ``<tempfile.gettempdir()>/coven-wake-<hash of the resolved wake_dir>``:
    every process derives the same name from the same store, so they still meet there —
    provided they share a temp directory (a service with a private /tmp or another TMPDIR
    would not).
    """
    resolved = wake_dir.resolve()
    encoded = os.fsencode(resolved)
    if len(encoded) + _NAME_ROOM <= MAX_SOCKET_PATH:
        return resolved
    digest = hashlib.sha256(encoded).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"coven-wake-{digest}"


def notify(wake_dir: Path, reason: WakeReason) -> int:
    """Wake every scheduler listening on ``wake_dir`` with ``reason``; how many were reached.

    Never blocks and never raises. A socket whose owner is gone is removed and not counted;
    any other failure for one socket (a full queue, say) only leaves it out of the count.
    """
    if not SUPPORTED:
        return 0
    try:
        sockets = _listener_sockets(socket_dir(wake_dir))
        if not sockets:
            return 0
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
            sender.setblocking(False)
            payload = reason.value.encode("ascii")
            return sum(_send_one(sender, path, payload) for path in sockets)
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop in resolve() before 3.13
        return 0


class WakeListener:
    """Sets a :class:`WakeSignal` for every wake that :func:`notify` sends to its directory.

    Create with :meth:`start`; end with :meth:`close` (idempotent) or a ``with`` block.
    """

    def __init__(self, sock: socket.socket | None, path: Path | None, signal: WakeSignal) -> None:
        self._sock = sock
        self._path = path
        self._signal = signal
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def start(cls, wake_dir: Path, signal: WakeSignal) -> WakeListener:
        """Listen on ``wake_dir`` (created mode 0700 if missing) until closed.

        Raises :class:`WakeDirError` for a directory that is not this user's own, and
        ``OSError`` if the socket cannot be created. Where :data:`SUPPORTED` is false it
        returns an inert listener: cross-process wakes are not yet supported there.
        """
        if not SUPPORTED:
            return cls(None, None, signal)
        directory = socket_dir(wake_dir)
        _prepare_dir(directory)
        sock, path = _bind(directory)
        listener = cls(sock, path, signal)
        listener._serve_in_thread(sock)
        return listener

    @property
    def path(self) -> Path | None:
        """The socket file, or None for an inert listener."""
        return self._path

    @property
    def is_running(self) -> bool:
        """Whether the receiving thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        """Stop the thread and remove the socket file. Safe to call again."""
        with self._lock:
            if self._closing.is_set():
                return
            self._closing.set()
            if self._sock is not None and self._path is not None:
                self._stop(self._sock, self._path)

    def __enter__(self) -> WakeListener:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _serve_in_thread(self, sock: socket.socket) -> None:
        self._thread = threading.Thread(
            target=self._serve, args=(sock,), name="coven-wake-listener", daemon=True
        )
        self._thread.start()

    def _serve(self, sock: socket.socket) -> None:
        while True:
            try:
                payload = sock.recv(_MAX_PAYLOAD)  # blocks with no timeout: no polling
            except OSError:
                return  # the socket was closed under us; nothing more can arrive
            if self._closing.is_set():
                return
            self._signal.set(_reason_for(payload))

    def _stop(self, sock: socket.socket, path: Path) -> None:
        if not _send_stop(path):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes recv where the stop datagram cannot
        if self._thread is not None:
            self._thread.join(_JOIN_TIMEOUT)
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
        sock.close()


def _reason_for(payload: bytes) -> WakeReason:
    """The reason a datagram carries; anything unrecognised is an operator command."""
    try:
        return WakeReason(payload.decode("ascii"))
    except ValueError:  # also UnicodeDecodeError
        return WakeReason.OPERATOR_COMMAND


def _is_own_dir(info: os.stat_result) -> bool:
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()


def _prepare_dir(directory: Path) -> None:
    """Create ``directory`` private to this user, or refuse one that is not ours."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = directory.lstat()  # lstat: a symlink planted in a shared temp dir is refused
    if not _is_own_dir(info):
        raise WakeDirError(f"wake directory {directory} is not a directory owned by this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(directory, 0o700)  # mkdir's mode is filtered by the umask


def _bind(directory: Path) -> tuple[socket.socket, Path]:
    path = directory / f"{os.getpid()}-{secrets.token_hex(4)}{_SUFFIX}"
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise WakeDirError(f"wake socket path {path} is too long for AF_UNIX; set a shorter TMPDIR")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    try:
        os.chmod(path, 0o600)
    except OSError:
        sock.close()
        path.unlink(missing_ok=True)
        raise
    return sock, path


def _listener_sockets(directory: Path) -> list[Path]:
    try:
        info = directory.lstat()
    except FileNotFoundError:
        return []
    if not _is_own_dir(info):
        return []  # never send wakes into (or clean up) someone else's directory
    return sorted(directory.glob(f"*{_SUFFIX}"))


def _send_one(sender: socket.socket, path: Path, payload: bytes) -> bool:
    try:
        sender.sendto(payload, str(path))
    except OSError as error:
        if error.errno in (errno.ECONNREFUSED, errno.ENOENT):  # its process is gone
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        return False
    return True


def _send_stop(path: Path) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
            sender.setblocking(False)
            sender.sendto(_STOP, str(path))
    except OSError:
        return False
    return True
