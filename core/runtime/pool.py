"""The engine's end of the pooled runners (``coven_core.runner.pool``; DESIGN §8).

A runner is forked once by the fork server and then takes attempts one after another; a thread
per runner reads its ``END`` lines and tells the runtime which attempt ended. The pool grows to
the number of attempts running at once (the scheduler's ``max_active``, a manual run beside
them) and a runner idle for ``idle_seconds`` is let go: its socket closed, it exits.

Handing an attempt over and noticing a runner's end take one lock, so an attempt is either
handed to a runner whose end will report it, or to none and the caller tries another: a runner
found dead before it was handed anything ran nothing, and its attempt goes elsewhere.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from coven_core.runtime.forkserver import ForkServer

#: How long a runner may wait for its next attempt before it is let go. Longer than a minute,
#: the finest schedule (``every 1m``), so a routine that runs each minute keeps its runner.
IDLE_SECONDS = 120.0


@dataclass(eq=False)
class PooledRunner:
    pid: int
    mark: float | None
    channel: socket.socket
    attempt_id: str | None = None  # the attempt it runs now
    dead: bool = False
    idle_since: float = field(default_factory=time.monotonic)


class RunnerPool:
    def __init__(
        self,
        server: ForkServer,
        ended: Callable[[str, str | None], None],
        mark_of: Callable[[int], float | None],
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        self._server, self._ended, self._mark_of = server, ended, mark_of
        self._idle_seconds = idle_seconds
        self._lock = threading.Lock()
        self._idle: list[PooledRunner] = []
        self._runners: set[PooledRunner] = set()
        self._closing = False

    def acquire(self) -> PooledRunner | None:
        """An idle runner, or a new one; None when none can be had (no fork server)."""
        with self._lock:
            if self._closing:
                return None
            if self._idle:
                return self._idle.pop()  # the most recently used: its pages are warm
        try:
            pid, channel = self._server.pool()
        except OSError:
            return None
        runner = PooledRunner(pid, self._mark_of(pid), channel)
        with self._lock:
            self._runners.add(runner)
        threading.Thread(target=self._follow, args=(runner,), daemon=True,
                         name=f"coven-pooled-runner-{pid}").start()  # fmt: skip
        return runner

    def run(self, runner: PooledRunner, attempt_id: str, directory: Path, spec: str) -> bool:
        """Hand ``runner`` the attempt (its directory, to be made, and its spec on one line);
        False when it is gone (it ran nothing)."""
        request = f"SPEC {spec}\nRUN {directory}\n".encode("utf-8", "surrogateescape")
        with self._lock:
            if runner.dead:
                return False
            try:
                runner.channel.sendall(request)  # a line into an empty buffer: never blocks
            except OSError:
                runner.dead = True
                return False
            runner.attempt_id = attempt_id
            return True

    def close(self) -> None:
        """Let every runner go: an idle one exits now, a busy one when its attempt is
        journaled (the next engine adopts it). No end is reported from here on."""
        with self._lock:
            self._closing = True
            runners, self._idle = list(self._runners), []
        for runner in runners:
            _shut(runner.channel)

    # -- in each runner's thread --------------------------------------------------------------
    def _follow(self, runner: PooledRunner) -> None:
        lines = _Lines(runner.channel)
        while True:
            line = lines.next(self._idle_left(runner))
            if line is None:
                break
            if line == "" and self._let_go_if_idle(runner):
                break
            if line.startswith("END "):
                status, _, why = line[4:].partition(" ")
                self._attempt_ended(runner, status, why)
        self._gone(runner)

    def _idle_left(self, runner: PooledRunner) -> float | None:
        with self._lock:
            if runner.attempt_id is not None or runner not in self._idle:
                return None  # busy (or acquired): its end will come by itself
            return max(0.0, runner.idle_since + self._idle_seconds - time.monotonic())

    def _let_go_if_idle(self, runner: PooledRunner) -> bool:
        with self._lock:
            idle = runner in self._idle
            if not idle or time.monotonic() - runner.idle_since < self._idle_seconds:
                return False
            self._idle.remove(runner)
            runner.dead = True
        return True

    def _attempt_ended(self, runner: PooledRunner, status: str, why: str) -> None:
        """``status`` as ``runner.main`` documents it: 0 journaled, 4 nothing started (``why``),
        anything else ends the runner."""
        with self._lock:
            attempt_id, runner.attempt_id = runner.attempt_id, None
            if status in ("0", "4") and not self._closing and not runner.dead:
                runner.idle_since = time.monotonic()
                self._idle.append(runner)
            closing = self._closing
        if attempt_id is not None and not closing:
            self._ended(attempt_id, why if status == "4" else None)

    def _gone(self, runner: PooledRunner) -> None:
        with self._lock:
            runner.dead = True
            attempt_id, runner.attempt_id = runner.attempt_id, None
            if runner in self._idle:
                self._idle.remove(runner)
            self._runners.discard(runner)
            closing = self._closing
        runner.channel.close()
        if attempt_id is not None and not closing:
            self._ended(attempt_id, None)  # it died with an attempt in hand: its journal decides


class _Lines:
    """Lines from a runner's socket: None at its end, '' when ``timeout`` passed first."""

    def __init__(self, channel: socket.socket) -> None:
        self._channel, self._buffer = channel, b""
        self._poll = select.poll()
        self._poll.register(channel.fileno(), select.POLLIN)

    def next(self, timeout: float | None) -> str | None:
        while b"\n" not in self._buffer:
            wait = None if timeout is None else max(0, round(timeout * 1000))
            if not self._poll.poll(wait):
                return ""
            try:
                chunk = self._channel.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", "replace")


def _shut(channel: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by its thread
        channel.shutdown(socket.SHUT_RDWR)
