"""One instance per user and store: a second launch hands its arguments to the first, which
shows its window, and exits (DESIGN §12).

The first instance listens on a local socket whose name is derived from the data directory;
the socket lives in the runtime directory when there is one of ours (owned by this user, mode
0700), else inside the private data directory (PLATFORM_NOTES: ``XDG_RUNTIME_DIR`` may be
unset). Never in a shared directory, where another user could take the name first, and never
in the abstract namespace, which every local user can reach: a path too long for a socket is
shortened through :class:`~coven_core.engine.SocketDir`, as the engine's wake sockets
are. Where Python has no AF_UNIX (Windows, where routines do not run yet) there is no hand-over:
a second launch starts, and the store's lease keeps it standing by.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import stat
from contextlib import suppress
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from coven_core.engine import SocketDir

SUPPORTED = hasattr(socket, "AF_UNIX")
_TIMEOUT_S = 1.0
_MOST = 64 * 1024  # a launch's arguments as one JSON line; more is not a launch of ours


def server_name(data_dir: Path) -> str:
    """A full socket path, unique per user and store."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:12]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(runtime) if runtime and _is_private_dir(Path(runtime)) else data_dir
    return str(folder / f"coven-desktop-{digest}.sock")


def _is_private_dir(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    private = stat.S_IMODE(info.st_mode) & 0o077 == 0
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and private


def hand_over(name: str, arguments: list[str]) -> bool:
    """Give our arguments to a running instance; False if there is none."""
    if not SUPPORTED:
        return False
    path = Path(name)
    with SocketDir(path.parent) as folder, socket.socket(socket.AF_UNIX) as client:
        client.settimeout(_TIMEOUT_S)
        try:
            client.connect(folder.path(path.name))
            client.sendall(json.dumps(arguments).encode() + b"\n")
        except OSError:  # no socket, a stale one, or an instance that does not answer
            return False
    return True


class InstanceServer(QObject):
    """The first instance's end: emits ``activated`` with the later launch's arguments.

    A plain AF_UNIX socket followed by the app's event loop (qasync's readers), not Qt's
    ``QLocalServer``: QtNetwork is 3 MiB and 8 ms of the tray's start for one line per
    launch (bench_idle: "idle tray app: RSS", "launch to tray ready")."""

    activated = Signal(object)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._loop = asyncio.get_event_loop()
        self._received: dict[socket.socket, bytearray] = {}  # each client's line so far
        path = Path(name)
        self._folder = SocketDir(path.parent)  # open until close(), which removes the file
        self._address = self._folder.path(path.name)
        self._server = socket.socket(socket.AF_UNIX) if SUPPORTED else None
        if self._server is None:
            return  # nothing listens: see the module's docstring
        try:
            self._listen(self._server)
        except OSError as error:
            self._server.close()
            self._folder.close()
            raise OSError(f"cannot listen on {name}: {error.strerror or error}") from error
        self._loop.add_reader(self._server, self._accept, self._server)

    def _listen(self, server: socket.socket) -> None:
        with suppress(FileNotFoundError):
            os.unlink(self._address)  # a stale socket from a crashed instance
        server.bind(self._address)
        os.chmod(self._address, 0o600)  # a socket file's mode follows the umask
        server.listen()
        server.setblocking(False)

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _address = server.accept()
            except (BlockingIOError, InterruptedError):
                return
            client.setblocking(False)
            self._received[client] = bytearray()
            self._loop.add_reader(client, self._read, client)

    def _read(self, client: socket.socket) -> None:
        try:
            chunk = client.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        received = self._received[client]
        received += chunk
        line, newline, _rest = received.partition(b"\n")
        if newline or not chunk or len(received) > _MOST:
            self._forget(client)
            if newline:
                self.activated.emit(_arguments(bytes(line)))

    def _forget(self, client: socket.socket) -> None:
        del self._received[client]
        if not self._loop.is_closed():
            self._loop.remove_reader(client)
        client.close()

    def close(self) -> None:
        """Stop listening and remove the socket (also once the loop has closed)."""
        for client in list(self._received):
            self._forget(client)
        if self._server is not None:
            if not self._loop.is_closed():
                self._loop.remove_reader(self._server)
            self._server.close()
            with suppress(FileNotFoundError):
                os.unlink(self._address)
        self._folder.close()


def _arguments(line: bytes) -> list[str]:
    """A launch's arguments; anything but a JSON list of them is a launch without any."""
    try:
        arguments = json.loads(line.decode("utf-8", "replace"))
    except ValueError:
        return []
    return arguments if isinstance(arguments, list) else []
