"""One runner's life: journal its start, spawn the command, supervise it, journal its end.

A stop is a stop: SIGUSR1 (the engine's cancel) and SIGTERM, SIGINT or SIGHUP (someone stopping
the runner itself) all stop the command's whole group and record ``cancelled``. When the command
exits by itself, whatever it left in its process group is stopped too: an attempt is its process
group (as with systemd's ``KillMode=control-group``), so nothing of it outlives its record.

Exit status: 0 when an outcome was journaled (whatever the command did), 1 when the runner
itself failed (traceback in ``runner.log``; the engine sees a journal without an outcome),
2 for a bad invocation or spec, 3 when the attempt's journal already existed (a second runner
for one attempt must never run its command again), 4 when its directory or journal could not
be made (nothing ran; a pooled runner tells the engine why, ``runner.pool``).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import os
import signal
import sys
import time
from collections.abc import Callable
from types import FrameType

from coven_core.runner import process as proc
from coven_core.runner.journal import (
    VALIDATION,
    ExitRecord,
    JournalFile,
    fsync_directory,
    record,
    utc_now,
)
from coven_core.runner.spec import (
    CANCEL_FILE,
    JOURNAL_FILE,
    LOG_FILE,
    SPEC_FILE,
    STDERR_FILE,
    STDOUT_FILE,
    RunnerSpec,
    SpecError,
)
from coven_core.runner.stops import STOP_SIGNALS, let_stops_in
from coven_core.system import failpoints

EXIT_OUTCOME_JOURNALED = 0
EXIT_RUNNER_FAILED = 1
EXIT_USAGE = 2
EXIT_ALREADY_STARTED = 3
EXIT_NOT_STARTED = 4


class Ending(enum.Enum):
    EXITED = "exited"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"


def main(args: list[str]) -> int:
    if len(args) != 1 or not os.path.isdir(args[0]):
        print("usage: python -m coven_core.runner ATTEMPT_DIR", file=sys.stderr)
        return EXIT_USAGE
    return run_attempt(args[0])


def run_attempt(directory: str, wakeup: Wakeup | None = None, spec: str | None = None) -> int:
    """One attempt, start to journaled end; the exit status :func:`main` documents. With
    ``spec`` (a pooled runner's, sent by the engine) the runner makes the attempt's
    directory itself and reads no ``spec.json``."""
    return attempt_with_reason(directory, wakeup, spec)[0]


def attempt_with_reason(
    directory: str, wakeup: Wakeup | None = None, spec: str | None = None
) -> tuple[int, str]:
    """:func:`run_attempt`, and for EXIT_NOT_STARTED why nothing could start."""
    runner = Runner(directory, wakeup, spec)
    try:
        return runner.run(), runner.not_started
    except Exception:
        _log_failure(directory)
        return EXIT_RUNNER_FAILED, ""


class Wakeup:
    """Signals, including SIGCHLD for the command's exit, as bytes on a self-pipe, so one
    ``poll`` waits for the command, its output, a cancel and the timeout at once.

    ``fenced`` (a pooled runner, ``runner.pool``): SIGUSR1 stops the attempt only when its
    directory holds the cancel file, so a cancel that arrives late, after that attempt ended,
    cannot stop the next one. SIGTERM, SIGINT and SIGHUP stop the runner itself
    (``runner_stopped``): the attempt it runs, and any after it.
    """

    def __init__(self, *, fenced: bool = False) -> None:
        self.fd, write = os.pipe()
        os.set_blocking(self.fd, False)
        os.set_blocking(write, False)
        signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        for signum in (*STOP_SIGNALS, signal.SIGCHLD):
            signal.signal(signum, _wake)
        self.fenced = fenced
        self.stop_signal: int | None = None
        self.runner_stopped = False
        self._directory: str | None = None
        let_stops_in()  # held since the runner's birth (runner.stops): one sent already arrives

    def begin(self, directory: str) -> None:
        """A new attempt: what stopped the last one is forgotten; a cancel written for this
        one before it began is taken (its signal may have come while the last one ran)."""
        self._directory, self.stop_signal = directory, None
        if self.runner_stopped:
            self.stop_signal = signal.SIGTERM
        elif self._cancel_written():
            self.stop_signal = signal.SIGUSR1

    def end(self) -> None:
        self._directory = None

    def drain(self) -> None:
        while True:
            try:
                received = os.read(self.fd, 256)
            except BlockingIOError:
                return
            for signum in received:
                self._received(signum)

    def _received(self, signum: int) -> None:
        if signum not in STOP_SIGNALS:
            return
        if signum != signal.SIGUSR1:
            self.runner_stopped = True
        elif self.fenced and not self._cancel_written():
            return  # a cancel of an attempt this runner has already finished
        if self.stop_signal is None and self._directory is not None:
            self.stop_signal = signum

    def _cancel_written(self) -> bool:
        return self._directory is not None and os.path.exists(
            os.path.join(self._directory, CANCEL_FILE)
        )


def _wake(signum: int, frame: FrameType | None) -> None:
    """The byte on the wakeup pipe is the message; the handler only has to exist."""


class Runner:
    def __init__(
        self, directory: str, wakeup: Wakeup | None = None, spec: str | None = None
    ) -> None:
        self.directory = directory
        self._spec_text = spec  # sent by the engine (a pooled runner): no spec.json to read
        self.not_started = ""  # why, for EXIT_NOT_STARTED
        # First: a stop from now on is acknowledged, not fatal. A pooled runner's lasts.
        self.wakeup = wakeup or Wakeup()
        self.wakeup.begin(directory)
        self._journal_file: JournalFile | None = None  # made by _run, the first thing
        self._named = False  # whether the journal's name is durable yet (see _journal)

    def run(self) -> int:
        try:
            return self._run()
        finally:
            self.wakeup.end()  # a cancel arriving from now on is late: it stops nothing
            if self._journal_file is not None:
                self._journal_file.close()

    def _run(self) -> int:
        pid = os.getpid()
        me = _own_start(pid)
        started = record(
            "runner_started",
            runner_pid=pid,
            runner_start=me.time,
            runner_mark=me.mark,
            boot_id=proc.boot_id(),
        )
        try:
            # Not fsync'd: killed, the runner leaves it in the page cache, which recovery
            # reads ("nothing ran"); what a power cut may lose, see _start.
            if self._spec_text is not None:
                _make_directory(self.directory)  # the engine left it to us (runner.pool)
            self._journal_file = JournalFile(self._path(JOURNAL_FILE))
            self._journal_file.append(started, sync=False)
        except FileExistsError:
            print(f"{self.directory}: this attempt was already started", file=sys.stderr)
            return EXIT_ALREADY_STARTED
        except OSError as error:  # no journal, no command: certainly nothing ran
            self.not_started = f"cannot prepare {self.directory}: {error.strerror or error}"
            return EXIT_NOT_STARTED
        failpoints.hit("runner.started")
        try:
            spec = self._spec()
        except SpecError as error:
            self._journal("spawn_failed", failure_class=VALIDATION, message=str(error))
            return EXIT_USAGE
        self._attempt(spec)
        return EXIT_OUTCOME_JOURNALED

    def _spec(self) -> RunnerSpec:
        if self._spec_text is not None:
            return RunnerSpec.from_json(self._spec_text)
        return RunnerSpec.from_file(self._path(SPEC_FILE))

    def _attempt(self, spec: RunnerSpec) -> None:
        try:
            proc.check_cwd(spec)
        except proc.SpawnError as error:
            self._spawn_failed(error)
            return
        self._start(spec)

    def _start(self, spec: RunnerSpec) -> None:
        self.wakeup.drain()
        if self.wakeup.stop_signal is not None:
            self._cancelled_before_start()
            return
        # From here on, the command may have started. The intent is not waited onto the disk
        # (bench_dispatch: "dispatch against that floor"): a killed runner or engine leaves
        # it in the page cache, which every reader sees, and the page cache is lost only
        # with the boot. Recovery knows the boot the attempt was claimed in, and after a
        # restart of the machine it takes no journal short of an outcome as proof that
        # nothing ran (runtime.runner._journal_of). Where no boot can be named, nothing
        # could tell, so the intent is made durable first, as it always was.
        self._journal("intent", sync=not proc.boot_id())
        try:
            command = proc.spawn(spec)
        except proc.SpawnError as error:
            self._spawn_failed(error)
            return
        failpoints.hit("runner.spawn_unrecorded")
        try:
            self._supervise(spec, command)
        except BaseException:
            proc.kill_group(command.pid)
            raise
        finally:
            command.close()

    def _supervise(self, spec: RunnerSpec, command: proc.Command) -> None:
        streams = ((command.stdout, STDOUT_FILE), (command.stderr, STDERR_FILE))
        pipes = [(pipe, self._path(name)) for pipe, name in streams]
        pumps = proc.OutputPumps(pipes, spec.output_cap_bytes)
        try:
            self._follow(spec, command, pumps)
        finally:  # a pooled runner lives on: nothing of this attempt stays open in it
            pumps.close()

    def _follow(self, spec: RunnerSpec, command: proc.Command, pumps: proc.OutputPumps) -> None:
        pumps.wake_on(self.wakeup.fd)

        def wait(timeout: float | None) -> None:  # copying output, until a signal or timeout
            pumps.wait(timeout)
            self.wakeup.drain()

        spawned = proc.start_of(command.pid)
        # The journal's name is made durable while the command runs, off the exit's path;
        # the record itself reaches the disk with the exit's fsync (see _start).
        self._journal("spawned", sync=False, name=True,
                      pid=command.pid, pid_start=spawned.time, pid_mark=spawned.mark)  # fmt: skip
        failpoints.hit("runner.spawned")
        ending = self._await(spec, command, wait)
        if ending is Ending.CANCELLED:
            self._journal("cancel_acknowledged", signal=self.wakeup.stop_signal)
        elif ending is Ending.TIMED_OUT:
            self._journal("timeout")
        confirmed = proc.stop_group(command, spec.stop_grace_seconds, wait)
        out, err = pumps.finish(time.monotonic() + proc.PUMP_DRAIN_SECONDS)
        for capture, name in ((out, STDOUT_FILE), (err, STDERR_FILE)):
            if capture.error is not None:
                _log(self.directory, f"could not write {name}: {capture.error}")
        self._exited(command.returncode, ending, confirmed, out, err)

    def _await(
        self, spec: RunnerSpec, command: proc.Command, wait: Callable[[float | None], None]
    ) -> Ending:
        """Until the command exits, a stop signal arrives or the timeout passes. An exit seen
        together with a cancel wins: the command had already finished."""
        timeout = spec.timeout_seconds
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if command.poll() is not None:
                return Ending.EXITED
            if self.wakeup.stop_signal is not None:
                return Ending.CANCELLED
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return Ending.TIMED_OUT
            wait(remaining)

    def _exited(
        self,
        code: int | None,
        ending: Ending,
        confirmed: bool,
        out: proc.Capture,
        err: proc.Capture,
    ) -> None:
        signalled = code is not None and code < 0
        exit_record = ExitRecord(
            at=utc_now(),
            exit_code=None if signalled else code,
            signal=-code if code is not None and signalled else None,
            cancelled=ending is Ending.CANCELLED,
            timed_out=ending is Ending.TIMED_OUT,
            stop_confirmed=confirmed,
            stdout_bytes=out.kept_bytes,
            stderr_bytes=err.kept_bytes,
            stdout_truncated=out.truncated,
            stderr_truncated=err.truncated,
        )
        self._file().append(exit_record.to_record())

    def _cancelled_before_start(self) -> None:
        """Stopped before the intent: the command never ran, and the journal says so."""
        self._journal("cancel_acknowledged", signal=self.wakeup.stop_signal)
        nothing = proc.Capture(0, False)
        self._exited(None, Ending.CANCELLED, True, nothing, nothing)

    def _spawn_failed(self, error: proc.SpawnError) -> None:
        self._journal("spawn_failed", failure_class=error.failure_class, message=error.message)

    def _journal(
        self, event: str, *, sync: bool = True, name: bool = False, **fields: object
    ) -> None:
        """Append a record, fsync'd unless ``sync`` is False. The journal's own name is made
        durable (the directory fsync'd) with its first fsync'd record, or with this one if
        ``name`` asks for it, once."""
        self._file().append(record(event, **fields), sync=sync)
        if not self._named and (sync or name):
            fsync_directory(self.directory)
            self._named = True

    def _file(self) -> JournalFile:
        assert self._journal_file is not None, "the journal is made before anything is recorded"
        return self._journal_file

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name)


@functools.cache
def _own_start(pid: int) -> proc.Start:
    """This runner's start, read from ``/proc`` once per process: a pooled runner journals
    it for every attempt, and it never changes (a fork is another pid, so another key)."""
    return proc.start_of(pid)


def _make_directory(directory: str) -> None:
    """The attempt's directory, private; one made already (by a cancel that came first,
    ``runtime.runner.signal_cancel``) is the same directory."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, 0o700)


def _log_failure(directory: str) -> None:
    import traceback  # only on the failure path: startup time matters

    _log(directory, traceback.format_exc())


def _log(directory: str, message: str) -> None:
    """Best effort: ``runner.log`` is for people; the journal is the record."""
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        with os.fdopen(os.open(os.path.join(directory, LOG_FILE), flags, 0o600), "a") as log:
            log.write(f"{utc_now().isoformat()} {message.rstrip()}\n")
    except OSError:
        pass
