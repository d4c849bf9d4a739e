"""The reasons the engine writes down, and those reasons in a person's language.

A routine's state reason, an attempt's message and a run's reason are stored as English text:
they are also what the event log and the audit keep, and a person's own reason ("keeping old
downloads") is kept as typed. The sentences the engine writes itself are listed here, so where
a reason is shown (:func:`reason_text`) it is recognised and translated (DESIGN §12), part by
part ("ambiguous: …; not retried: …"); any other text is shown as it is.
"""

from __future__ import annotations

import re
from functools import cache

from coven_core.notation.i18n import N_, _

AWAITS_DECISION = N_("run {run} needs your decision (coven attention)")
KEPT_PAUSED = N_("paused after a decision on run {run}; resume it when ready")
FAILED_IN_A_ROW = N_("{count} consecutive failed occurrences")
QUARANTINED_BY = N_("quarantined by {who}")
DELETED_BY_A_PERSON = N_("deleted by a person")
#: A person's decision as the run's stored reason (operations/reconcile). Not translated as it
#: stands: :func:`decided` reads it back, and a run's story says it in its own words.
DECIDED_AS = "reconciled as {outcome} by {who}: {note}"

#: What the runtime, the runner and the retry policy write about an attempt (the runtime's
#: and the retry policy's own words: core/runtime, core/scheduling/retry.py).
_ATTEMPT_MESSAGES = (
    N_("exited with status {code}"),
    N_("killed by signal {signal}"),
    N_("cancelled"),
    N_("cancelled, but the stop was not confirmed"),
    N_("stopped from outside Coven ({name} to its runner)"),
    N_("stopped after its timeout"),
    N_("stopped after its timeout, but the stop was not confirmed"),
    N_("the runner is gone and its journal shows no outcome{detail}"),
    N_(
        "the runner was lost while its command ran; the command ran on and has ended, its exit "
        "status unknown{detail}"
    ),
    N_("the runner ended before it started the command; nothing ran"),
    N_("the scheduler stopped while the command may have been running; outcome unknown"),
    N_("retries exhausted after {count} attempt(s)"),
    N_("the wall clock moved back"),  # why a replanning happened (scheduling/watch.py)
    # what a stop did, part by part (operations/stopping.py)
    N_("runner {pid} ended after the stop was requested"),
    N_("command {pid} ended after the stop was requested"),
    N_("runner {pid} asked to stop (SIGUSR1)"),
    N_("command group {pid} stopped ({signal})"),
    N_("command group {pid} signalled (SIGTERM, SIGKILL)"),
    N_("all gone"),
    N_("NOT confirmed: {pids} left"),
    N_("not retried: the routine itself is invalid"),
    N_("not retried: refused by the system (needs a new decision)"),
    N_("not retried here: the scheduler retries its own operation"),
    N_("not retried: it may have run (the routine is not idempotent)"),
    N_("not retried: only the delivery is retried"),
    N_("not retried: cancelled by a person"),  # what older stores hold
    N_("not retried: it was stopped"),
    N_("not retried: it ran past its timeout"),
)

_TEMPLATES = (
    AWAITS_DECISION, KEPT_PAUSED, FAILED_IN_A_ROW, QUARANTINED_BY, DELETED_BY_A_PERSON,
    *_ATTEMPT_MESSAGES,
)  # fmt: skip

#: What the journal's reader notes about a journal it could not read whole (the runner's
#: words: core/runner/journal.py, core/runtime/runner.py), "; "-joined in the ``{detail}`` of
#: "…shows no outcome ({detail})". A parser's own error (``{error}``) stays as it is.
_JOURNAL_PROBLEMS = (
    N_("the journal {path} is gone"),
    N_(
        "the machine has restarted since, and a journal reaches the disk only with its "
        "outcome: nothing proves the command did not start"
    ),
    N_("line {number}: incomplete last line ignored"),
    N_("line {number}: skipped: {error}"),
    N_("line {number}: unknown event {event} skipped"),
    N_("line {number}: duplicate {event} ignored (the first counts)"),
    N_("line {number}: {event} without {field} skipped"),
    N_("line {number}: malformed {event} skipped: {error}"),
)

#: A failure class (model.FailureClass), the head of "ambiguous: …": English keeps the
#: engine's word, other languages say it in theirs.
FAILURE_CLASSES = (
    N_("validation"), N_("refused"), N_("store_transient"), N_("runtime_unavailable"),
    N_("action_failed"), N_("ambiguous"), N_("delivery_failed"), N_("cancelled"),
    N_("timed_out"),
)  # fmt: skip


def reason_text(reason: str, locale: str | None = None) -> str:
    """``reason`` in ``locale``'s words where the engine wrote it, else as it is."""
    whole = _known(reason, locale)
    if whole is not None:
        return whole
    parts, said = reason.split("; "), []
    start = 0
    while start < len(parts):
        end, words = _span(parts, start, locale)
        said.append(words)
        start = end
    return "; ".join(said)


def _span(parts: list[str], start: int, locale: str | None) -> tuple[int, str]:
    """The words for ``parts[start]``, or for it and the parts after it where the engine's
    sentence itself holds "; " ("the scheduler stopped while …; outcome unknown", once
    German in its first half only); where the span ends."""
    single = _said(parts[start], locale)
    if single is not None:
        return start + 1, single
    for end in range(start + 2, len(parts) + 1):
        joined = _said("; ".join(parts[start:end]), locale)
        if joined is not None:
            return end, joined
    return start + 1, _part(parts[start], locale)


def _said(text: str, locale: str | None) -> str | None:
    """``text`` in ``locale``'s words when all of it is the engine's, else None."""
    found = _known(text, locale)
    if found is not None:
        return found
    head, colon, rest = text.partition(": ")
    if colon and head in FAILURE_CLASSES:
        said = _said(rest, locale)
        if said is not None:
            return f"{failure_text(head, locale)}: {said}"
    return None


#: What a window says for a pause that waits on a person: the window shows the run and has
#: its own way to act (Needs attention, Resume), so neither the run's id nor the command
#: line's way is in it.
_IN_A_WINDOW = {
    AWAITS_DECISION: N_("a run needs your decision in Needs attention"),
    KEPT_PAUSED: N_("kept paused after your decision; resume it when ready"),
}


def window_reason_text(reason: str, locale: str | None = None) -> str:
    """``reason`` as a window says it: :func:`reason_text`, but a pause that waits on a
    person points to the window's own way to act."""
    for template, words in _IN_A_WINDOW.items():
        if _pattern(template).fullmatch(reason):
            return _(words, locale)
    return reason_text(reason, locale)


def decided(reason: str | None) -> dict[str, str] | None:
    """A decision's parts (``outcome``, ``who``, ``note``) from a reason :data:`DECIDED_AS`
    wrote, else None."""
    found = _pattern(DECIDED_AS).fullmatch(reason or "")
    return None if found is None else found.groupdict()


def failure_text(failure_class: str, locale: str | None = None) -> str:
    """A failure class in ``locale``'s words; an unknown one as it is."""
    return _(failure_class, locale) if failure_class in FAILURE_CLASSES else failure_class


def _part(part: str, locale: str | None) -> str:
    found = _known(part, locale)
    if found is not None:
        return found
    head, colon, rest = part.partition(": ")
    if colon and head in FAILURE_CLASSES:
        return f"{failure_text(head, locale)}: {reason_text(rest, locale)}"
    return part


def _known(text: str, locale: str | None, templates: tuple[str, ...] = _TEMPLATES) -> str | None:
    for template in templates:
        found = _pattern(template).fullmatch(text)
        if found is not None:
            fields = found.groupdict()
            if fields.get("detail"):
                fields["detail"] = _detail(fields["detail"], locale)
            return _(template, locale).format(**fields)
    return None


def _detail(detail: str, locale: str | None) -> str:
    """`` (problem; problem)`` with each problem the journal's reader noted in ``locale``'s
    words; anything else as it is."""
    inner = detail.removeprefix(" (").removesuffix(")")
    if inner == detail:
        return detail
    said = [_known(part, locale, _JOURNAL_PROBLEMS) or part for part in inner.split("; ")]
    return f" ({'; '.join(said)})"


@cache
def _pattern(template: str) -> re.Pattern[str]:
    """``run {run} needs…`` as ``run (?P<run>.+?) needs…`` (``{detail}`` may be empty, and a
    part may hold several lines: a person's note, a command's message)."""
    parts = re.split(r"\{(\w+)\}", template)
    pattern = "".join(
        f"(?P<{part}>.*?)" if index % 2 else re.escape(part) for index, part in enumerate(parts)
    )
    return re.compile(pattern, re.DOTALL)
