"""Named failpoints at the crash-matrix boundaries (DESIGN §9).

Armed only by the ``COVEN_FAILPOINT`` environment variable (``name:action``, several separated
by commas) or by a test through :func:`arm`; unarmed, :func:`hit` is one dictionary truth
test. Actions: ``crash`` exits the process at once with status 137 — no cleanup, no
``finally``, no flush, like a kill -9 or a power cut as far as this process is concerned;
``raise`` raises :class:`FailpointHit` (for in-process tests).

The boundaries, in the order an occurrence meets them (see docs in README):
``revision.before_commit`` / ``revision.after_commit`` — a routine's revision (operator);
``plan.written`` — occurrence planning, in the pass's decide transaction;
``claim.written`` — claims, same transaction; ``dispatch.decided`` — dispatch decisions, same
transaction; ``decide.committed`` — after that transaction commits (points 2–4 commit
together, atomically); ``runtime.before_start`` / ``runtime.after_start`` — the runtime
dispatch request; ``runner.started`` (in the runner, after its first journal record) /
``runner.spawn_unrecorded`` (the command spawned, its spawn not yet journaled: no recorded
pid names it) / ``runner.spawned`` (after the command's spawn is journaled);
``exit.observed`` — an exit
collected, before its settlement transaction; ``chain.before_plan`` — in that transaction,
the upstream settled and its downstream occurrences not yet planned (chains, §14);
``settle.committed`` — after the settlement commits; ``delivery.temp_written`` /
``delivery.renamed`` — output temp write and rename;
``receipt.committed`` — after the delivery receipt commits; ``publish.before`` — after an
operator command commits, before the schedulers (this process's and others') are told.
"""

from __future__ import annotations

import os

ENV = "COVEN_FAILPOINT"
CRASH_STATUS = 137

BOUNDARIES = (
    "revision.before_commit", "revision.after_commit", "plan.written", "claim.written",
    "dispatch.decided", "decide.committed", "runtime.before_start", "runtime.after_start",
    "runner.started", "runner.spawn_unrecorded", "runner.spawned", "exit.observed",
    "chain.before_plan", "settle.committed", "delivery.temp_written", "delivery.renamed",
    "receipt.committed", "publish.before",
)  # fmt: skip


class FailpointHit(RuntimeError):
    """An armed ``raise`` failpoint was reached."""


def _parse(spec: str | None) -> dict[str, str]:
    armed: dict[str, str] = {}
    for item in (spec or "").split(","):
        name, _, action = item.strip().partition(":")
        if name:
            if name not in BOUNDARIES:
                raise ValueError(f"{ENV}: unknown failpoint {name!r}")
            armed[name] = action or "crash"
    return armed


_armed: dict[str, str] = _parse(os.environ.get(ENV))


def hit(name: str) -> None:
    """Reach a boundary. Does nothing unless this failpoint is armed."""
    if not _armed:
        return
    action = _armed.get(name)
    if action == "crash":
        os._exit(CRASH_STATUS)
    if action == "raise":
        raise FailpointHit(name)


def arm(name: str, action: str = "raise") -> None:
    _armed.update(_parse(f"{name}:{action}"))


def disarm() -> None:
    _armed.clear()
