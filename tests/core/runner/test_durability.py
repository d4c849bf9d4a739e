"""What the runner makes durable, and when (DESIGN §8): a real runner process whose fsyncs
and spawn are written down, in order, by a wrapper around its own ``main``."""

from __future__ import annotations

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
    sys.exit(main.main([sys.argv[1]]))
    """
)


def durability_trace(tmp_path: Path, spec: RunnerSpec | str) -> list[str]:
    """The runner's fsyncs (by file name; the attempt directory as ``DIR``) and its spawn."""
    directory = tmp_path / "attempt"
    directory.mkdir()
    text = spec if isinstance(spec, str) else spec.to_json()
    (directory / SPEC_FILE).write_text(text, encoding="utf-8")
    wrapper, log = tmp_path / "wrapper.py", tmp_path / "trace.log"
    wrapper.write_text(WRAPPER, encoding="utf-8")
    subprocess.run([sys.executable, str(wrapper), str(directory), str(log)],
                   timeout=DEADLINE, check=False)  # fmt: skip
    lines = log.read_text(encoding="utf-8").splitlines()
    return [line.replace("fsync attempt", "fsync DIR") for line in lines]


def test_the_intent_and_every_name_are_durable_before_the_spawn(tmp_path: Path) -> None:
    """A command with no output: the journal (its first record with the intent) and the
    directory are fsync'd before the spawn; then the spawn record and the exit record, and
    nothing for the output files: a command that prints nothing has none."""
    assert durability_trace(tmp_path, command("/bin/true")) == [
        "fsync journal.jsonl",  # runner_started + intent, in one fsync
        "fsync DIR",  # the journal's name
        "spawn",
        "fsync journal.jsonl",  # spawned
        "fsync journal.jsonl",  # exited
    ]


def test_captured_output_is_durable_before_the_record_that_counts_it(tmp_path: Path) -> None:
    assert durability_trace(tmp_path, shell("echo out; echo err >&2")) == [
        "fsync journal.jsonl",
        "fsync DIR",
        "spawn",
        "fsync journal.jsonl",  # spawned
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
