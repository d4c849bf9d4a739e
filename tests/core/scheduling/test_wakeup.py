"""Cross-process wakes: real sockets, real threads, and bounded waits instead of sleeps."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from coven_core.clock import WakeReason, WakeSignal
from coven_core.scheduling import wakeup
from coven_core.scheduling.wakeup import (
    MAX_SOCKET_PATH,
    WakeDirError,
    WakeListener,
    notify,
    socket_dir,
)
from coven_core.system import socketpath

#: Nearly every test needs real AF_UNIX datagrams.
unix_only = pytest.mark.skipif(not wakeup.SUPPORTED, reason="needs AF_UNIX datagrams")

WAIT = 5.0  # real seconds; a wake normally arrives in microseconds


def wait_for_wake(signal: WakeSignal) -> WakeReason:
    """The reason a wake brought, waiting at most WAIT real seconds for it."""
    with signal.condition:
        arrived = signal.condition.wait_for(signal.is_set, timeout=WAIT)
    assert arrived, f"no wake within {WAIT} s"
    reason = signal.take()
    assert reason is not None
    return reason


Listen = Callable[[WakeSignal], WakeListener]


@pytest.fixture
def wake_dir() -> Iterator[Path]:
    """A short path (pytest's tmp_path may be too long), so the dir itself holds the sockets."""
    short = Path(tempfile.mkdtemp(prefix="cw")) / "w"
    assert socket_dir(short) == short.resolve()
    yield short
    shutil.rmtree(short.parent, ignore_errors=True)


@pytest.fixture
def listen(wake_dir: Path) -> Iterator[Listen]:
    """Start listeners on ``wake_dir`` that are closed after the test."""
    started: list[WakeListener] = []

    def start(signal: WakeSignal) -> WakeListener:
        started.append(WakeListener.start(wake_dir, signal))
        return started[-1]

    yield start
    for listener in started:
        listener.close()


@unix_only
@pytest.mark.parametrize(
    "reason",
    [WakeReason.DEFINITION_CHANGED, WakeReason.SHUTDOWN, WakeReason.OPERATOR_COMMAND],
)
def test_notify_in_process_wakes_with_its_reason(
    listen: Listen, wake_dir: Path, reason: WakeReason
) -> None:
    signal = WakeSignal()
    listen(signal)
    assert notify(wake_dir, reason) == 1
    assert wait_for_wake(signal) is reason


@unix_only
def test_notify_from_another_process_wakes(listen: Listen, wake_dir: Path) -> None:
    signal = WakeSignal()
    listen(signal)
    code = (
        "import sys; from pathlib import Path\n"
        "from coven_core.clock import WakeReason\n"
        "from coven_core.scheduling.wakeup import notify\n"
        "print(notify(Path(sys.argv[1]), WakeReason.DEFINITION_CHANGED))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(wake_dir)], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "1"
    assert wait_for_wake(signal) is WakeReason.DEFINITION_CHANGED


@unix_only
def test_two_listeners_in_one_dir_are_both_woken(listen: Listen, wake_dir: Path) -> None:
    leader, standby = WakeSignal(), WakeSignal()
    listen(leader)
    listen(standby)
    assert notify(wake_dir, WakeReason.DEFINITION_CHANGED) == 2
    assert wait_for_wake(leader) is WakeReason.DEFINITION_CHANGED
    assert wait_for_wake(standby) is WakeReason.DEFINITION_CHANGED


@unix_only
def test_every_wake_is_delivered_not_only_the_first(listen: Listen, wake_dir: Path) -> None:
    signal = WakeSignal()
    listen(signal)
    for reason in (WakeReason.DEFINITION_CHANGED, WakeReason.OPERATOR_COMMAND):
        assert notify(wake_dir, reason) == 1
        assert wait_for_wake(signal) is reason


@unix_only
def test_unknown_payload_is_an_operator_command(listen: Listen) -> None:
    signal = WakeSignal()
    listener = listen(signal)
    for payload in (b"bogus", b"\xff\xfe", b""):
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as raw:
            raw.sendto(payload, str(listener.path))
        assert wait_for_wake(signal) is WakeReason.OPERATOR_COMMAND


@unix_only
def test_stale_socket_is_removed_and_not_counted(listen: Listen, wake_dir: Path) -> None:
    signal = WakeSignal()
    listen(signal)
    stale = wake_dir / "999999-deadbeef.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as dead:
        dead.bind(str(stale))  # closed without unlinking, as a crashed process leaves it
    assert stale.exists()
    assert notify(wake_dir, WakeReason.OPERATOR_COMMAND) == 1
    assert not stale.exists()
    assert wait_for_wake(signal) is WakeReason.OPERATOR_COMMAND


@unix_only
def test_close_unlinks_the_socket_and_ends_the_thread(wake_dir: Path) -> None:
    listener = WakeListener.start(wake_dir, WakeSignal())
    assert listener.path is not None and listener.path.exists()
    assert listener.is_running
    listener.close()
    assert not listener.path.exists()
    assert not listener.is_running
    listener.close()  # idempotent
    assert notify(wake_dir, WakeReason.OPERATOR_COMMAND) == 0


@unix_only
def test_close_ends_the_thread_even_when_the_socket_file_was_deleted(wake_dir: Path) -> None:
    with WakeListener.start(wake_dir, WakeSignal()) as listener:
        assert listener.path is not None
        listener.path.unlink()  # the stop datagram cannot reach it: shutdown must
    assert not listener.is_running


@unix_only
def test_with_block_closes(wake_dir: Path) -> None:
    signal = WakeSignal()
    with WakeListener.start(wake_dir, signal) as listener:
        assert notify(wake_dir, WakeReason.SHUTDOWN) == 1
        assert wait_for_wake(signal) is WakeReason.SHUTDOWN
    assert not listener.is_running
    assert list(wake_dir.iterdir()) == []


@unix_only
def test_modes_are_private(wake_dir: Path, listen: Listen) -> None:
    old = os.umask(0o022)
    try:
        listener = listen(WakeSignal())
    finally:
        os.umask(old)
    assert listener.path is not None
    assert stat.S_IMODE(wake_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(listener.path.stat().st_mode) == 0o600
    assert stat.S_ISSOCK(listener.path.stat().st_mode)


@unix_only
def test_existing_loose_dir_is_tightened(wake_dir: Path, listen: Listen) -> None:
    wake_dir.mkdir(mode=0o755)
    os.chmod(wake_dir, 0o755)
    listen(WakeSignal())
    assert stat.S_IMODE(wake_dir.stat().st_mode) == 0o700


@unix_only
def test_symlinked_wake_dir_is_resolved(wake_dir: Path) -> None:
    wake_dir.parent.mkdir(parents=True, exist_ok=True)
    target = wake_dir.parent / "elsewhere"
    target.mkdir()
    wake_dir.symlink_to(target)  # resolved: a symlinked store dir is fine
    with WakeListener.start(wake_dir, WakeSignal()) as listener:
        assert listener.path is not None and listener.path.parent == target.resolve()


def test_missing_dir_reaches_no_one(tmp_path: Path) -> None:
    assert notify(tmp_path / "nowhere", WakeReason.SHUTDOWN) == 0


@unix_only
def test_notify_never_raises_on_a_file_where_the_dir_should_be(tmp_path: Path) -> None:
    (tmp_path / "wake").write_text("not a directory")
    assert notify(tmp_path / "wake", WakeReason.SHUTDOWN) == 0
    with pytest.raises(OSError):
        WakeListener.start(tmp_path / "wake", WakeSignal())


# -- long paths: the sockets stay in the private directory -------------------------------------


@pytest.fixture
def short_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temp dir of its own, in this process and in children (TMPDIR): nothing may appear in it."""
    short = Path(tempfile.mkdtemp(prefix="cw-"))
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    monkeypatch.setenv("TMPDIR", str(short))
    yield short
    shutil.rmtree(short, ignore_errors=True)


def _long_dir(tmp_path: Path) -> Path:
    deep = tmp_path / ("store-" + "x" * 60) / ("wake-" + "y" * 60)
    assert len(os.fsencode(deep)) > MAX_SOCKET_PATH
    return deep


needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


@unix_only
@needs_proc
def test_long_wake_dir_keeps_its_sockets_inside(tmp_path: Path, short_tmp: Path) -> None:
    deep = _long_dir(tmp_path)
    signal = WakeSignal()
    with WakeListener.start(deep, signal) as listener:
        assert listener.path is not None and listener.path.parent == deep.resolve()
        assert listener.path.is_socket()
        assert stat.S_IMODE(deep.stat().st_mode) == 0o700
        assert stat.S_IMODE(listener.path.stat().st_mode) == 0o600
        assert list(short_tmp.iterdir()) == []  # nothing in a shared directory
        assert notify(deep, WakeReason.DEFINITION_CHANGED) == 1
        assert wait_for_wake(signal) is WakeReason.DEFINITION_CHANGED
    assert list(deep.iterdir()) == []


@unix_only
@needs_proc
def test_long_wake_dir_works_across_processes(tmp_path: Path, short_tmp: Path) -> None:
    deep = _long_dir(tmp_path)
    signal = WakeSignal()
    code = (
        "import sys; from pathlib import Path\n"
        "from coven_core.clock import WakeReason\n"
        "from coven_core.scheduling.wakeup import notify\n"
        "print(notify(Path(sys.argv[1]), WakeReason.OPERATOR_COMMAND))\n"
    )
    with WakeListener.start(deep, signal):
        done = subprocess.run(
            [sys.executable, "-c", code, str(deep)], capture_output=True, text=True, check=True
        )
        assert done.stdout.strip() == "1"
        assert wait_for_wake(signal) is WakeReason.OPERATOR_COMMAND


@unix_only
@needs_proc
def test_a_name_taken_in_the_temp_dir_by_someone_else_stops_nothing(
    tmp_path: Path, short_tmp: Path
) -> None:
    """The old fallback's name, ``$TMPDIR/coven-wake-<hash>``, created first by another user."""
    deep = _long_dir(tmp_path)
    digest = hashlib.sha256(os.fsencode(deep.resolve())).hexdigest()[:16]
    squatted = short_tmp / f"coven-wake-{digest}"
    squatted.mkdir(mode=0o777)
    if os.geteuid() == 0:
        os.chown(squatted, 12345, 12345)  # a real other owner when we can make one
    signal = WakeSignal()
    with WakeListener.start(deep, signal):
        assert notify(deep, WakeReason.OPERATOR_COMMAND) == 1
        assert wait_for_wake(signal) is WakeReason.OPERATOR_COMMAND
    assert list(squatted.iterdir()) == []


@unix_only
def test_too_long_a_path_without_proc_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socketpath, "_PROC_FD", tmp_path / "no-proc")
    with pytest.raises(WakeDirError, match="too long"):
        WakeListener.start(_long_dir(tmp_path / "store"), WakeSignal())
    assert notify(_long_dir(tmp_path / "store"), WakeReason.SHUTDOWN) == 0


# -- platforms without AF_UNIX ------------------------------------------------------------------


def test_unsupported_platform_is_inert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wake_dir = tmp_path / "wake"
    monkeypatch.setattr(wakeup, "SUPPORTED", False)
    with WakeListener.start(wake_dir, WakeSignal()) as listener:
        assert listener.path is None
        assert not listener.is_running
        assert not wake_dir.exists()
        assert notify(wake_dir, WakeReason.SHUTDOWN) == 0
