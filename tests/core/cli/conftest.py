"""Running ``coven`` in-process as a shell would, against a store in a temp dir."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from coven_core import engine as engine_module
from coven_core.cli import arguments
from coven_core.cli.main import main
from coven_core.clock import WakeReason
from coven_core.scheduling.lease import LEASE_TTL
from coven_core.store.store import Store
from tests.core.conftest import T0, Engine, make_engine, minutes

# Every table a command could change; a refused command must leave each one as it was. The
# audit log is not one of them: a refusal the engine heard is itself on record there.
_TABLES = ("routines", "revisions", "occurrences", "attempts", "events", "scheduler_state",
           "reconciliations", "deliveries")  # fmt: skip


def invoke(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process as the shell would: argparse's exits become a status too."""
    try:
        status = main(list(args))
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def with_json(args: tuple[str, ...]) -> list[str]:
    """``--json`` goes before a routine's command (after ``--`` it would be an argument)."""
    cut = args.index("--") if "--" in args else len(args)
    return [*args[:cut], "--json", *args[cut:]]


@dataclass
class Coven:
    """``coven --data-dir DIR ...`` on one store."""

    capsys: pytest.CaptureFixture[str]
    data_dir: Path

    def __call__(self, *args: str) -> tuple[int, str, str]:
        return invoke(self.capsys, "--data-dir", str(self.data_dir), *args)

    def json(self, *args: str) -> Any:
        status, out, err = self(*with_json(args))
        assert (status, err) == (0, ""), err
        return json.loads(out)

    def add(self, name: str, *options: str, command: tuple[str, ...] = ("/bin/true",)) -> Any:
        return self.json("routine", "add", name, *options, "--", *command)

    def new_store(self) -> None:
        """An empty store, as ``routine add`` would make it: commands that only read or
        change what exists refuse to make one (issue 19)."""
        Store.open(self.data_dir, datetime.now(UTC)).close()

    def snapshot(self) -> Any:
        """What a refused command must not change: the routine list and every stored row;
        with no store yet, the data directory's files (a refusal creates none)."""
        if not (self.data_dir / "coven.db").exists():
            return sorted(self.data_dir.rglob("*")) if self.data_dir.exists() else None
        listed = self.json("routine", "list")
        store = Store.open(self.data_dir, datetime.now(UTC))
        try:
            with store.read() as conn:
                rows = {table: list(conn.execute(f"SELECT * FROM {table}")) for table in _TABLES}
        finally:
            store.close()
        return listed, rows

    def refuses(self, *args: str, message: str, status: int = 2) -> str:
        """Exit status 2 (3 for a conflict with what is stored), one line on stderr naming the
        problem, nothing on stdout or stored."""
        before = self.snapshot()
        got, out, err = self(*args)
        assert (got, out) == (status, ""), err
        assert err.count("\n") == 1 and err.endswith("\n"), err
        assert message in err, err
        assert self.snapshot() == before
        return err


Invoke = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Invoke:
    """``cli("preview", ...)``: :func:`invoke` with this test's capsys."""
    return partial(invoke, capsys)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def coven(capsys: pytest.CaptureFixture[str], data_dir: Path) -> Coven:
    return Coven(capsys, data_dir)


@pytest.fixture
def on_engine_clock(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Engine:
    """The engine fixture (a scheduler under virtual time on ``data_dir``), with ``coven``
    reading the same virtual clock: what a command writes (a manual run, a cancel request) is
    stamped in the scheduler's time, and the scheduler meets it without waiting."""

    def open_on_virtual_time(
        data_dir: str | Path | None = None, *, create: bool = False
    ) -> engine_module.Engine:
        return engine_module.open_engine(data_dir, clock=engine.clock, create=create)

    monkeypatch.setattr(arguments, "open_engine", open_on_virtual_time)
    return engine


def react(engine: Engine) -> None:
    """The scheduler hears an operator command from another process (in real use through the
    store's wake directory) and makes its passes at the current virtual instant."""
    engine.wake.set(WakeReason.OPERATOR_COMMAND)
    engine.run_until(engine.clock.now_utc())


@dataclass(frozen=True)
class Awaiting:
    """A run whose outcome nobody can know, waiting for a person's decision."""

    engine: Engine  # the leader that died; its virtual clock is the one ``coven`` reads
    run_id: str
    occurrence_id: str
    routine: str = "backup"


@pytest.fixture
def awaiting(on_engine_clock: Engine, data_dir: Path) -> Awaiting:
    """``backup`` (hourly) had a run going when its leader died; the next leader cannot know
    how it ended, so the run is ``recovery_required`` and the routine paused until decided."""
    old = on_engine_clock
    old.runtime.auto_exit = None
    old.add("backup", "@hourly")
    old.run_until(T0 + minutes(1))
    old.clock.advance(LEASE_TTL + timedelta(seconds=1))
    new = make_engine(data_dir, old.clock)
    try:
        new.run_until(old.clock.now_utc())
    finally:
        new.store.close()
    ((run_id, occurrence_id),) = old.store.conn.execute(
        "SELECT run_id, id FROM occurrences WHERE disposition = 'recovery_required'"
    )
    return Awaiting(old, run_id, occurrence_id)
