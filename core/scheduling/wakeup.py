"""Waking a scheduler in another process at once (DESIGN §3).

The scheduler never polls, so a change made elsewhere (the ``coven`` CLI while the daemon or
the tray app runs) must be pushed to it. Each scheduler process starts a :class:`WakeListener`:
an AF_UNIX datagram socket in the store's wake directory, read by one daemon thread that blocks
in ``recv`` and sets the scheduler's :class:`~coven_core.clock.WakeSignal`. :func:`notify`
sends one datagram, the reason's ``.value`` in ASCII, to every socket there.

A wake is best-effort: a lost datagram only delays work until the scheduler's safety cap.
So :func:`notify` never raises, and removes the sockets of processes that died without closing.

Where AF_UNIX datagrams are missing (Windows) cross-process wakes are not yet supported: the
listener does nothing and :func:`notify` reaches no one (see :data:`SUPPORTED`).

The sockets always live in the store's own wake directory (0700, inside the private data
directory), so only their owner can reach them, never in a shared temp directory under a name
another user could take first; a long path is shortened through
:class:`~coven_core.system.socketpath.SocketDir`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import socket
import stat
import sys
import threading
from pathlib import Path
from types import TracebackType

from coven_core.clock import WakeReason, WakeSignal
from coven_core.errors import CovenError
from coven_core.system.socketpath import MAX_SOCKET_PATH, SocketDir, SocketPathTooLong

__all__ = ["MAX_SOCKET_PATH", "SUPPORTED", "WakeDirError", "WakeListener", "notify", "socket_dir"]

#: Whether wakes can cross processes here. Elsewhere listeners are inert and notify returns 0.
SUPPORTED = sys.platform != "win32" and hasattr(socket, "AF_UNIX")

_SUFFIX = ".sock"
_STOP = b"__stop__"  # what close() sends itself; any datagram ends the thread once closing
_MAX_PAYLOAD = 64
_JOIN_TIMEOUT = 5.0


class WakeDirError(CovenError):
    """The wake directory cannot be used: someone else's, not a directory, or too long a path."""


def socket_dir(wake_dir: Path) -> Path:
    """The directory where the sockets for ``wake_dir`` live: itself, resolved, whatever the
    length of its path."""
    return wake_dir.resolve()


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
        with SocketDir(sockets[0].parent) as folder, _sender() as sender:
            payload = reason.value.encode("ascii")
            return sum(_send_one(sender, folder, path, payload) for path in sockets)
    except (OSError, RuntimeError, SocketPathTooLong):  # RuntimeError: a symlink loop
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
    name = f"{os.getpid()}-{secrets.token_hex(4)}{_SUFFIX}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    with SocketDir(directory) as folder:
        try:
            sock.bind(folder.path(name))
        except SocketPathTooLong as error:
            sock.close()
            raise WakeDirError(str(error)) from None
        except OSError:
            sock.close()
            raise
    path = directory / name
    try:
        os.chmod(path, 0o600)  # a socket file's mode follows the umask
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


def _sender() -> socket.socket:
    sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sender.setblocking(False)
    return sender


def _send_one(sender: socket.socket, folder: SocketDir, path: Path, payload: bytes) -> bool:
    try:
        sender.sendto(payload, folder.path(path.name))
    except OSError as error:
        if error.errno in (errno.ECONNREFUSED, errno.ENOENT):  # its process is gone
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        return False
    return True


def _send_stop(path: Path) -> bool:
    try:
        with SocketDir(path.parent) as folder, _sender() as sender:
            sender.sendto(_STOP, folder.path(path.name))
    except (OSError, SocketPathTooLong):
        return False
    return True
