"""The crash matrix (DESIGN §9, issue #6): a real engine process killed at every boundary.

For each named failpoint and for a non-idempotent and an idempotent ``once`` routine: crash the
process that reaches it (``COVEN_FAILPOINT=<point>:crash``: exit 137, no cleanup), restart a
daemon without it, let the occurrence settle, and check the promise — one explainable
disposition, never a second run of a non-idempotent command, no success without exit evidence,
delivery complete, events caught up, the store's invariants intact. Each case adds a row to
``build/crash_matrix.txt``: crash point × routine kind → disposition, runs, delivery.

Which process a point crashes:

* ``revision.*`` and ``publish.before`` — ``coven routine add`` itself (the operator is the
  only code that reaches them: a daemon's pass publishes nothing to other processes);
* the runner for ``runner.*`` — it inherits the variable from the fork server, which the daemon
  starts with its own environment (checked below: the variable is in both);
* the daemon for the rest. The crashing daemon starts with its clock just past the due moment,
  so its first pass is the one that plans, claims and dispatches the occurrence, and the crash
  lands where the occurrence is — not in an idle pass before it is due.

Waits for a retry's backoff (up to 30 s of real time) are not waited out: the daemon is
stopped and the next one starts with its clock moved past the retry's ``not_before``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import astuple, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest

from coven_core.integrity.doctor import doctor
from coven_core.runner.spec import RunnerSpec
from coven_core.runtime.runner import runner_command
from coven_core.store.codec import instant_from
from coven_core.system import failpoints
from tests.system.conftest import Harness, wait_for

OPERATOR_POINTS = frozenset({"revision.before_commit", "revision.after_commit", "publish.before"})
#: A runner's crash points, by the journal's last record when it crashes there.
_LAST_RECORD = {"runner.started": "runner_started", "runner.spawn_unrecorded": "intent",
                "runner.spawned": "spawned"}  # fmt: skip
RUNNER_POINTS = frozenset(_LAST_RECORD)
CHAIN_POINT = "chain.before_plan"  # reached only by an upstream with a routine after it
KINDS = ("non-idempotent", "idempotent")
CRASHED = failpoints.CRASH_STATUS
TIMEOUT = 30.0
EXIT_GRACE = 2.0  # after the store shows a crash point's commit, for the crash itself
OUTPUT = "output\n"
MATRIX_FILE = Path(__file__).resolve().parents[2] / "build" / "crash_matrix.txt"
_SHORT = {"runner_started": "started", "cancel_acknowledged": "cancel"}


# -- the table ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    point: str
    kind: str
    crashed: str
    at_crash: str
    disposition: str
    attempts: str
    runs: int
    delivery: str

    def cells(self) -> tuple[str, ...]:
        return tuple(str(value) for value in astuple(self))

    def order(self) -> tuple[int, int]:
        points = (*failpoints.BOUNDARIES, "machine crash")
        return points.index(self.point), KINDS.index(self.kind)


_HEADER = ("crash point", "routine", "crashed", "left by the crash", "disposition", "attempts",
           "ran", "delivery")  # fmt: skip


def _table(rows: list[Row]) -> str:
    cells = [_HEADER] + [row.cells() for row in sorted(rows, key=Row.order)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(_HEADER))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines) + "\n"


@pytest.fixture(scope="session")
def crash_matrix() -> Iterator[list[Row]]:
    """Collects the observed rows; writes and prints the table when the session ends."""
    rows: list[Row] = []
    yield rows
    if rows:
        MATRIX_FILE.parent.mkdir(parents=True, exist_ok=True)
        text = _table(rows)
        temporary = MATRIX_FILE.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(text)
        temporary.replace(MATRIX_FILE)
        print(f"\n{MATRIX_FILE}:\n{text}")


# -- one case ----------------------------------------------------------------------------------
@dataclass
class Case:
    harness: Harness
    marker: Path
    idempotent: bool
    name: str = "crashy"
    routine_id: str | None = None

    @property
    def kind(self) -> str:
        return KINDS[self.idempotent]

    def argv(self, script: str | None = None) -> tuple[str, ...]:
        return ("sh", "-c", script or f"echo ran >> {self.marker}; echo output")

    def runs(self) -> int:
        return len(self.marker.read_text().split()) if self.marker.exists() else 0

    def add(self, script: str | None = None) -> str:
        self.routine_id = self.harness.add(self.name, self.argv(script),
                                           idempotent=self.idempotent)  # fmt: skip
        return self.routine_id


@pytest.fixture(params=KINDS)
def case(request: pytest.FixtureRequest, harness: Harness, tmp_path: Path) -> Case:
    return Case(harness, tmp_path / "marker", request.param == "idempotent")


POINTS = list(failpoints.BOUNDARIES)


@pytest.mark.parametrize("point", POINTS)
def test_a_crash_at_each_boundary_converges(
    point: str, case: Case, crash_matrix: list[Row]
) -> None:
    if point in OPERATOR_POINTS:
        crashed, relaunched = _crash_the_operator(case, point), False
    elif point in RUNNER_POINTS:
        crashed, relaunched = _crash_the_runner(case, point)
    else:
        crashed, relaunched = _crash_the_daemon(case, point), False
    at_crash = _snapshot(case)
    _settle(case)
    row = _observe(case, point, crashed, at_crash)
    crash_matrix.append(row)
    _check(case, row, _expected(point, case.idempotent), exact=not relaunched)
    if point == CHAIN_POINT:
        _check_one_downstream(case)


def _check_one_downstream(case: Case) -> None:
    """The upstream's success planned exactly one downstream occurrence, whatever the crash
    between the two writes did: both were rolled back together, then made again."""
    ((upstream,),) = case.harness.query(
        "SELECT id FROM occurrences WHERE routine_id = ?", (case.routine_id,)
    )
    rows = case.harness.query(
        "SELECT o.id FROM occurrences o JOIN routines r ON r.id = o.routine_id "
        "WHERE r.name = ? AND o.kind = 'triggered'",
        (DOWNSTREAM,),
    )
    assert [row[0].split("@after:")[1] for row in rows] == [upstream]


def _expected(point: str, idempotent: bool) -> tuple[str, int]:
    """(disposition, runs). Only the runner's points after the spawn leave the outcome
    unknown: the runner died before any exit record (and before the spawn's own, for
    ``runner.spawn_unrecorded``)."""
    if point == "revision.before_commit":
        return "— (no routine)", 0
    if point in ("runner.spawn_unrecorded", "runner.spawned"):
        return ("succeeded", 2) if idempotent else ("recovery_required", 1)
    return "succeeded", 1


# -- crashing the operator ---------------------------------------------------------------------
def _crash_the_operator(case: Case, point: str) -> str:
    """``coven routine add`` as a real process, armed: it must die with 137, leaving the
    routine wholly absent (before the commit) or wholly there (after it)."""
    harness = case.harness
    command = [
        sys.executable, "-m", "coven_core.testing", "--data-dir", str(harness.data),
        "routine", "add", case.name, "--schedule", f"once {harness.target:%Y-%m-%dT%H:%M}",
        "--tz", "UTC", "--idempotent" if case.idempotent else "--no-idempotent", "--",
        *case.argv(),
    ]  # fmt: skip
    env = {**os.environ, **harness.env(), failpoints.ENV: f"{point}:crash"}
    done = subprocess.run(command, env=env, capture_output=True, timeout=TIMEOUT)
    assert done.returncode == CRASHED, f"{point}: coven routine add exited {done.returncode}: {done.stderr.decode()}"  # fmt: skip
    routines = harness.query("SELECT id FROM routines WHERE name = ?", (case.name,))
    if point == "revision.before_commit":
        assert routines == [] and harness.query("SELECT * FROM revisions") == []
        assert harness.query("SELECT * FROM audit_log") == []  # same transaction, rolled back
    else:
        ((case.routine_id,),) = routines
        _assert_revision_intact(case)
    return "coven routine add (137)"


def _assert_revision_intact(case: Case) -> None:
    ((number, argv, idempotent),) = case.harness.query(
        "SELECT number, argv, idempotent FROM revisions WHERE routine_id = ?", (case.routine_id,)
    )
    assert (number, tuple(json.loads(argv)), bool(idempotent)) == (1, case.argv(), case.idempotent)
    ((action, result),) = case.harness.query("SELECT action, result FROM audit_log")
    assert result == "ok", action


# -- crashing the daemon -----------------------------------------------------------------------
def _start_when_due(harness: Harness, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A daemon whose clock reads just past the due moment: its first pass handles it."""
    behind = harness.target - (datetime.now(UTC) + harness.offset)
    if behind > timedelta(0):
        harness.offset += behind + timedelta(seconds=0.2)
    return harness.start_daemon(env)


def _armed(point: str) -> dict[str, str]:
    return {failpoints.ENV: f"{point}:crash"}


DOWNSTREAM = "after-crashy"


def _crash_the_daemon(case: Case, point: str) -> str:
    rid = case.add()
    if point == CHAIN_POINT:  # a routine chained after it: its success reaches the point
        case.harness.add(DOWNSTREAM, ("true",), after=case.name)
    daemon = _start_when_due(case.harness, _armed(point))
    reached = wait_for(lambda: daemon.poll() is not None or _finished(case.harness, rid), TIMEOUT)
    if reached and daemon.poll() is None:
        # A point just after a commit (the receipt's): the store can show what it committed
        # a moment before the daemon dies there. One that never reaches it stays up.
        with contextlib.suppress(subprocess.TimeoutExpired):
            daemon.wait(timeout=EXIT_GRACE)  # real-time: a real process on its way out
    if daemon.poll() is None:
        case.harness.kill(daemon)
        pytest.fail(f"{point}: the daemon never reached it ({'the occurrence settled' if reached else 'timed out'})")  # fmt: skip
    assert daemon.returncode == CRASHED, f"{point}: daemon exited {daemon.returncode}: {_stderr(daemon)}"  # fmt: skip
    return "daemon (137)"


# -- crashing the runner -----------------------------------------------------------------------
def _crash_the_runner(case: Case, point: str) -> tuple[str, bool]:
    """The runner crashes; the armed daemon lives on, sees it and settles the attempt. It is
    then killed (idle, nothing to lose) so that no retry meets the failpoint again.

    Returns whether the armed daemon relaunched before it was stopped (a backoff under ~0.1 s):
    every attempt then met the failpoint, and only the contract's rules are checked."""
    rid = case.add()
    harness = case.harness
    daemon = _start_when_due(harness, _armed(point))
    assert wait_for(lambda: _runner_crashed(harness, rid, point), TIMEOUT), f"{point}: no runner crash: {_snapshot(case)}"  # fmt: skip
    armed = _processes_armed(daemon)
    assert all(armed.values()), f"COVEN_FAILPOINT not seen by every process: {armed}"
    assert wait_for(lambda: _attempts(harness, rid)[0]["state"] == "settled", TIMEOUT)
    harness.kill(daemon)
    relaunched = len(_attempts(harness, rid)) > 1
    via = "fork server" if "fork server" in armed else "fresh interpreter"
    again = "; the armed daemon relaunched" if relaunched else ""
    return f"runner (via {via}; no exit record{again})", relaunched


def _runner_crashed(harness: Harness, rid: str, point: str) -> bool:
    attempts = _attempts(harness, rid)
    if not attempts:
        return False
    journal = _journal(Path(attempts[0]["dir"]))
    events = [record["event"] for record in journal]
    last = _LAST_RECORD[point]
    if not events or events[-1] != last:
        return False
    return not _alive(int(journal[0]["runner_pid"]))


def _processes_armed(daemon: subprocess.Popen[bytes]) -> dict[str, bool]:
    """Whether the daemon and its fork server (if it has one) have ``COVEN_FAILPOINT``. A
    runner is a fork of the server, so it has what the server has."""
    found = {"daemon": psutil.Process(daemon.pid)}
    for child in found["daemon"].children():
        if "coven_core.runner.server" in child.cmdline():
            found["fork server"] = child
    return {role: failpoints.ENV in process.environ() for role, process in found.items()}


def test_an_armed_runner_exits_137_without_an_exit_record(tmp_path: Path) -> None:
    """The runner crash itself, where its status can be seen: a runner started as a fresh
    interpreter (the fork server's children are reaped by the kernel, status unseen)."""
    for point, last in _LAST_RECORD.items():
        directory = tmp_path / point
        directory.mkdir()
        spec = RunnerSpec("a1", ("sh", "-c", f"echo ran >> {tmp_path}/m-{point}"))
        (directory / "spec.json").write_text(spec.to_json())
        env = {**os.environ, **_armed(point)}
        done = subprocess.run([*runner_command(), str(directory)], env=env, timeout=TIMEOUT)
        assert done.returncode == CRASHED, point
        assert [r["event"] for r in _journal(directory)][-1] == last


# -- the machine crash -------------------------------------------------------------------------
def test_a_machine_crash_while_the_command_runs(case: Case, crash_matrix: list[Row]) -> None:
    """Daemon, fork server, runner and the command's group, all frozen then killed at once."""
    script = (f"echo ran >> {case.marker}; [ $(wc -l < {case.marker}) -ge 2 ] || sleep 60; "
              "echo output")  # fmt: skip  # only the first run hangs: a retry can finish
    rid = case.add(script)
    harness = case.harness
    daemon = _start_when_due(harness)
    assert wait_for(lambda: case.runs() == 1 and _spawned(harness, rid), TIMEOUT)
    journal = _journal(Path(_attempts(harness, rid)[0]["dir"]))
    command = next(int(r["pid"]) for r in journal if r["event"] == "spawned")
    _power_cut(daemon, int(journal[0]["runner_pid"]), command)
    at_crash = _snapshot(case)
    _settle(case)
    row = _observe(case, "machine crash", "daemon + runner + command (SIGKILL)", at_crash)
    crash_matrix.append(row)
    expected = ("succeeded", 2) if case.idempotent else ("recovery_required", 1)
    _check(case, row, expected, exact=True)


def _power_cut(daemon: subprocess.Popen[bytes], runner: int, command: int) -> None:
    server = [child.pid for child in psutil.Process(daemon.pid).children()]
    for sig in (signal.SIGSTOP, signal.SIGKILL):  # frozen first: nobody sees another die
        for pid in (daemon.pid, *server, runner):
            _signal(pid, sig)
        os.killpg(command, sig)  # the command's group: pgid = its pid
    daemon.wait(10)
    assert wait_for(lambda: not _alive(runner) and not _alive(command), 10)


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _spawned(harness: Harness, rid: str) -> bool:
    attempts = _attempts(harness, rid)
    journal = _journal(Path(attempts[0]["dir"])) if attempts else []
    return any(record["event"] == "spawned" for record in journal)


# -- after the crash: restart until settled ----------------------------------------------------
def _settle(case: Case, hops: int = 3) -> None:
    """Restart without the failpoint until the occurrence has its disposition (and a success
    its delivery). A retry's backoff is skipped by starting the next daemon's clock past it."""
    harness = case.harness
    for _ in range(hops + 1):
        waiting = _one_daemon(case)
        if waiting is None:
            return
        harness.offset += waiting - (datetime.now(UTC) + harness.offset) + timedelta(seconds=0.2)
    pytest.fail(f"still waiting after {hops} clock hops: {_snapshot(case)}")


def _one_daemon(case: Case) -> datetime | None:
    """Run a daemon (at least one pass) until the case is finished or waits for a later time;
    returns that time."""
    harness, rid = case.harness, case.routine_id
    passes = _count(harness, "passes")
    daemon = _start_when_due(harness)
    done = wait_for(lambda: _count(harness, "passes") > passes and (
        _finished(harness, rid) or _waiting_until(harness, rid) is not None), TIMEOUT)  # fmt: skip
    assert done, f"did not settle: {_snapshot(case)}; {_stderr_if_dead(daemon)}"
    waiting = _waiting_until(harness, rid)
    _stop(daemon)
    return waiting


def _finished(harness: Harness, rid: str | None) -> bool:
    """Nothing left to do: no routine, or a disposition and (for a success) a delivery."""
    occurrence = _occurrence(harness, rid)
    if rid is None or occurrence is None:
        return rid is None
    if occurrence["disposition"] is None or _attempts_active(harness, rid):
        return False
    if occurrence["disposition"] != "succeeded":
        return True
    return _delivery(harness, occurrence["id"]) != "pending"  # none at all is checked later


def _waiting_until(harness: Harness, rid: str | None) -> datetime | None:
    """When a retry (or a delivery's retry) is due, if that is more than a moment away."""
    occurrence = _occurrence(harness, rid)
    if occurrence is None:
        return None
    rows = harness.query(
        "SELECT not_before FROM occurrences WHERE id = ? AND state = 'planned' UNION ALL "
        "SELECT not_before FROM deliveries WHERE occurrence_id = ? AND state = 'pending'",
        (occurrence["id"], occurrence["id"]),
    )
    due = [instant_from(at) for (at,) in rows if at is not None]
    now = datetime.now(UTC) + harness.offset
    later = [at for at in due if at > now + timedelta(seconds=0.5)]
    return min(later) if later else None


def _stop(daemon: subprocess.Popen[bytes]) -> None:
    daemon.send_signal(signal.SIGTERM)
    _, err = daemon.communicate(timeout=TIMEOUT)
    assert daemon.returncode == 0, err.decode()


# -- what happened -----------------------------------------------------------------------------
def _observe(case: Case, point: str, crashed: str, at_crash: str) -> Row:
    harness, rid = case.harness, case.routine_id
    occurrence = _occurrence(harness, rid)
    attempts = _attempts(harness, rid) if rid else []
    outcomes = " → ".join(a["failure_class"] or _exit_text(a) for a in attempts) or "—"
    delivery = _delivery(harness, occurrence["id"]) if occurrence else None
    disposition = "— (no routine)" if rid is None else "—"
    if occurrence is not None:
        disposition = occurrence["disposition"] or f"— ({occurrence['state']})"
    return Row(point, case.kind, crashed, at_crash, disposition, outcomes, case.runs(),
               delivery or "—")  # fmt: skip


def _exit_text(attempt: dict[str, Any]) -> str:
    return "ok" if attempt["exit_code"] == 0 else f"exit {attempt['exit_code']}"


def _snapshot(case: Case) -> str:
    """Where the crash left things: the committed state, the journal, the output folder."""
    harness, rid = case.harness, case.routine_id
    if rid is None:
        return "no routine"
    occurrence = _occurrence(harness, rid)
    if occurrence is None:
        return "no occurrence"
    parts = [f"occurrence {occurrence['state']}"]
    attempts = _attempts(harness, rid)
    if attempts:
        last = attempts[-1]
        events = [_SHORT.get(r["event"], r["event"]) for r in _journal(Path(last["dir"]))]
        parts += [f"attempt {last['state']}", "journal " + ("+".join(events) or "none")]
    delivery = _delivery(harness, occurrence["id"])
    if delivery:
        parts.append(f"delivery {delivery}")
    return ", ".join(parts + _outputs(harness, rid))


def _outputs(harness: Harness, rid: str) -> list[str]:
    folder = harness.data / "output" / rid
    names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    temps = [n for n in names if n.startswith(".")]
    finals = [n for n in names if not n.startswith(".")]
    return [f"output {what}" for what, there in (("temp", temps), ("file", finals)) if there]


# -- the checks --------------------------------------------------------------------------------
def _check(case: Case, row: Row, expected: tuple[str, int], *, exact: bool) -> None:
    allowed = 2 if case.idempotent else 1
    assert row.runs <= allowed, f"{row}: ran {row.runs} times, at most {allowed} allowed"
    problems = _violations(case)
    assert not problems, f"{row}: {problems}"
    if exact:
        assert (row.disposition, row.runs) == expected, row
    if "ambiguous" in row.attempts and not case.idempotent:
        assert row.disposition == "recovery_required" and row.runs <= 1, row


def _violations(case: Case) -> list[str]:
    """``coven doctor``'s errors, and what this case promises beyond them."""
    harness = case.harness
    engine = harness.engine()
    try:
        errors = doctor(engine.store, engine.clock.now_utc()).errors
    finally:
        engine.close()
    problems = [f"doctor {finding.check}: {finding.message}" for finding in errors]
    if case.routine_id is None:
        return problems + _leftovers(harness)
    return problems + _occurrence_problems(case)


def _leftovers(harness: Harness) -> list[str]:
    tables = ("routines", "occurrences", "attempts")
    return [f"{table} not empty" for table in tables if _count(harness, table)]


def _occurrence_problems(case: Case) -> list[str]:
    harness, rid = case.harness, case.routine_id
    assert rid is not None
    occurrences = harness.query("SELECT id, state, disposition FROM occurrences WHERE routine_id = ?", (rid,))  # fmt: skip
    if len(occurrences) != 1:
        return [f"{len(occurrences)} occurrences for one once moment: {occurrences}"]
    ((oid, state, disposition),) = occurrences
    problems = [] if state == "settled" else [f"occurrence left {state}"]
    problems += _attempt_problems(_attempts(harness, rid), disposition)
    problems += _event_problems(harness, oid, disposition)
    if disposition == "succeeded":
        problems += _delivery_problems(harness, oid)
    return problems


def _attempt_problems(attempts: list[dict[str, Any]], disposition: str | None) -> list[str]:
    """Beyond the doctor's (one unsettled attempt at most, no overlap): all settled, one exit
    record per journal, and a success's exit in its journal."""
    problems = [f"attempt {a['number']} left {a['state']}" for a in attempts if a["state"] != "settled"]  # fmt: skip
    for attempt in attempts:
        exits = [r for r in _journal(Path(attempt["dir"])) if r["event"] == "exited"]
        if len(exits) > 1:
            problems.append(f"attempt {attempt['number']}: {len(exits)} exit records")
    if disposition == "succeeded" and not _exit_evidence(attempts[-1] if attempts else None):
        problems.append("succeeded without exit evidence")
    return problems


def _exit_evidence(attempt: dict[str, Any] | None) -> bool:
    if attempt is None or attempt["exit_code"] != 0:
        return False
    exits = [r for r in _journal(Path(attempt["dir"])) if r["event"] == "exited"]
    return len(exits) == 1 and exits[0]["exit_code"] == 0


def _event_problems(harness: Harness, oid: str, disposition: str | None) -> list[str]:
    """The event log caught up: one settlement, and the occurrence's last event is it (or,
    for a success, the delivery after it)."""
    kinds = [k for (k,) in harness.query("SELECT kind FROM events WHERE occurrence_id = ? ORDER BY seq", (oid,))]  # fmt: skip
    last = "delivered" if disposition == "succeeded" else "settled"
    problems = [] if kinds.count("settled") == 1 else [f"{kinds.count('settled')} settled events"]
    if not kinds or kinds[-1] != last:
        problems.append(f"events end with {kinds[-1:]} instead of {last!r}: {kinds}")
    return problems


def _delivery_problems(harness: Harness, oid: str) -> list[str]:
    rows = harness.query("SELECT state, path, size FROM deliveries WHERE occurrence_id = ?", (oid,))
    if not rows or rows[0][0] != "delivered":
        return [f"delivery not complete: {rows}"]
    ((_, path, size),) = rows
    text = Path(path).read_text() if Path(path).exists() else None
    return [] if (text, size) == (OUTPUT, len(OUTPUT)) else [f"delivered {text!r}, size {size}"]


# -- reading the store and the journals ----------------------------------------------------------
def _occurrence(harness: Harness, rid: str | None) -> dict[str, Any] | None:
    rows = harness.query(
        "SELECT id, state, disposition FROM occurrences WHERE routine_id = ? AND kind = 'scheduled'",
        (rid,),
    )
    return dict(zip(("id", "state", "disposition"), rows[0], strict=True)) if rows else None


_ATTEMPT = ("number", "state", "failure_class", "exit_code", "dir")


def _attempts(harness: Harness, rid: str) -> list[dict[str, Any]]:
    rows = harness.query(
        "SELECT a.number, a.state, a.failure_class, a.exit_code, a.id FROM attempts a "
        "JOIN occurrences o ON o.id = a.occurrence_id WHERE o.routine_id = ? ORDER BY a.number",
        (rid,),
    )
    root = harness.data / "attempts"
    attempts = [dict(zip(_ATTEMPT, row, strict=True)) for row in rows]
    for attempt in attempts:
        attempt["dir"] = str(root / attempt["dir"])  # the runtime's own layout: root/attempt id
    return attempts


def _attempts_active(harness: Harness, rid: str) -> bool:
    return any(a["state"] != "settled" for a in _attempts(harness, rid))


def _delivery(harness: Harness, oid: str) -> str | None:
    rows = harness.query("SELECT state FROM deliveries WHERE occurrence_id = ?", (oid,))
    return rows[0][0] if rows else None


def _count(harness: Harness, table: str) -> int:
    return int(harness.query(f"SELECT count(*) FROM {table}")[0][0])


def _journal(directory: Path) -> list[dict[str, Any]]:
    """The journal's records as written (a torn last line is skipped, as the engine does)."""
    path = directory / "journal.jsonl"
    records = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def _alive(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def _stderr(daemon: subprocess.Popen[bytes]) -> str:
    return daemon.communicate(timeout=TIMEOUT)[1].decode()


def _stderr_if_dead(daemon: subprocess.Popen[bytes]) -> str:
    if daemon.poll() is None:
        return "daemon alive"
    return f"daemon exited {daemon.returncode}: {_stderr(daemon)}"
