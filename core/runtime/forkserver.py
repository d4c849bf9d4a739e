"""The engine's end of the runner fork server (``coven_core.runner.server``).

One request at a time over a socket pair; the server is started lazily and restarted if it
dies. It forks a runner per attempt (:meth:`ForkServer.spawn`) or a pooled runner that takes
attempts one after another from a socket of its own (:meth:`ForkServer.pool`). When it cannot
be had, both raise and the runtime falls back to a fresh interpreter per runner — slower,
never less safe.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import BinaryIO


def server_command() -> list[str]:
    if getattr(sys, "frozen", False):
        return [sys.executable, "--coven-runner-server"]
    return [sys.executable, "-m", "coven_core.runner.server"]


class ForkServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._socket: socket.socket | None = None
        self._reader: BinaryIO | None = None

    def spawn(self, directory: Path) -> int:
        """Start a runner for ``directory``; its pid. Raises OSError when it cannot."""
        with self._lock:
            for _ in range(2):  # one restart if the server had died
                reply = self._ask(f"RUN {directory}\n")
                if reply.startswith("PID "):
                    return int(reply.split()[1])
                if reply.startswith("ERR "):
                    raise OSError(reply[4:])
            raise OSError("the runner fork server is not answering")

    def pool(self) -> tuple[int, socket.socket]:
        """A pooled runner (``coven_core.runner.pool``): its pid and our end of its socket.
        Raises OSError when it cannot be had."""
        with self._lock:
            for _ in range(2):  # one restart if the server had died
                ours, theirs = socket.socketpair()
                with theirs:
                    reply = self._ask("POOL\n", theirs.fileno())
                if reply.startswith("PID "):
                    return int(reply.split()[1]), ours
                ours.close()
                if reply.startswith("ERR "):
                    raise OSError(reply[4:])
            raise OSError("the runner fork server is not answering")

    def _ask(self, request: str, fd: int | None = None) -> str:
        try:
            self._ensure()
            assert self._socket is not None and self._reader is not None
            if fd is None:
                self._socket.sendall(request.encode())
            else:  # one line: the server reads the descriptor with the line's bytes
                socket.send_fds(self._socket, [request.encode()], [fd])
            reply = self._reader.readline().decode()
        except OSError:
            reply = ""
        if not reply:
            self._reset()
        return reply.rstrip("\n")

    def _ensure(self) -> None:
        if self._process is not None and self._process.poll() is None:
            return
        self._reset()  # a server that died left its end of the old socket with us
        ours, theirs = socket.socketpair()
        with theirs:
            try:
                self._process = subprocess.Popen(
                    [*server_command(), str(theirs.fileno())], pass_fds=[theirs.fileno()],
                    start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
            except BaseException:
                ours.close()
                raise
        self._socket, self._reader = ours, ours.makefile("rb")

    def _reset(self) -> None:
        if self._reader is not None:
            self._reader.close()
        if self._socket is not None:
            self._socket.close()
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._process = self._socket = self._reader = None

    def close(self) -> None:
        """Closing our end makes the server exit; runners it started are unaffected."""
        with self._lock:
            if self._reader is not None:
                self._reader.close()  # the file object holds the socket open too
            if self._socket is not None:
                self._socket.close()
            if self._process is not None:
                self._process.wait(timeout=5)
            self._process = self._socket = self._reader = None
