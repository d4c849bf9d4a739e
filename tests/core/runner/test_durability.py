"""What the runner makes durable, and when (DESIGN §8): a real runner process whose fsyncs
and spawn are written down, in order, by a wrapper around its own ``main``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from coven_core.runner.spec import SPEC_FILE, RunnerSpec
from tests.core.runner.conftest import DEADLINE, command, shell

WRAPPER = textwrap.dedent(
    """
    import os, sys
    from coven_core.runner import main, process

    log = open(sys.argv[2], "w", encoding="utf-8")
    real_fsync, real_spawn = os.fsync, process.spawn

    def note(what):
        log.write(what + "\\n")
        log.flush()

    def fsync(fd):
        real_fsync(fd)
        note("fsync " + os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))

    def spawn(spec):
        note("spawn")
        return real_spawn(spec)

    os.fsync, process.spawn = fsync, spawn
    if os.environ.get("NO_BOOT_ID"):  # a system that cannot name its boot
        process.boot_id = lambda: ""
    sys.exit(main.main([sys.argv[1]]))
    """
)


def durability_trace(tmp_path: Path, spec: RunnerSpec | str, *, boot_id: bool = True) -> list[str]:
    """The runner's fsyncs (by file name; the attempt directory as ``DIR``) and its spawn;
    ``boot_id`` False: on a system without a boot identity."""
    directory = tmp_path / "attempt"
    directory.mkdir()
    text = spec if isinstance(spec, str) else spec.to_json()
    (directory / SPEC_FILE).write_text(text, encoding="utf-8")
    wrapper, log = tmp_path / "wrapper.py", tmp_path / "trace.log"
    wrapper.write_text(WRAPPER, encoding="utf-8")
    env = {**os.environ, **({} if boot_id else {"NO_BOOT_ID": "1"})}
    subprocess.run([sys.executable, str(wrapper), str(directory), str(log)],
                   env=env, timeout=DEADLINE, check=False)  # fmt: skip
    lines = log.read_text(encoding="utf-8").splitlines()
    return [line.replace("fsync attempt", "fsync DIR") for line in lines]


def test_nothing_is_waited_onto_the_disk_before_the_spawn(tmp_path: Path) -> None:
    """A command with no output: nothing is fsync'd before the spawn (a crash leaves the
    intent in the page cache; after a restart of the machine recovery trusts no journal
    short of an outcome); the journal's name while the command runs; then the exit record,
    and with it every record before it. Nothing for the output files: there are none."""
    assert durability_trace(tmp_path, command("/bin/true")) == [
        "spawn",
        "fsync DIR",  # the journal's name
        "fsync journal.jsonl",  # exited, with runner_started, intent and spawned
    ]


def test_without_a_boot_to_name_the_intent_is_durable_before_the_spawn(tmp_path: Path) -> None:
    """Recovery could not tell a restart of the machine: the journal must prove it alone."""
    assert durability_trace(tmp_path, command("/bin/true"), boot_id=False) == [
        "fsync journal.jsonl",  # runner_started + intent, in one fsync
        "fsync DIR",  # the journal's name
        "spawn",
        "fsync journal.jsonl",  # spawned and exited
    ]


def test_captured_output_is_durable_before_the_record_that_counts_it(tmp_path: Path) -> None:
    assert durability_trace(tmp_path, shell("echo out; echo err >&2")) == [
        "spawn",
        "fsync DIR",  # the journal's name
        "fsync stdout",
        "fsync stderr",
        "fsync DIR",  # their names: the files were made when the command wrote
        "fsync journal.jsonl",  # exited, with both sizes
    ]
    assert not (tmp_path / "attempt" / "stdout").stat().st_mode & 0o077  # private


def test_a_spec_it_cannot_read_is_refused_durably_and_nothing_is_spawned(tmp_path: Path) -> None:
    assert durability_trace(tmp_path, "{ not json") == [
        "fsync journal.jsonl",  # runner_started + spawn_failed
        "fsync DIR",  # the journal's name
    ]
