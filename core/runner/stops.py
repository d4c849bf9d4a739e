"""The stop signals a runner answers, and how a runner is born holding them.

A runner learns to answer SIGUSR1 (the engine's cancel), SIGTERM, SIGINT and SIGHUP only once
its :class:`~coven_core.runner.main.Wakeup` exists. Before that a stop signal takes its
default action and kills it without a journal: a run nobody can know the outcome of. So a
runner is started with these signals *held* (blocked; a sent one waits, pending) and lets them
in once it can answer them — a cancel sent the instant the engine knows its pid is a cancel.
The signal mask is inherited across fork and exec, which is what carries the hold into it.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

STOP_SIGNALS = frozenset({signal.SIGUSR1, signal.SIGTERM, signal.SIGINT, signal.SIGHUP})


def fork_holding_stops() -> int:
    """``os.fork()``; the child keeps the stop signals held, the parent's mask is restored."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        raise
    if pid != 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    return pid


@contextlib.contextmanager
def holding_stops() -> Iterator[None]:
    """Processes started (fork and exec) inside are born holding the stop signals; this thread
    holds them only meanwhile (one that arrives waits until the end of the block)."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def let_stops_in() -> None:
    """The runner can answer them now: a stop held since its birth arrives."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
