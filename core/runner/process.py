"""The command as processes: spawn it in its own group, pump its output, stop the whole group.

Process identity is a pid *and* its start mark, never a pid alone (see :func:`start_mark`).

psutil is imported where it is needed, not here: the fork server has this module loaded and
each runner is a fork of it, so every module in the server is address space that each fork
copies the page tables of, writes into and tears down again — psutil (with what only it
loads) was ~0.7 MB of the server's 9.4 MB of private memory, and a runner on Linux needs it
only when its command leaves processes behind (or its start time cannot be read from /proc).
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from coven_core.runner.journal import (
    REFUSED,
    RUNTIME_UNAVAILABLE,
    VALIDATION,
    Journal,
    fsync_directory,
    write_all,
)
from coven_core.runner.spec import RunnerSpec

if TYPE_CHECKING:
    from subprocess import Popen

#: How long the group may take to vanish after SIGKILL before the stop counts as unconfirmed.
KILL_CONFIRM_SECONDS = 5.0
#: How long to wait for the output pipes to close once the group is gone (a process that left
#: the group, e.g. with setsid, may still hold them).
PUMP_DRAIN_SECONDS = 2.0
#: Tolerance when comparing start times since the epoch. psutil adds the boot time, which Linux
#: reports in whole seconds recomputed from the wall clock, so NTP slewing can move a start time
#: by a second (and a clock step by any amount: hence marks, see :func:`start_mark`).
START_TIME_TOLERANCE = 1.5
#: Tolerance when comparing marks since boot: both read the same clock ticks, so they agree
#: exactly; this only absorbs the float's rounding where a mark went through text (a token).
MARK_TOLERANCE = 0.005
#: Marks below this are seconds since boot; above it, seconds since the epoch (a start recorded
#: before marks existed, or one from a system whose creation times never move). No machine has
#: been up for 31 years, and no process started before 2001.
_EPOCH_FLOOR = 1e9

_CHUNK = 64 * 1024
_OUTPUT_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
_POLL_CEILING = 0.02
# The command's own fault: retrying the same argv cannot help.
_VALIDATION_ERRNOS = {errno.ENOENT, errno.ENOTDIR, errno.ENOEXEC, errno.E2BIG, errno.ELOOP}
_VALIDATION_ERRNOS |= {errno.ENAMETOOLONG}
_REFUSED_ERRNOS = {errno.EACCES, errno.EPERM}
# What Popen's restore_signals resets for the command: Python itself ignores them.
_DEFAULT_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, name)
)


class SpawnError(Exception):
    """Nothing was started."""

    def __init__(self, failure_class: str, message: str) -> None:
        super().__init__(message)
        self.failure_class, self.message = failure_class, message


class Capture(NamedTuple):
    kept_bytes: int
    truncated: bool
    error: str | None = None  # the output file could not be written


def check_cwd(spec: RunnerSpec) -> None:
    """Raise SpawnError (validation) for a missing working directory, before any intent."""
    if spec.cwd is not None and not os.path.isdir(spec.cwd):
        raise SpawnError(VALIDATION, f"working directory {spec.cwd} does not exist")


class Command:
    """The spawned command: its pid (also its process group's id), the read ends of its
    output pipes, and its status once reaped (``returncode`` as :class:`subprocess.Popen`
    has it: negative for a signal)."""

    def __init__(
        self, pid: int, stdout: int, stderr: int, popen: Popen[bytes] | None = None
    ) -> None:
        self.pid, self.stdout, self.stderr = pid, stdout, stderr
        self.returncode: int | None = None
        self._popen = popen  # the fallback's object reaps its own child

    def close(self) -> None:
        """Close our ends of its output pipes (a pooled runner must not collect them)."""
        if self._popen is not None:
            for pipe in (self._popen.stdout, self._popen.stderr):
                if pipe is not None:
                    pipe.close()
            return
        for fd in (self.stdout, self.stderr):
            os.close(fd)

    def poll(self) -> int | None:
        """Reap the command if it has exited (never blocks)."""
        if self.returncode is None:
            self.returncode = self._popen.poll() if self._popen else self._reap()
        return self.returncode

    def _reap(self) -> int | None:
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return 0  # as Popen: the status is lost (SIGCHLD ignored), not the process
        return os.waitstatus_to_exitcode(status) if pid else None


#: Every command's environment names its attempt. A runner killed between the spawn and the
#: journal's record of it leaves a command that no recorded pid names; this finds it
#: (:func:`tagged`), so no decision is taken while it runs (DESIGN §8). Set last: a routine's
#: own environment cannot hide it.
ATTEMPT_VARIABLE = "COVEN_ATTEMPT_ID"


def spawn(spec: RunnerSpec) -> Command:
    """Start the command in a new process group (pgid = its pid), output to pipes.

    ``posix_spawn`` where it reports exec errors and no working directory is asked for:
    ``subprocess.Popen`` cost a forked runner more CPU (its Python-side set-up;
    bench_dispatch's row "dispatch against that floor" shows it). The fallback is Popen.
    """
    env = {**_inherited_environment(), **dict(spec.env), ATTEMPT_VARIABLE: spec.attempt_id}
    try:
        if spec.cwd is None and _POSIX_SPAWN_REPORTS_EXEC_ERRORS:
            return _posix_spawn(spec.command, env)
        # Only here: subprocess loads threading, whose after-fork hook every forked runner
        # would run (CPU, mostly page copies, that bench_dispatch's "dispatch against that
        # floor" row counts).
        import subprocess

        popen = subprocess.Popen(
            spec.command, cwd=spec.cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, process_group=0,
        )  # fmt: skip
    except OSError as error:
        raise SpawnError(_classify(error), f"{spec.command[0]}: {error.strerror}") from None
    assert popen.stdout is not None and popen.stderr is not None
    return Command(popen.pid, popen.stdout.fileno(), popen.stderr.fileno(), popen)


@cache
def _inherited_environment() -> dict[str, str]:
    """The runner's own environment, which nothing in it changes: read once per process
    (``os.environ`` decodes every name and value at each reading, for every attempt of a
    pooled runner; bench_dispatch's "dispatch against that floor")."""
    return dict(os.environ)


def _posix_spawn_reports_exec_errors() -> bool:
    """glibc 2.24 and later report a failed exec as posix_spawn's error (as subprocess
    checks before it uses posix_spawn itself); elsewhere a failed exec is only an exit 127."""
    if sys.platform != "linux" or not hasattr(os, "posix_spawn"):
        return False
    try:
        libc, version = os.confstr("CS_GNU_LIBC_VERSION").split(maxsplit=1)  # type: ignore[union-attr]
        return libc == "glibc" and tuple(map(int, version.split(".")[:2])) >= (2, 24)
    except (AttributeError, OSError, ValueError):
        return False


_POSIX_SPAWN_REPORTS_EXEC_ERRORS = _posix_spawn_reports_exec_errors()


def _posix_spawn(argv: list[str], env: Mapping[str, str]) -> Command:
    """What Popen does for us, by posix_spawn: stdin from /dev/null, stdout and stderr to
    pipes, a new process group, SIGPIPE and SIGXFSZ back to their defaults (Python ignores
    them), no descriptor of ours inherited, and the executable searched along the PATH of
    the command's environment, reporting the first error that is not "no such file"."""
    (out_read, out_write), (err_read, err_write) = os.pipe(), os.pipe()
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out_write, 1),
        (os.POSIX_SPAWN_DUP2, err_write, 2),
        *((os.POSIX_SPAWN_CLOSE, fd) for fd in _inheritable_fds()),
    ]
    try:
        pid = _spawn_first(_executables(argv[0], env), argv, env, actions)
    except BaseException:
        os.close(out_read)
        os.close(err_read)
        raise
    finally:
        os.close(out_write)
        os.close(err_write)
    return Command(pid, out_read, err_read)


def _executables(program: str, env: Mapping[str, str]) -> list[str]:
    if os.path.dirname(program):
        return [program]
    return [os.path.join(folder, program) for folder in os.get_exec_path(env)]


def _spawn_first(
    candidates: list[str], argv: list[str], env: Mapping[str, str], actions: list[Any]
) -> int:
    first: OSError | None = None
    last: OSError = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    for path in candidates:
        try:
            return os.posix_spawn(
                path, argv, env, file_actions=actions, setpgroup=0, setsigdef=_DEFAULT_SIGNALS
            )
        except (FileNotFoundError, NotADirectoryError) as error:
            last = error
        except OSError as error:
            first, last = first or error, error
    raise first or last


def _inheritable_fds() -> list[int]:
    """Descriptors above 2 an exec would pass on (ours are all close-on-exec; Popen closes
    any others, and so do we)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return []
    fds = [int(name) for name in names if int(name) > 2]
    return [fd for fd in fds if _is_inheritable(fd)]


def _is_inheritable(fd: int) -> bool:
    try:
        return os.get_inheritable(fd)
    except OSError:  # the descriptor listdir itself had open
        return False


def _classify(error: OSError) -> str:
    if error.errno in _VALIDATION_ERRNOS:
        return VALIDATION
    if error.errno in _REFUSED_ERRNOS:
        return REFUSED
    return RUNTIME_UNAVAILABLE


class OutputPumps:
    """Copies each of the command's output pipes into its file up to ``cap`` bytes, and keeps
    draining (discarding) past it, so the command never blocks on a full pipe.

    A file is made when its first byte arrives: a command that prints nothing leaves none,
    and "no file" reads as "nothing written" everywhere. Two file creations before every
    spawn were a runner's slowest step on a slow disk (bench_apscheduler's notes, "Output
    files made with their first byte"); the names of those that were made become durable in
    :meth:`finish`, before the exit is journaled.

    In the runner's own thread, inside its waits (:meth:`wait` instead of a sleep or a bare
    ``poll``): a thread per pipe cost each forked runner a tenth of its own CPU
    (bench_dispatch's row "dispatch against that floor")."""

    def __init__(self, pipes: Sequence[tuple[int, str]], cap: int) -> None:
        self._poll = select.poll()
        self._pipes = {source: _Kept(path, cap) for source, path in pipes}
        self._open = set(self._pipes)
        for source in self._pipes:
            self._poll.register(source, select.POLLIN)
        self._woken_by: set[int] = set()

    def wake_on(self, fd: int) -> None:
        """Let ``fd`` becoming readable end a :meth:`wait` (the runner's signal pipe)."""
        self._poll.register(fd, select.POLLIN)
        self._woken_by.add(fd)

    def wait(self, timeout: float | None) -> None:
        """Copy what arrives until a :meth:`wake_on` descriptor is readable, a pipe ends or
        ``timeout`` seconds (None: no limit) have passed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = self._poll.poll(None if left is None else math.ceil(left * 1000))
            if self._copy(ready) or (deadline is not None and time.monotonic() >= deadline):
                return

    def finish(self, deadline: float) -> list[Capture]:
        """Copy until every pipe's end of file (or ``deadline``, monotonic), then make what was
        kept durable: each file, and the folder for their names. A pipe still open then
        (someone who left the group holds it) is truncated: what arrives later is not part of
        the attempt's record."""
        for fd in self._woken_by:
            self._poll.unregister(fd)
        self._woken_by.clear()
        while self._open and (left := deadline - time.monotonic()) > 0:
            self.wait(left)
        kept = [output for output in self._pipes.values() if output.written]
        for output in kept:
            output.sync()
        if kept:  # made after the folder's fsync at the spawn: their names need one too
            fsync_directory(os.path.dirname(kept[0].path))
        return [output.capture(truncated=source in self._open)
                for source, output in self._pipes.items()]  # fmt: skip

    def close(self) -> None:
        """Close the files made (a pooled runner lives on: nothing of an attempt stays)."""
        for output in self._pipes.values():
            output.close()

    def _copy(self, ready: list[tuple[int, int]]) -> bool:
        """Copy from the pipes that are ready; whether a wait should end: a wake-on
        descriptor was ready too, or a pipe reached its end (:meth:`finish` waits for that)."""
        ended = False
        for fd, _ in ready:
            ended |= fd in self._woken_by or not self._read(fd)
        return ended

    def _read(self, source: int) -> bool:
        """One chunk; False at end of file."""
        chunk = os.read(source, _CHUNK)
        if chunk:
            self._pipes[source].keep(chunk)
            return True
        self._poll.unregister(source)
        self._open.discard(source)
        return False


class _Kept:
    """What one output file kept of its pipe; the file is made with the first byte kept."""

    def __init__(self, path: str, cap: int) -> None:
        self.path, self._cap = path, cap
        self._target: int | None = None
        self._kept, self._truncated = 0, False
        self._error: str | None = None

    def keep(self, chunk: bytes) -> None:
        room = self._cap - self._kept
        if len(chunk) > room:
            self._truncated, chunk = True, chunk[:room]
        if not chunk or self._error is not None:
            return
        try:
            if self._target is None:
                self._target = os.open(self.path, _OUTPUT_FLAGS, 0o600)  # private, as the rest
            write_all(self._target, chunk)
            self._kept += len(chunk)
        except OSError as error:  # e.g. a full disk: keep draining, record the loss
            self._error, self._truncated = str(error), True

    @property
    def written(self) -> bool:
        return self._kept > 0

    def sync(self) -> None:
        if self._target is not None:
            os.fsync(self._target)

    def close(self) -> None:
        if self._target is not None:
            os.close(self._target)
            self._target = None

    def capture(self, *, truncated: bool) -> Capture:
        return Capture(self._kept, self._truncated or truncated, self._error)


def stop_group(process: Command, grace: float, wait: Callable[[float], None] = time.sleep) -> bool:
    """Stop everything in the command's group: SIGTERM, then SIGKILL after ``grace`` seconds.

    Returns whether the group was confirmed gone. A group that is already gone gets no signal.
    ``wait`` passes the time between checks (the runner's copies the command's output).
    """
    pgid = process.pid
    for sig, patience in ((signal.SIGTERM, grace), (signal.SIGKILL, KILL_CONFIRM_SECONDS)):
        if _wait_gone(process, 0.0, wait):
            return True
        _signal_group(pgid, sig)
        if _wait_gone(process, patience, wait):
            return True
    return False


def kill_group(pgid: int) -> None:
    """Last resort when the runner itself fails: the command must not run on unsupervised."""
    _signal_group(pgid, signal.SIGKILL)


def end_group(pgid: int, grace: float) -> signal.Signals | None:
    """Stop a process group whose leader is not our child (its runner is gone): SIGTERM, then
    SIGKILL after ``grace`` seconds if anything of it is left. The signal after which nothing
    of it was left; None if something still was (looked for every 50 ms: nothing tells us
    when the last of a group ends)."""
    for sig, patience in ((signal.SIGTERM, grace), (signal.SIGKILL, KILL_CONFIRM_SECONDS)):
        _signal_group(pgid, sig)
        deadline = time.monotonic() + patience
        while not group_gone(pgid):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)  # real time: other processes end on their own time
        else:
            return sig
    return None


def group_of(pid: int) -> int:
    """The process's group: a command's own pid (its runner made it a group's leader), not
    for a process its tag found that the command started."""
    try:
        return os.getpgid(pid)
    except OSError:  # gone: its group, if anything is left of it, has its id
        return pid


def _signal_group(pgid: int, sig: int) -> None:
    # EPERM: no member may be signalled by us (one turned setuid); the group then stays, and
    # the stop goes unconfirmed rather than crashing the runner.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _wait_gone(process: Command, patience: float, wait: Callable[[float], None]) -> bool:
    """Reap the leader and poll for the group's end (nothing notifies us of a grandchild's)."""
    deadline, pause = time.monotonic() + patience, 0.001
    while True:
        leader_reaped = process.poll() is not None
        if group_gone(process.pid, leader_reaped):
            return True
        if time.monotonic() >= deadline:
            return False
        wait(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, _POLL_CEILING)


def group_gone(pgid: int, leader_reaped: bool = True) -> bool:
    """No process of the group is left, or only zombies (dead, waiting for a parent to reap
    them: where the reaper of orphans does not reap, they would otherwise linger forever)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return leader_reaped and _only_zombies(pgid)


def _only_zombies(pgid: int) -> bool:
    import psutil  # see the module's docstring

    for pid in psutil.pids():
        try:
            if os.getpgid(pid) == pgid and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return False
        except (ProcessLookupError, psutil.NoSuchProcess):
            continue  # ended while we looked
        except psutil.AccessDenied:
            return False  # a member we cannot see into is not proven dead
    return True


class Start(NamedTuple):
    time: float  # since the epoch, as psutil computes it: for people
    mark: float  # what identifies the process (see start_mark)


def start_of(pid: int) -> Start:
    """The process's start time and mark from one reading of ``/proc/PID/stat``.

    On Linux, psutil's own formula applied directly (``starttime`` in clock ticks, plus
    ``btime`` of ``/proc/stat``): a forked runner asks for itself and its command, and
    psutil's first call in a fresh fork cost more than twice the reads (bench_dispatch's row
    "dispatch against that floor")."""
    if _CLOCK_TICKS:
        try:
            since_boot = _since_boot(pid)
            return Start(since_boot + _boot_time(), since_boot)
        except (OSError, ValueError, IndexError):
            pass  # gone, or /proc unlike Linux's: psutil decides (NoSuchProcess)
    import psutil  # see the module's docstring

    created = float(psutil.Process(pid).create_time())
    return Start(created, created)


def start_time(pid: int) -> float:
    """The process's start time since the epoch, as psutil computes it: for people."""
    return start_of(pid).time


def tagged(attempt_id: str) -> dict[int, Start]:
    """The live processes whose environment names the attempt (:data:`ATTEMPT_VARIABLE`), with
    their starts: its command, and what the command started that kept its environment.
    Another user's processes cannot be read, and are not this user's commands. Every process
    is looked at, so this is asked only where no recorded pid can answer."""
    import psutil  # as in the rest of this module: only where it is needed

    found: dict[int, Start] = {}
    for process in psutil.process_iter():
        try:
            if process.environ().get(ATTEMPT_VARIABLE) != attempt_id:
                continue
            if process.status() != psutil.STATUS_ZOMBIE:
                found[process.pid] = start_of(process.pid)
        except psutil.Error:  # gone meanwhile, or not ours to read
            continue
    return found


def unrecorded_commands(journal: Journal | None, attempt_id: str) -> dict[int, Start]:
    """The attempt's live commands that no recorded pid names, found by their tag: looked
    for only when its journal holds the intent to spawn and nothing after it, the one case
    where a command may run that nothing else names."""
    if journal is None or not journal.spawn_unrecorded:
        return {}
    return tagged(attempt_id)


def start_mark(pid: int) -> float:
    """What tells this process from any other that had or will have its pid: its start.

    Linux derives a start time since the epoch from the current boot time, which it recomputes
    from the wall clock, so a clock step (NTP, a VM paused and resumed) moves every live
    process's start time by the step, and a live holder looked gone (the soak, issue #18). The
    mark is the start in seconds since boot instead, which no clock step moves; with the boot's
    id beside it (:func:`boot_id`) it names one process. Elsewhere the system's creation time is
    recorded once and never moves, so the mark is that (seconds since the epoch)."""
    if _CLOCK_TICKS:
        try:
            return _since_boot(pid)
        except (OSError, ValueError, IndexError):
            pass  # gone, or /proc unlike Linux's: psutil decides (NoSuchProcess)
    import psutil  # see the module's docstring

    return float(psutil.Process(pid).create_time())


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if sys.platform == "linux" else 0


def _stat_fields(pid: int) -> list[bytes]:
    """``/proc/PID/stat`` after the command name: state first, start time (ticks) 20th."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rpartition(b")")[2].split()


def _since_boot(pid: int) -> float:
    return int(_stat_fields(pid)[19]) / _CLOCK_TICKS


def _boot_time() -> float:
    with open("/proc/stat", "rb") as system:
        for line in system:
            if line.startswith(b"btime"):
                return float(line.split()[1])
    raise ValueError("no btime in /proc/stat")


def is_running(pid: int, mark: float, boot: str | None = None) -> bool:
    """Whether ``pid`` is provably still the live process whose start mark is ``mark`` (not a
    reused pid, not a zombie); ``boot`` is the boot it was marked in, where it is known."""
    return liveness(pid, mark, boot) is True


def liveness(pid: int, mark: float, boot: str | None = None) -> bool | None:
    """Alive, gone, or None when it cannot be known (no permission, no /proc to read a mark).

    A mark since boot from another boot is gone with that boot. A mark since the epoch is
    compared as psutil reports start times, which follow wall-clock steps: such a mark from
    before marks existed can make a live process look gone after a large clock change, never a
    different process look like this one."""
    if mark >= _EPOCH_FLOOR:
        return _epoch_liveness(pid, mark)
    if boot and boot != boot_id():
        return False
    if not _CLOCK_TICKS:
        return None  # a mark since boot, read where no /proc says when processes started
    try:
        fields = _stat_fields(pid)
    except (FileNotFoundError, ProcessLookupError):
        return False
    except OSError:
        return None
    same = abs(int(fields[19]) / _CLOCK_TICKS - mark) <= MARK_TOLERANCE
    return same and fields[0] != b"Z"


def _epoch_liveness(pid: int, started: float) -> bool | None:
    import psutil  # see the module's docstring (the engine, which asks this, has it loaded)

    try:
        process = psutil.Process(pid)
        same = abs(process.create_time() - started) <= START_TIME_TOLERANCE
        return same and bool(process.status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return None


@cache
def boot_id() -> str:
    """This boot's identity; pids and start times are meaningless across a reboot.

    Read as bytes: a text file opened ``encoding="ascii"`` imports that codec, which the fork
    server has not loaded, so every forked runner paid for the import (bench_dispatch's row
    "dispatch against that floor")."""
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as file:
            return file.read().decode("ascii", "replace").strip()
    except OSError:
        return ""
