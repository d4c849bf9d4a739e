"""AF_UNIX socket paths inside a private directory, however long its path (DESIGN §13).

A socket's address is limited to about 100 bytes (``sun_path``: 104 on macOS, 108 on Linux),
and a data directory's path can be longer. Moving the socket to a shared place (``/tmp``)
under a name anyone can compute lets another user create that name first and stop Coven from
starting, and an abstract socket (Linux) is reachable by every local user. So sockets stay in
the private directory, where only its owner can reach them, and a long path is shortened
instead: an open descriptor of the directory reaches the same files as
``/proc/self/fd/<n>/<name>``, which the kernel resolves for ``bind``, ``connect`` and
``sendto`` like any path. Every process opens its own descriptor, so the short path differs
per process but names the same file. Without ``/proc`` (macOS), a directory whose path is too
long is refused with a message naming the limit.
"""

from __future__ import annotations

import os
from pathlib import Path

from coven_core.errors import CovenError

#: The longest socket path we bind: below macOS's 104-byte ``sun_path`` (Linux allows 108).
MAX_SOCKET_PATH = 100
_PROC_FD = Path("/proc/self/fd")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


class SocketPathTooLong(CovenError):
    """A socket in this directory cannot be addressed on this platform."""


class SocketDir:
    """A directory's sockets, addressed by paths short enough for AF_UNIX.

    Use as a ``with`` block or :meth:`close` it: a long directory is reached through an open
    descriptor, which must stay open for as long as the short paths are used.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._fd: int | None = None
        self._prefix = os.fsdecode(directory)

    def path(self, name: str) -> str:
        """The address of ``name`` in the directory; :class:`SocketPathTooLong` if none fits."""
        direct = os.path.join(self._prefix, name)
        if len(os.fsencode(direct)) <= MAX_SOCKET_PATH:
            return direct
        if self._fd is None:
            self._open()
        short = f"{_PROC_FD}/{self._fd}/{name}"
        if len(os.fsencode(short)) > MAX_SOCKET_PATH:
            raise SocketPathTooLong(f"socket name {name!r} is too long for AF_UNIX")
        return short

    def _open(self) -> None:
        if not _PROC_FD.is_dir():
            raise SocketPathTooLong(
                f"the path {self.directory} is too long for a local socket here "
                f"(at most {MAX_SOCKET_PATH} bytes); choose a data directory with a shorter path"
            )
        self._fd = os.open(self.directory, _DIR_FLAGS)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> SocketDir:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
