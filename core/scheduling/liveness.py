"""Knowing at once that the leader is gone, without polling.

The leader holds an exclusive ``flock`` on a file in the data directory for as long as it
lives; the kernel drops the lock when the process ends, however it ends. A standby keeps one
thread blocked on that lock and, the moment it is granted, wakes its scheduler, whose next
pass finds the holder gone (pid and start time) and takes the lease over. The lock is only a
prompt: correctness rests on the lease generation, never on the lock.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from coven_core.clock import WakeReason, WakeSignal

try:
    import fcntl
except ImportError:  # Windows: standbys fall back to the lease expiry
    fcntl = None  # type: ignore[assignment]


class LeaderLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._held: int | None = None
        self._watcher: threading.Thread | None = None

    def hold(self) -> bool:
        """Take the lock without waiting (on becoming leader); True if this process has it."""
        if fcntl is None or self._held is not None:
            return self._held is not None
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            return False
        self._held = descriptor
        return True

    def release(self) -> None:
        if self._held is not None:
            os.close(self._held)  # closing the descriptor drops the flock
            self._held = None

    def watch(self, wake: WakeSignal) -> None:
        """As a standby: wake the scheduler the moment the leader's lock is dropped."""
        if fcntl is None or self._held is not None or self.watching:
            return
        self._watcher = threading.Thread(
            target=self._wait_for_leader, args=(wake,), name="coven-leader-watch", daemon=True
        )
        self._watcher.start()

    @property
    def watching(self) -> bool:
        return self._watcher is not None and self._watcher.is_alive()

    def _wait_for_leader(self, wake: WakeSignal) -> None:
        assert fcntl is not None
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)  # blocks until the leader's lock is dropped
        finally:
            os.close(descriptor)  # let our own scheduler take it on its next pass
        wake.set(WakeReason.LEADER_GONE)
