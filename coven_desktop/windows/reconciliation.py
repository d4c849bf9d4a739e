"""The Needs attention window: every run awaiting a person, with its evidence, and the
decision (DESIGN §5, §10, §12; issue #8).

The evidence is the engine's own (:func:`coven_core.views.attention.attention`): the runner's
journal, whether the runner and the command still run (pid, start time), the output's tail,
timestamps, the attempts and what the engine already tried. A decision — *It succeeded*,
*It failed*, *Retry it* (only once the person ticks that they verified there was no side
effect) — needs a reason and is sent with the digest of the evidence as shown, so evidence
that changed meanwhile is refused and shown again. The decision and its audit entry appear at
once; the routine stays paused until the person resumes it here. While the run's runner or
command still runs the engine refuses any decision (the refusal is shown); *Stop the command*
stops it through the engine's ``stop`` (issue #18), and then the person decides.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from coven_core.operator import Decision, Outcome
from coven_core.queries import (
    AttemptEvidence,
    AuditEntry,
    Item,
    attention,
    describe_overrun,
    recent_audit,
)
from coven_desktop.windows.common import (
    LivePage,
    Row,
    RowsModel,
    act,
    error_label,
    moment,
    moment_text,
    parse_instant,
    show_error,
    table,
)

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

RECOVERY_REQUIRED = "recovery_required"


@dataclass(frozen=True)
class Decided:
    """The last decision taken here, shown until the next one."""

    decision: Decision
    entry: AuditEntry | None


class Page(LivePage):
    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(desktop, parent)
        self.items: list[Item] = []
        self.shown: Item | None = None
        self.decided: Decided | None = None
        layout = QVBoxLayout(self)
        self.headline = QLabel(self)
        self.headline.setWordWrap(True)
        layout.addWidget(self.headline)
        layout.addWidget(self._decided_banner())
        splitter = QSplitter(self)
        splitter.addWidget(self._item_list(splitter))
        splitter.addWidget(self._detail(splitter))
        splitter.setSizes([350, 800])
        splitter.setStretchFactor(1, 1)
        layout.addWidget(splitter, 1)
        self.splitter = splitter
        layout.addStretch(0)
        self._show_item(None)

    # -- building ---------------------------------------------------------------------------
    def _item_list(self, parent: QWidget) -> QWidget:
        self.item_model = RowsModel(
            [self.tr("Routine"), self.tr("Planned for"), self.tr("Waiting for")], self
        )
        self.item_view = table(self.item_model, parent, stretch=2)
        self.item_view.selectionModel().currentRowChanged.connect(
            lambda current, _previous: self._select(current.row())
        )
        return self.item_view

    def _detail(self, parent: QWidget) -> QWidget:
        detail = QWidget(parent)
        layout = QVBoxLayout(detail)
        layout.setContentsMargins(0, 0, 0, 0)
        self.summary = QLabel(detail)
        self.summary.setWordWrap(True)
        self.changed_note = QLabel(detail)
        self.changed_note.setWordWrap(True)
        self.changed_note.hide()
        self.evidence = QSplitter(Qt.Orientation.Vertical, detail)
        self._evidence_tabs()
        layout.addWidget(self.summary)
        layout.addWidget(self.changed_note)
        layout.addWidget(self.evidence, 1)
        layout.addWidget(self._decision_box(detail))
        return detail

    def _evidence_models(self) -> None:
        tr = self.tr
        self.attempt_model = RowsModel([tr("#"), tr("State"), tr("Failure"), tr("Claimed"),
                                        tr("Started"), tr("Exited")], self)  # fmt: skip
        self.process_model = RowsModel([tr("Attempt"), tr("Process"), tr("PID"), tr("Started"),
                                        tr("Running now")], self)  # fmt: skip
        self.journal_model = RowsModel([tr("Attempt"), tr("Time"), tr("Record"), tr("Details")],
                                       self)  # fmt: skip
        self.tried_model = RowsModel([tr("Time"), tr("Step"), tr("Details")], self)

    def _evidence_tabs(self) -> None:
        """Attempts and processes always in view; the journal, output and engine steps in
        tabs below them."""
        self._evidence_models()
        split = self.evidence
        split.addWidget(table(self.attempt_model, split, stretch=2))
        split.addWidget(table(self.process_model, split, stretch=3))
        tabs = QTabWidget(split)
        split.addWidget(tabs)
        split.setSizes([70, 90, 300])
        split.setStretchFactor(2, 1)
        self.output = QPlainTextEdit(tabs)
        self.output.setReadOnly(True)
        self.output.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        tried = table(self.tried_model, tabs, stretch=2, wrap=True)
        tabs.addTab(table(self.journal_model, tabs, stretch=3, wrap=True), self.tr("Journal"))
        tabs.addTab(self.output, self.tr("Output"))
        tabs.addTab(tried, self.tr("What Coven tried"))

    def _decision_box(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox(self.tr("Your decision"), parent)
        layout = QVBoxLayout(box)
        self.reason = QLineEdit(box)
        self.reason.setPlaceholderText(
            self.tr("Why? Say what you checked, e.g. “the backup is complete on the disk”")
        )
        self.decision_error = error_label(box)
        self.reason.textChanged.connect(lambda _text: show_error(self.decision_error, None))
        self.verified = QCheckBox(self.tr("I verified it had no side effect"), box)
        self.succeeded_button = QPushButton(self.tr("It succeeded"), box)
        self.failed_button = QPushButton(self.tr("It failed"), box)
        self.retry_button = QPushButton(self.tr("Retry it"), box)
        self.succeeded_button.clicked.connect(lambda: self.decide(Outcome.SUCCEEDED))
        self.failed_button.clicked.connect(lambda: self.decide(Outcome.FAILED))
        self.retry_button.clicked.connect(lambda: self.decide(Outcome.RETRY))
        self.stop_button = QPushButton(self.tr("Stop the command"), box)
        self.stop_button.clicked.connect(self.stop)
        self.stop_result = QLabel(box)
        self.stop_result.setWordWrap(True)
        self.verified.toggled.connect(lambda _on: self._enable_actions())
        buttons = QHBoxLayout()
        for button in (self.succeeded_button, self.failed_button, self.retry_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        layout.addWidget(self.reason)
        layout.addWidget(self.decision_error)
        layout.addWidget(self.verified)
        layout.addLayout(buttons)
        layout.addWidget(self.stop_result)
        self.decision_box = box
        return box

    def _decided_banner(self) -> QFrame:
        banner = QFrame(self)
        banner.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(banner)
        self.decided_text = QLabel(banner)
        self.decided_text.setWordWrap(True)
        self.audit_text = QLabel(banner)
        self.audit_text.setWordWrap(True)
        self.paused_text = QLabel(banner)
        self.paused_text.setWordWrap(True)
        self.resume_button = QPushButton(banner)
        self.resume_button.clicked.connect(self.resume)
        self.resume_error = error_label(banner)
        row = QHBoxLayout()
        row.addWidget(self.paused_text, 1)
        row.addWidget(self.resume_button)
        for widget in (self.decided_text, self.audit_text):
            layout.addWidget(widget)
        layout.addLayout(row)
        layout.addWidget(self.resume_error)
        banner.hide()
        self.banner = banner
        return banner

    # -- loading ----------------------------------------------------------------------------
    async def reload(self) -> None:
        now = self.desktop.clock.now_utc()
        items = await self.desktop.service.call(lambda engine: attention(engine.store, now))
        self.show_items(items)

    def show_items(self, items: list[Item]) -> None:
        previous = self.shown
        self.items = items
        self._headline()
        self.item_model.set_rows([self._item_row(item) for item in items])
        self.splitter.setVisible(bool(items))  # nothing to show: the headline says so
        keep = next((n for n, item in enumerate(items) if previous and _same(item, previous)), 0)
        if items:
            self.item_view.selectRow(keep)
        self._select(keep if items else -1)
        changed = previous is not None and self.shown is not None and _same(previous, self.shown)
        self.changed_note.setVisible(changed and previous.digest() != self.shown.digest())  # type: ignore[union-attr]
        self.changed_note.setText(
            self.tr("The evidence changed while you were looking; this is what it says now.")
        )

    def _headline(self) -> None:
        count = len(self.items)
        if not count:
            text = self.tr(
                "Nothing needs your attention. Coven asks here when it cannot know "
                "what happened to a run."
            )
        else:
            text = self.tr(
                "%n run(s) need your decision. Coven cannot know what happened; "
                "look at the evidence, then say what you found.",
                "",
                count,
            )
        self.headline.setText(text)

    def _item_row(self, item: Item) -> Row:
        return Row(
            [
                item.routine,
                moment_text(item.scheduled_utc, self.locale_name, seconds=False),
                self._kind(item.kind),
            ],
            tooltip=item.occurrence_id,
        )

    def _kind(self, kind: str) -> str:
        return {
            RECOVERY_REQUIRED: self.tr("your decision"),
            "stuck_cancel": self.tr("a stop to be confirmed"),
            "delivery_failing": self.tr("its output to be delivered"),
            "overrun": self.tr("a run far past its usual time"),
        }.get(kind, kind)

    def _select(self, row: int) -> None:
        self._show_item(self.items[row] if 0 <= row < len(self.items) else None)

    # -- one item's evidence ----------------------------------------------------------------
    def _show_item(self, item: Item | None) -> None:
        if item is None or self.shown is None or not _same(item, self.shown):
            show_error(self.decision_error, None)  # a refusal was about the run shown before
            self.stop_result.setText("")
        self.shown = item
        self.evidence.setVisible(item is not None)
        self.decision_box.setVisible(item is not None)
        if item is None:
            self.summary.setText("")
            for model in (
                self.attempt_model,
                self.process_model,
                self.journal_model,
                self.tried_model,
            ):
                model.set_rows([])
            self.output.setPlainText("")
            return
        self.summary.setText(self._summary(item))
        self.attempt_model.set_rows([self._attempt_row(a) for a in item.attempts])
        self.process_model.set_rows([row for a in item.attempts for row in self._processes(a)])
        self.journal_model.set_rows([row for a in item.attempts for row in self._journal(a)])
        self.tried_model.set_rows([self._tried_row(line) for line in item.tried])
        self.output.setPlainText(self._output(item))
        self._enable_actions()

    def _summary(self, item: Item) -> str:
        lines = [
            self.tr("<b>{routine}</b> — the run planned for {when} ({utc} UTC)").format(
                routine=_html(item.routine),
                when=moment_text(item.scheduled_utc, self.locale_name),
                utc=_html(item.scheduled_utc[:16].replace("T", " ")),
            ),
            self.tr("Run {run} · occurrence {occurrence}").format(
                run=_html(item.run_id or "—"), occurrence=_html(item.occurrence_id)
            ),
            _html(self._explanation(item)),
        ]
        if item.reason:
            lines.append(self.tr("Why Coven stopped: {reason}").format(reason=_html(item.reason)))
        return "<br>".join(lines)

    def _explanation(self, item: Item) -> str:
        if item.kind == RECOVERY_REQUIRED:
            return self.tr(
                "The runner went away while the command may have been running, so "
                "Coven cannot know whether it ran or how it ended. It will not run "
                "it again by itself."
            )
        if item.kind == "stuck_cancel":
            return self.tr(
                "Coven asked this run to stop and has not had the stop confirmed. "
                "Check the processes below; the next pass settles it once they end."
            )
        if item.kind == "overrun":
            running = describe_overrun(item.running_seconds, item.usual_seconds, self.locale_name)
            return self.tr(
                "This run is still going, far past its routine's usual time ({running}). "
                "Coven does not stop it for that; its timeout does, or cancel it yourself."
            ).format(running=running)
        return self.tr(
            "The run succeeded but its output could not be delivered: {error}. "
            "Coven keeps trying; free some space or fix the folder's permissions."
        ).format(error=item.delivery_error or "—")

    def _attempt_row(self, attempt: AttemptEvidence) -> Row:
        locale = self.locale_name
        return Row(
            [
                str(attempt.number),
                attempt.state,
                attempt.failure_class or "—",
                moment_text(attempt.claimed_at, locale),
                moment_text(attempt.started_at, locale),
                moment_text(attempt.exited_at, locale),
            ],
            tooltip=attempt.message,
        )

    def _processes(self, attempt: AttemptEvidence) -> list[Row]:
        roles = {"runner": self.tr("runner"), "command": self.tr("command")}
        return [
            Row(
                [
                    str(attempt.number),
                    roles[fact.role],
                    str(fact.pid or "—"),
                    moment(fact.started_at, self.locale_name),
                    self.tr("yes, still running") if fact.alive else self.tr("no"),
                ],
                colour="#1b5e20" if fact.alive else None,
                bold=fact.alive,
            )
            for fact in attempt.processes()
        ]

    def _journal(self, attempt: AttemptEvidence) -> list[Row]:
        rows = []
        for record in attempt.journal:
            details = {k: v for k, v in record.items() if k not in ("event", "at")}
            at = record.get("at")
            rows.append(
                Row(
                    [
                        str(attempt.number),
                        moment_text(at if isinstance(at, str) else None, self.locale_name),
                        str(record.get("event", "?")),
                        _compact(details),
                    ]
                )
            )
        rows += [
            Row([str(attempt.number), "—", self.tr("problem"), problem], colour="#b00020")
            for problem in attempt.journal_problems
        ]
        return rows

    def _tried_row(self, line: str) -> Row:
        stamp, _, rest = line.partition(" ")
        step, _, data = rest.partition(" ")
        at = parse_instant(stamp)
        return Row([moment(at, self.locale_name) if at else stamp, step, data], tooltip=line)

    def _output(self, item: Item) -> str:
        with_output = [a for a in item.attempts if a.stdout_tail or a.stderr_tail]
        if not with_output:
            return self.tr("(no output was captured)")
        last = with_output[-1]
        parts = []
        for name, tail in (("stdout", last.stdout_tail), ("stderr", last.stderr_tail)):
            if tail:
                header = self.tr("— the end of {stream} (attempt {number}) —")
                parts.append(header.format(stream=name, number=last.number) + "\n" + tail)
        return "\n".join(parts)

    def _enable_actions(self) -> None:
        decidable = self.shown is not None and self.shown.kind == RECOVERY_REQUIRED
        for widget in (self.reason, self.verified, self.succeeded_button, self.failed_button):
            widget.setEnabled(decidable)
        self.retry_button.setEnabled(decidable and self.verified.isChecked())
        self.stop_button.setVisible(decidable and _still_running(self.shown))

    # -- deciding ---------------------------------------------------------------------------
    def decide(self, outcome: Outcome) -> None:
        item, reason = self.shown, self.reason.text().strip()
        if item is None or item.run_id is None or item.kind != RECOVERY_REQUIRED:
            return
        if not reason:
            show_error(
                self.decision_error,
                self.tr("Give a reason: what did you check? It is kept with your decision."),
            )
            self.reason.setFocus()
            return
        self.spawn(self._reconcile(item, outcome, reason, self.verified.isChecked()))

    def stop(self) -> None:
        item = self.shown
        if item is not None and item.run_id is not None:
            self.spawn(self._stop(item.run_id, self.reason.text().strip() or None))

    async def _stop(self, run_id: str, reason: str | None) -> None:
        done = await act(self.desktop, lambda engine: engine.operator.stop(run_id, reason))
        await self.reload()  # the processes are gone, or not: the evidence says which
        if not done.ok or done.result is None:
            show_error(self.decision_error, done.refusal)
            return
        show_error(self.decision_error, None)
        self.stop_result.setText(
            self.tr("Stopped: {result}. Now decide what happened.").format(
                result=done.result.result
            )
        )

    async def _reconcile(self, item: Item, outcome: Outcome, reason: str, verified: bool) -> None:
        run_id, seen = item.run_id or "", item.digest()
        done = await act(
            self.desktop,
            lambda engine: engine.operator.reconcile(
                run_id, outcome, reason, verified_no_side_effect=verified, seen_digest=seen
            ),
        )
        if not done.ok or done.result is None:
            await self.reload()  # refused (the evidence changed, say): show it as it is now
            show_error(self.decision_error, done.refusal)
            return
        entries = await self.desktop.service.call(
            lambda engine: recent_audit(engine.store, target=run_id, limit=1)
        )
        self.decided = Decided(done.result, entries[0] if entries else None)
        self.reason.clear()
        self.verified.setChecked(False)
        self._show_decided()
        await self.reload()

    def _show_decided(self) -> None:
        decided = self.decided
        if decided is None:
            self.banner.hide()
            return
        decision = decided.decision
        words = {
            Outcome.SUCCEEDED: self.tr("succeeded"),
            Outcome.FAILED: self.tr("failed"),
            Outcome.RETRY: self.tr("to be retried"),
        }
        self.decided_text.setText(
            self.tr("Recorded: run {run} of {routine} {outcome} — “{reason}”.").format(
                run=decision.run_id,
                routine=decision.routine,
                outcome=words[decision.outcome],
                reason=decision.reason,
            )
        )
        self.audit_text.setText(self._audit_line(decided.entry, decision))
        self._show_paused(decision.routine, decision.routine_state)
        show_error(self.resume_error, None)
        self.banner.show()

    def _audit_line(self, entry: AuditEntry | None, decision: Decision) -> str:
        if entry is None:
            return self.tr("The audit entry could not be read back; see `coven audit`.")
        return self.tr(
            "Audit entry {seq}: {action} by {who} at {at}, evidence {digest}…, "
            "result {result} (chained {hash}…)."
        ).format(
            seq=entry.seq,
            action=entry.action,
            who=entry.who,
            at=moment(entry.at, self.locale_name),
            digest=decision.evidence_digest[:12],
            result=entry.result,
            hash=entry.hash[:12],
        )

    def _show_paused(self, routine: str, state: str) -> None:
        paused = state == "paused"
        if paused:
            text = self.tr("The routine {routine} is paused: nothing runs until you resume it.")
        else:
            text = self.tr("The routine {routine} is {state}.")
        self.paused_text.setText(text.format(routine=routine, state=state))
        self.resume_button.setText(self.tr("Resume {routine}").format(routine=routine))
        self.resume_button.setVisible(paused)

    def resume(self) -> None:
        if self.decided is not None:
            self.spawn(self._resume(self.decided.decision.routine))

    async def _resume(self, routine: str) -> None:
        done = await act(self.desktop, lambda engine: engine.operator.resume(routine))
        if not done.ok:
            show_error(self.resume_error, done.refusal)
            return
        skipped = done.result or 0
        self.paused_text.setText(
            self.tr(
                "{routine} is active again; %n moment(s) that passed "
                "while it was paused were recorded as skipped.",
                "",
                skipped,
            ).format(routine=routine)
        )
        self.resume_button.hide()
        await self.reload()


def _still_running(item: Item | None) -> bool:
    return item is not None and any(a.runner_alive or a.command_alive for a in item.attempts)


def _same(a: Item, b: Item) -> bool:
    return (a.kind, a.occurrence_id) == (b.kind, b.occurrence_id)


def _compact(details: dict[str, object]) -> str:
    return ", ".join(f"{key}={json.dumps(value, default=str)}" for key, value in details.items())


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
