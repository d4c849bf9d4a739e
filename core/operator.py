"""The operator API: the one door for people (CLI and GUI) to change anything (DESIGN §10).

Neither the CLI nor the GUI writes lifecycle rows; they call this. Every command runs in one
write transaction — it validates first and changes nothing on bad input — and is appended to
the hash-chained audit log in that same transaction (who, when, what, why, result). A refused
command is audited too, in a transaction of its own. Then the scheduler is woken, in this
process and in any other on the same store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from coven_core.clock import Clock, WakeReason
from coven_core.errors import Conflict, CovenError
from coven_core.integrity import audit
from coven_core.model import RevisionSpec
from coven_core.notation.i18n import ngettext
from coven_core.operations import definitions, drafts, host, pausing, runs, seen, settings, stopping
from coven_core.operations.definitions import DuplicateRoutine, validated
from coven_core.operations.host import ZoneChoice
from coven_core.operations.reconcile import Decision, Outcome, reconcile
from coven_core.operations.runs import RunRef
from coven_core.store.store import Store
from coven_core.system import failpoints

Notify = Callable[[WakeReason], None]
T = TypeVar("T")
Work = Callable[..., T]  # called as work(conn=..., now=...)

__all__ = [
    "Decision", "DuplicateRoutine", "Operator", "Outcome", "RunRef", "ZoneChoice", "validated",
]  # fmt: skip


class Operator:
    def __init__(self, store: Store, clock: Clock, notify: Notify) -> None:
        self.store, self.clock, self._notify = store, clock, notify

    # -- definitions ------------------------------------------------------------------------
    def add_routine(self, name: str, spec: RevisionSpec, anchor: datetime | None = None) -> str:
        """Create a routine; returns its id. Nothing is stored if anything is invalid."""
        work = partial(definitions.add, name=name, spec=spec, anchor=anchor)
        return self._act("routine.add", name, None, work, WakeReason.DEFINITION_CHANGED)

    def import_routines(self, routines: list[tuple[str, RevisionSpec]]) -> list[str]:
        """Create the routines an import's dry run showed, each an audited ``routine.add``;
        refused whole, creating none, if one of the names is taken (DESIGN §15)."""
        with self.store.read() as conn:
            taken = {name for (name,) in conn.execute(
                "SELECT name FROM routines WHERE state != 'deleted'")}  # fmt: skip
        clashes = sorted(taken & {name for name, _ in routines})
        if clashes:
            names = ", ".join(repr(name) for name in clashes)
            said = ngettext(
                "routine {names} already exists: rename or delete it first",
                "routines {names} already exist: rename or delete them first",
                len(clashes),
            )
            raise Conflict(said.format(names=names))
        return [self.add_routine(name, spec) for name, spec in routines]

    def edit_routine(
        self,
        name: str,
        change: Callable[[RevisionSpec], RevisionSpec],
        anchor: datetime | None = None,
    ) -> int:
        """A new revision; re-plans only the moments from now on (see definitions.edit)."""
        work = partial(definitions.edit, name=name, change=change, anchor=anchor)
        return self._act("routine.edit", name, None, work, WakeReason.DEFINITION_CHANGED)

    def edit_routine_to(self, name: str, spec: RevisionSpec) -> int:
        """A new revision saying what a checked form's ``spec`` says; what the form does not
        show is kept (see drafts.edit_to)."""
        return self.edit_routine(name, drafts.edit_to(spec))

    def delete_routine(self, name: str) -> str:
        """No future planning; history is kept; a run in flight is not touched. Returns the
        routine's id."""
        work = partial(definitions.delete, name=name)
        return self._act("routine.delete", name, None, work, WakeReason.DEFINITION_CHANGED)

    # -- pause and resume (idempotent) ------------------------------------------------------
    def pause(self, name: str, reason: str | None = None) -> None:
        self._act("pause", name, reason, partial(pausing.pause, name=name, reason=reason))

    def resume(self, name: str) -> int:
        """Active again; moments that passed while paused become one skipped window."""
        return self._act("resume", name, None, partial(pausing.resume, name=name))

    def pause_all(self, reason: str | None = None) -> None:
        self._act("pause.all", None, reason, partial(pausing.pause_all, reason=reason))

    def resume_all(self) -> int:
        return self._act("resume.all", None, None, pausing.resume_all)

    # -- runs -------------------------------------------------------------------------------
    def run_now(self, name: str, key: str | None = None, *, join_waiting: bool = False) -> RunRef:
        """``join_waiting``: a manual run of the routine not started yet is the answer (its
        ``already_waiting`` set), not a second run (a window's Run now, clicked again)."""
        work = partial(runs.run_now, name=name, key=key, join_waiting=join_waiting)
        return self._act("run-now", name, None, work)

    def probe(self, name: str) -> RunRef:
        """One attempt now on a quarantined routine; it stays quarantined (§6)."""
        work = partial(runs.run_now, name=name, key=None, probe=True)
        return self._act("probe", name, None, work)

    def cancel(self, run_id: str, reason: str | None = None) -> RunRef:
        work = partial(runs.cancel, run_id=run_id, reason=reason)
        return self._act("cancel", run_id, reason, work)

    def cancel_routine(self, name: str, reason: str | None = None) -> list[RunRef]:
        """Cancel every active run of a routine."""
        work = partial(runs.cancel_routine, name=name, reason=reason)
        return self._act("cancel.routine", name, reason, work)

    def stop(self, run_id: str, reason: str | None = None) -> stopping.Stopped:
        """Stop what still runs of a run (its runner, else its command's process group),
        through the cancel path, so that a person can then decide on it. Two audited
        transactions — the request, then what the signals did — and none held between them,
        while the processes are given their stop grace to end."""
        work = partial(stopping.request, run_id=run_id, reason=reason)
        target = self._act("stop", run_id, reason, work)
        stopped = stopping.perform(target)
        record = partial(stopping.record, target=target, stopped=stopped)
        return self._act("stop.result", run_id, reason, record)

    def retry(self, run_id: str) -> RunRef:
        return self._act("retry", run_id, None, partial(runs.retry, run_id=run_id))

    # -- reading receipts -------------------------------------------------------------------
    def mark_seen(self, run_id: str) -> bool:
        """A person opened this run: a failure of it no longer counts in the tray. True if it
        was unseen.

        Not audited and wakes no scheduler, unlike every other command here: it changes no
        lifecycle row and decides nothing (the audit log is the record of decisions, and one
        entry per opened window would bury them); the scheduler has nothing to re-plan. It
        is still one write transaction through this door, so the CLI and the GUI agree."""
        return self._quietly(partial(seen.mark_seen, run_id=run_id))

    def mark_all_seen(self) -> int:
        """Every failed run counts as seen ("mark all as read"); returns how many were not."""
        return self._quietly(seen.mark_all_seen)

    # -- decisions ----------------------------------------------------------------------------
    def reconcile(
        self,
        run_id: str,
        outcome: Outcome,
        reason: str,
        *,
        verified_no_side_effect: bool = False,
        seen_digest: str | None = None,
    ) -> Decision:
        """A person's decision on a run awaiting one; the routine stays paused (§5)."""
        work = partial(
            reconcile, run_id=run_id, outcome=outcome, reason=reason,
            verified_no_side_effect=verified_no_side_effect, seen_digest=seen_digest,
        )  # fmt: skip
        return self._act(f"reconcile.{outcome.value}", run_id, reason, work)

    # -- quarantine -------------------------------------------------------------------------
    def quarantine(self, name: str, reason: str | None = None) -> None:
        self._act("quarantine", name, reason, partial(pausing.quarantine, name=name, reason=reason))

    def release(self, name: str, reason: str | None = None) -> int:
        """Active again with its failure count reset; the quarantined time becomes one
        skipped window."""
        work = partial(pausing.release, name=name, reason=reason)
        return self._act("release", name, reason, work)

    # -- the host's time zone ---------------------------------------------------------------
    def record_zone_change(self, old: str | None, new: str) -> list[ZoneChoice]:
        """Record that the host's zone changed (an event, not a person's command, so it is
        not audited); the routines created as ``local`` a person should be asked about."""
        return host.record_zone_change(self.store, self.clock.now_utc(), old, new)

    def follow_zone(self, name: str, zone: str) -> int:
        """A person's answer to a :class:`ZoneChoice`: the routine follows the host to
        ``zone`` (a new revision)."""
        return self.edit_routine(name, lambda spec: host.follow(spec, zone))

    # -- settings ---------------------------------------------------------------------------
    def set_setting(self, name: str, value: str) -> settings.Value:
        """``coven config set NAME VALUE``; runs claimed from now on use it."""
        work = partial(settings.set_value, name=name, value=value)
        return self._act("config.set", name, None, work, WakeReason.DEFINITION_CHANGED)

    # -- the one way every command runs ------------------------------------------------------
    def _act(
        self,
        action: str,
        target: str | None,
        why: str | None,
        work: Work[T],
        wake: WakeReason = WakeReason.OPERATOR_COMMAND,
    ) -> T:
        now = self.clock.now_utc()
        try:
            with self.store.write() as conn:
                result = work(conn=conn, now=now)
                audit.append(conn, at=now, who=audit.who_am_i(), action=action, target=target,
                             why=why, result="ok", details=_details(result))  # fmt: skip
                failpoints.hit("revision.before_commit")
        except (CovenError, ValueError) as error:
            self._audit_refusal(action, target, why, error, now)
            raise
        failpoints.hit("revision.after_commit")
        failpoints.hit("publish.before")
        self._notify(wake)
        return result

    def _quietly(self, work: Work[T]) -> T:
        """A write that is neither audited nor a reason to wake the scheduler."""
        with self.store.write() as conn:
            return work(conn=conn, now=self.clock.now_utc())

    def _audit_refusal(
        self, action: str, target: str | None, why: str | None, error: Exception, now: datetime
    ) -> None:
        """A refused command changed nothing; the refusal itself is still on record."""
        try:
            with self.store.write() as conn:
                audit.append(conn, at=now, who=audit.who_am_i(), action=action, target=target,
                             why=why, result=f"refused: {error}")  # fmt: skip
        except CovenError:
            pass  # the store itself is failing: the original error is what matters


def _details(result: object) -> Mapping[str, Any]:
    if hasattr(result, "to_json"):
        return dict(result.to_json())
    if isinstance(result, list):
        return {"items": [_details(item) for item in result]}
    if isinstance(result, str | int):
        return {"result": result}
    return {}
