"""One instance per user and store: a second launch hands its arguments to the first, which
shows its window, and exits (DESIGN §12).

The first instance listens on a local socket whose name is derived from the data directory;
the socket lives in the runtime directory when there is one of ours (owned by this user, mode
0700), else inside the private data directory (PLATFORM_NOTES: ``XDG_RUNTIME_DIR`` may be
unset). Never in a shared directory, where another user could take the name first, and never
in the abstract namespace, which every local user can reach: a path too long for a socket is
shortened through :class:`~coven_core.engine.SocketDir`, as the engine's wake sockets
are.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from coven_core.engine import SocketDir

_TIMEOUT_MS = 1000


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
    socket = QLocalSocket()
    path = Path(name)
    with SocketDir(path.parent) as folder:
        socket.connectToServer(folder.path(path.name))
        if not socket.waitForConnected(_TIMEOUT_MS):
            return False
    socket.write(json.dumps(arguments).encode() + b"\n")
    socket.waitForBytesWritten(_TIMEOUT_MS)
    socket.disconnectFromServer()
    return True


class InstanceServer(QObject):
    """The first instance's end: emits ``activated`` with the later launch's arguments."""

    activated = Signal(object)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._server = QLocalServer(self)
        self._sockets: list[QLocalSocket] = []
        self._server.newConnection.connect(self._accept)
        path = Path(name)
        self._folder = SocketDir(path.parent)  # open until close(): Qt removes the file then
        address = self._folder.path(path.name)
        QLocalServer.removeServer(address)  # a stale socket from a crashed instance
        if not self._server.listen(address):
            self._folder.close()
            raise OSError(f"cannot listen on {name}: {self._server.errorString()}")
        os.chmod(address, 0o600)  # a socket file's mode follows the umask

    def _accept(self) -> None:
        while (socket := self._server.nextPendingConnection()) is not None:
            self._sockets.append(socket)
            socket.readyRead.connect(self._read_ready)

    def _read_ready(self) -> None:
        for socket in list(self._sockets):
            if socket.canReadLine():
                self._read(socket)
                self._sockets.remove(socket)
                socket.abort()

    def _read(self, socket: QLocalSocket) -> None:
        line = bytes(socket.readLine().data()).decode("utf-8", "replace")
        try:
            arguments = json.loads(line)
        except ValueError:
            arguments = []
        self.activated.emit(arguments if isinstance(arguments, list) else [])

    def close(self) -> None:
        for socket in self._sockets:
            socket.abort()
        self._sockets.clear()
        self._server.close()
        self._folder.close()
