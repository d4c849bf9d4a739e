"""The Needs attention window: every run awaiting a person, with its evidence, and a safe
decision (DESIGN §5, §8, §12; issues #8, #21).

The evidence is the engine's own (:func:`coven_core.views.attention.attention`): the command
line, the runner's journal, whether the runner and the command still run (pid and start
time), the output's tail, the attempts and what Coven tried, in sentences. While the run's
runner or command still runs the engine refuses any decision, so the page says so in amber,
shows the process, offers *Stop the command* (the engine's ``stop``) and *Re-check*, looks again
by itself when the process ends (:mod:`~coven_desktop.osnotify.process_end`), and keeps the
decision buttons disabled, the reason in their tooltip. A decision — *It succeeded*, *It
failed*, *Retry it* (only once the person ticks that they verified there was no side effect)
— needs a reason and a confirmation that says what it will do, and is sent with the digest
of the evidence as shown, so evidence that changed meanwhile is refused and shown again.
Its receipt (the decision and its audit entry, and Resume: the routine stays paused) stays
until the person picks the next case.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontDatabase, QFontMetrics, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from coven_core import queries
from coven_core.operator import Decision, Outcome
from coven_core.queries import (
    AuditEntry,
    Item,
    _,
    attention,
    decision_consequence,
    describe_overrun,
    ngettext,
    recent_audit,
)
from coven_desktop.osnotify.process_end import ProcessEnds
from coven_desktop.windows.common import (
    LivePage,
    Row,
    RowsModel,
    act,
    ask,
    error_label,
    moment,
    moment_text,
    named,
    show_error,
    table,
)
from coven_desktop.windows.reconciliation_evidence import Evidence
from coven_desktop.windows.tones import Tone, Tones, colour

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

RECOVERY_REQUIRED = "recovery_required"
#: How many cases the list shows before it scrolls: the evidence needs the height.
LIST_ROWS = 4
#: The widest a live process's command line is drawn in the amber notice (then elided).
COMMAND_WIDTH = 460


@dataclass(frozen=True)
class Decided:
    """The last decision taken here, shown until the person picks the next case."""

    decision: Decision
    entry: AuditEntry | None


@dataclass(frozen=True)
class Live:
    """A process of the shown run that still runs: it blocks every decision (DESIGN §8)."""

    attempt: int
    role: str  # runner | command
    pid: int | None
    started_at: datetime | None
    command_line: str | None


class Page(LivePage):
    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(desktop, parent)
        self.items: list[Item] = []
        self.shown: Item | None = None
        self.decided: Decided | None = None
        self.confirmation: QMessageBox | None = None
        self._choosing = False  # the page itself selects a row: no receipt to clear
        self._asked = False  # a reload the person asked for (stop, re-check): no "changed" note
        self._said_error = False  # the line under the amber notice reports a failure
        self.tones = Tones(self)
        self.process_ends = ProcessEnds(self)  # what still runs: looked at again when it ends
        self.process_ends.ended.connect(self.recheck)
        layout = QVBoxLayout(self)
        self.headline = QLabel(self)
        self.headline.setWordWrap(True)
        layout.addWidget(self.headline)
        layout.addWidget(self._decided_banner())
        layout.addWidget(self._item_list())
        layout.addWidget(self._detail(), 1)
        layout.addStretch(0)  # takes the height while the detail is hidden (none is shown)
        self.tones.also(lambda _palette: self._show_item(self.shown))  # live rows are amber
        self.tones.also(self._paint_said)
        self._show_item(None)

    # -- building ---------------------------------------------------------------------------
    def _item_list(self) -> QWidget:
        self.item_model = RowsModel([_("Routine"), _("Planned for"), _("Waiting for")], self)
        self.item_view = table(self.item_model, self, stretch=0)
        self.item_view.setAccessibleName(_("Runs that need your decision"))
        self.item_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.item_view.selectionModel().currentRowChanged.connect(
            lambda current, _previous: self._picked(current.row())
        )
        return self.item_view

    def _detail(self) -> QWidget:
        detail = QWidget(self)
        layout = QVBoxLayout(detail)
        layout.setContentsMargins(0, 0, 0, 0)
        self.summary = QLabel(detail)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.changed_note = QLabel(detail)
        self.changed_note.setWordWrap(True)
        self.changed_note.hide()
        self.stop_result = QLabel(detail)
        self.stop_result.setWordWrap(True)
        self.stop_result.hide()
        self.evidence = Evidence(self.locale_name, self.tones, detail)
        for widget in (self.summary, self._command_row(detail), self._live_banner(detail),
                       self.stop_result, self.changed_note):  # fmt: skip
            layout.addWidget(widget)
        layout.addWidget(self.evidence, 1)
        layout.addWidget(self._decision_box(detail))
        self.detail = detail
        return detail

    def _command_row(self, parent: QWidget) -> QWidget:
        """The command line the run ran, whole, selectable, never widening the page."""
        row = QWidget(parent)
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        label = QLabel(_("Command:"), row)
        self.command = QLineEdit(row)
        self.command.setReadOnly(True)
        self.command.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.command.setAccessibleName(_("The run's command line"))
        label.setBuddy(self.command)
        self.cwd = QLabel(row)
        layout.addWidget(label)
        layout.addWidget(self.command, 1)
        layout.addWidget(self.cwd)
        return row

    def _live_banner(self, parent: QWidget) -> QFrame:
        """In amber: what of the run still runs, and the ways out (stop it, or look again)."""
        banner = QFrame(parent)
        banner.setObjectName("liveBanner")
        self.tones.banner(banner, Tone.WARNING)
        layout = QVBoxLayout(banner)
        title_row = QHBoxLayout()
        icon = QLabel(banner)
        size = self.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize)
        warning = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        icon.setPixmap(warning.pixmap(QSize(size, size)))
        self.live_title = QLabel(_("Still running — no decision yet"), banner)
        self.tones.text(self.live_title, Tone.WARNING, bold=True)
        title_row.addWidget(icon)
        title_row.addWidget(self.live_title, 1)
        self.live_text = QLabel(banner)
        self.live_text.setWordWrap(True)
        self.live_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stop_button = QPushButton(_("Stop the command"), banner)
        self.stop_button.setToolTip(
            _("Coven asks it to end, and forces it after the routine's stop grace")
        )
        self.stop_button.clicked.connect(self.stop)
        self.recheck_button = QPushButton(_("Re-check"), banner)
        self.recheck_button.setToolTip(_("Look again whether it still runs"))
        self.recheck_button.clicked.connect(self.recheck)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.recheck_button)
        buttons.addWidget(self.stop_button)
        layout.addLayout(title_row)
        layout.addWidget(self.live_text)
        layout.addLayout(buttons)
        banner.hide()
        self.live_banner = banner
        return banner

    def _decision_box(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox(_("Your decision"), parent)
        layout = QVBoxLayout(box)
        self.reason = QLineEdit(box)
        self.reason.setPlaceholderText(
            _("Why? Say what you checked, e.g. “the backup is complete on the disk”")
        )
        self.reason.setAccessibleName(_("Your reason"))
        self.decision_error = error_label(box, self.tones)
        self.reason.textChanged.connect(lambda _text: show_error(self.decision_error, None))
        self.verified = QCheckBox(_("I verified it had no side effect"), box)
        self.verified.toggled.connect(lambda _on: self._enable_actions())
        self.succeeded_button = QPushButton(_("It succeeded"), box)
        self.failed_button = QPushButton(_("It failed"), box)
        self.retry_button = QPushButton(_("Retry it"), box)
        self.succeeded_button.clicked.connect(lambda: self.decide(Outcome.SUCCEEDED))
        self.failed_button.clicked.connect(lambda: self.decide(Outcome.FAILED))
        self.retry_button.clicked.connect(lambda: self.decide(Outcome.RETRY))
        buttons = QHBoxLayout()
        buttons.addWidget(self.verified)
        buttons.addStretch(1)
        for button in (self.succeeded_button, self.failed_button, self.retry_button):
            buttons.addWidget(button)
        layout.addWidget(self.reason)
        layout.addWidget(self.decision_error)
        layout.addLayout(buttons)
        self.decision_box = box
        return box

    def _decided_banner(self) -> QFrame:
        banner = QFrame(self)
        banner.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(banner)
        self.decided_text = QLabel(banner)
        self.decided_text.setWordWrap(True)
        self.decided_text.setTextFormat(Qt.TextFormat.PlainText)  # the reason is the person's
        self.audit_text = QLabel(banner)
        self.audit_text.setWordWrap(True)
        self.paused_text = QLabel(banner)
        self.paused_text.setWordWrap(True)
        self.resume_button = named(QPushButton(banner), _("Resume the routine"))
        self.resume_button.clicked.connect(self.resume)
        self.resume_error = error_label(banner, self.tones)
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
        with self._choosing_rows():
            self.item_model.set_rows([self._item_row(item) for item in items])
            self.item_view.setVisible(bool(items))  # nothing to show: the headline says so
            self.item_view.setFixedHeight(self._list_height(len(items)))
            if self.decided is not None and previous is None:
                return  # the receipt stands for the decided case until the next is picked
            keep = next((n for n, it in enumerate(items) if previous and _same(it, previous)), 0)
            if items:
                self.item_view.selectRow(keep)
        self._show_item(items[keep] if items else None)
        self._note_changes(previous)

    def _list_height(self, rows: int) -> int:
        view = self.item_view
        shown = max(1, min(rows, LIST_ROWS))
        row = view.verticalHeader().defaultSectionSize()
        return view.horizontalHeader().sizeHint().height() + shown * row + 2 * view.frameWidth()

    def _note_changes(self, previous: Item | None) -> None:
        shown, asked, self._asked = self.shown, self._asked, False
        changed = previous is not None and shown is not None and _same(previous, shown)
        changed = changed and previous.digest() != shown.digest() and not asked  # type: ignore[union-attr]
        self.changed_note.setVisible(changed)
        self.changed_note.setText(
            _("The evidence changed while you were looking; this is what it says now.")
        )

    @contextmanager
    def _choosing_rows(self) -> Iterator[None]:
        self._choosing = True
        try:
            yield
        finally:
            self._choosing = False

    def _headline(self) -> None:
        count = len(self.items)
        if not count:
            text = _(
                "Nothing needs your attention. Coven asks here when it cannot know "
                "what happened to a run."
            )
        else:
            text = ngettext(
                "{count} run needs your decision. Coven cannot know what happened; "
                "look at the evidence, then say what you found.",
                "{count} runs need your decision. Coven cannot know what happened; "
                "look at the evidence, then say what you found.",
                count,
            ).format(count=count)
        self.headline.setText(text)

    def _item_row(self, item: Item) -> Row:
        waiting = self._kind(item.kind)
        if _live(item) and item.kind == RECOVERY_REQUIRED:
            waiting = _("{waiting} — still running").format(waiting=waiting)
        return Row(
            [item.routine, moment_text(item.scheduled_utc, self.locale_name, seconds=False),
             waiting],
            tooltip=item.occurrence_id,
            colour=self.tones.colour(Tone.WARNING).name() if _live(item) else None,
        )  # fmt: skip

    def _kind(self, kind: str) -> str:
        return {
            RECOVERY_REQUIRED: _("your decision"),
            "stuck_cancel": _("a stop to be confirmed"),
            "delivery_failing": _("its output to be delivered"),
            "overrun": _("a run far past its usual time"),
        }.get(kind, kind)

    def _picked(self, row: int) -> None:
        """A row chosen: by the person, the last receipt is done with."""
        if not self._choosing and row >= 0 and self.decided is not None:
            self.decided = None
            self._show_decided()
        if not self._choosing:
            self._show_item(self.items[row] if 0 <= row < len(self.items) else None)

    # -- one item's evidence ----------------------------------------------------------------
    def _show_item(self, item: Item | None) -> None:
        if item is None or self.shown is None or not _same(item, self.shown):
            show_error(self.decision_error, None)  # a refusal was about the run shown before
            self._say(None)
            self.changed_note.hide()
        self.shown = item
        self.detail.setVisible(item is not None)
        self.evidence.show_item(item)
        if item is None:
            self.summary.setText("")
            self.live_banner.hide()
            self.process_ends.stop()
            return
        self.summary.setText(self._summary(item))
        self.command.setText(item.command or "—")
        self.command.setCursorPosition(0)
        self.command.setToolTip(item.command)
        self.cwd.setText(_("in {folder}").format(folder=item.cwd) if item.cwd else "")
        self._show_live(item)
        self._enable_actions()

    def _summary(self, item: Item) -> str:
        lines = [
            _("<b>{routine}</b> — the run planned for {when} ({utc} UTC)").format(
                routine=escape(item.routine),
                when=moment_text(item.scheduled_utc, self.locale_name),
                utc=escape(item.scheduled_utc[:16].replace("T", " ")),
            )
            + " · "
            + _("run {run}").format(run=escape(item.run_id or "—")),
            escape(self._explanation(item)),
        ]
        if item.reason:
            reason = escape(queries.reason_text(item.reason))
            lines.append(_("Why Coven stopped: {reason}").format(reason=reason))
        return "<br>".join(lines)

    def _explanation(self, item: Item) -> str:
        if item.kind == RECOVERY_REQUIRED:
            return _(
                "The runner went away while the command may have been running, so "
                "Coven cannot know whether it ran or how it ended. It will not run "
                "it again by itself."
            )
        if item.kind == "stuck_cancel":
            return _(
                "Coven asked this run to stop and has not had the stop confirmed. "
                "Check the processes below; the next pass settles it once they end."
            )
        if item.kind == "overrun":
            running = describe_overrun(item.running_seconds, item.usual_seconds, self.locale_name)
            return _(
                "This run is still going, far past its routine's usual time ({running}). "
                "Coven does not stop it for that; its timeout does, or cancel it yourself."
            ).format(running=running)
        return _(
            "The run succeeded but its output could not be delivered: {error}. "
            "Coven keeps trying; free some space or fix the folder's permissions."
        ).format(error=item.delivery_error or "—")

    def _show_live(self, item: Item) -> None:
        """The amber notice, while anything of a run awaiting a decision still runs."""
        live = _live(item) if item.kind == RECOVERY_REQUIRED else []
        self.process_ends.watch(process.pid for process in live if process.pid)
        self.live_banner.setVisible(bool(live))
        if not live:
            return
        lines = [self._live_line(process) for process in live]
        lines.append(
            _(
                "A decision now could let two copies run at once. Stop the command, or wait: "
                "this page looks again when it ends."
            )
        )
        self.live_text.setText("<br>".join(lines))

    def _live_line(self, process: Live) -> str:
        """ "The command of attempt 1 still runs: ``sleep 300`` (pid 4243, since 2:02 PM)."."""
        if process.role == "runner":
            text = _("Coven's runner of attempt {attempt} still runs (pid {pid}, since {at}).")
        elif process.command_line:
            text = _(
                "The command of attempt {attempt} still runs: {command} (pid {pid}, since {at})."
            )
        else:
            text = _("The command of attempt {attempt} still runs (pid {pid}, since {at}).")
        metrics = QFontMetrics(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        command = metrics.elidedText(
            process.command_line or "", Qt.TextElideMode.ElideMiddle, COMMAND_WIDTH
        )
        return text.format(
            attempt=process.attempt,
            pid=process.pid or "?",
            at=moment(process.started_at, self.locale_name),
            command=f"<code>{escape(command)}</code>",
        )

    def _enable_actions(self) -> None:
        item = self.shown
        decidable = item is not None and item.kind == RECOVERY_REQUIRED
        blocked = self._blocked(item) if decidable else None
        self.reason.setEnabled(decidable)
        self.verified.setEnabled(decidable)
        for button in (self.succeeded_button, self.failed_button, self.retry_button):
            allowed = decidable and blocked is None
            if button is self.retry_button:
                allowed = allowed and self.verified.isChecked()
            button.setEnabled(allowed)
            button.setToolTip(blocked or self._button_tip(button))

    def _blocked(self, item: Item | None) -> str | None:
        """Why no decision can be taken now (the engine's rule, said before it refuses)."""
        live = _live(item)
        if not live:
            return None
        pids = ", ".join(str(process.pid) for process in live)
        return _(
            "Not while it still runs (pid {pids}): a decision now could let two copies run at "
            "once. Stop the command first."
        ).format(pids=pids)

    def _button_tip(self, button: QPushButton) -> str:
        if button is self.retry_button and not self.verified.isChecked():
            return _("Tick “I verified it had no side effect” first")
        outcome = {self.succeeded_button: Outcome.SUCCEEDED, self.failed_button: Outcome.FAILED}
        return self._consequence(outcome.get(button, Outcome.RETRY))

    # -- the live process: stop it, or look again -------------------------------------------
    def stop(self) -> None:
        """Asked first, as Cancel is: it ends a command that may still be doing its work."""
        item = self.shown
        if item is None or item.run_id is None:
            return
        run_id, reason = item.run_id, self.reason.text().strip() or None
        when = moment_text(item.scheduled_utc, self.locale_name, seconds=False)
        self._ask(
            _("Stop the command"),
            _("Stop the command of the run of {routine} planned for {when}?").format(
                routine=item.routine, when=when
            ),
            _("Coven asks it to end, then ends it after its stop grace. This decides nothing: "
              "once it has ended, you say what happened."),
            _("Stop the command"),
            lambda: self._stop_now(run_id, reason),
        )  # fmt: skip

    def _stop_now(self, run_id: str, reason: str | None) -> None:
        self.stop_button.setEnabled(False)
        self._say(_("Stopping it: asked to end, then forced after its stop grace…"))
        self.spawn(self._stop(run_id, reason))

    async def _stop(self, run_id: str, reason: str | None) -> None:
        done = await act(self.desktop, lambda engine: engine.operator.stop(run_id, reason))
        await self._look_again()
        self.stop_button.setEnabled(True)
        if not done.ok or done.result is None:
            self._say(None)
            show_error(self.decision_error, done.refusal)
            return
        if done.result.confirmed and not _live(self.shown):
            text = _("Stopped: {result}. Nothing of the run runs any more: decide what "
                           "happened.")  # fmt: skip
        else:
            text = _("The stop is not confirmed: {result}.")
        result = queries.reason_text(done.result.result)
        self._say(text.format(result=result), error=not done.result.confirmed)

    def recheck(self) -> None:
        if self.shown is not None:
            self.spawn(self._recheck())

    async def _recheck(self) -> None:
        await self._look_again()
        at = moment(self.desktop.clock.now_utc(), self.locale_name)
        if _live(self.shown):
            self._say(_("Checked again at {at}: it still runs.").format(at=at))
        else:
            self._say(
                _(
                    "Checked again at {at}: nothing of the run runs any more; you can decide now."
                ).format(at=at)
            )

    async def _look_again(self) -> None:
        self._asked = True
        await self.reload()

    def _say(self, text: str | None, *, error: bool = False) -> None:
        """The line under the amber notice: what stop or re-check found."""
        self.stop_result.setText(text or "")
        self.stop_result.setVisible(bool(text))
        self._said_error = error
        self._paint_said(self.palette())

    def _paint_said(self, palette: QPalette) -> None:
        error = f"color: {colour(palette, Tone.ERROR).name()};" if self._said_error else ""
        self.stop_result.setStyleSheet(error)

    # -- deciding ---------------------------------------------------------------------------
    def decide(self, outcome: Outcome) -> None:
        """Checked here, then confirmed by the person, then sent (see :meth:`_confirm`)."""
        item, reason = self.shown, self.reason.text().strip()
        if item is None or item.run_id is None or item.kind != RECOVERY_REQUIRED:
            return
        if not reason:
            show_error(
                self.decision_error,
                _("Give a reason: what did you check? It is kept with your decision."),
            )
            self.reason.setFocus()
            return
        self._confirm(item, outcome, reason, self.verified.isChecked())

    def _confirm(self, item: Item, outcome: Outcome, reason: str, verified: bool) -> None:
        """Ask, without blocking: the decision is sent only if the person says yes."""
        detail = _("Your reason: “{reason}”").format(reason=reason)
        self._ask(
            _("Confirm your decision"), self._question(item, outcome),
            self._consequence(outcome) + "\n\n" + detail, self._verb(outcome),
            lambda: self.spawn(self._reconcile(item, outcome, reason, verified)),
        )  # fmt: skip

    def _ask(
        self, title: str, question: str, detail: str, verb: str, then: Callable[[], object]
    ) -> None:
        """One question open at a time: a new one replaces the last (common.ask)."""
        if self.confirmation is not None:
            self.confirmation.deleteLater()
        self.confirmation = ask(self, title, question, detail, verb, then)

    def _question(self, item: Item, outcome: Outcome) -> str:
        when = moment_text(item.scheduled_utc, self.locale_name, seconds=False)
        text = {
            Outcome.SUCCEEDED: _("Mark the run of {routine} planned for {when} as "
                                       "succeeded?"),
            Outcome.FAILED: _("Mark the run of {routine} planned for {when} as failed?"),
            Outcome.RETRY: _("Run {routine} again now, for the run planned for {when}?"),
        }[outcome]  # fmt: skip
        return text.format(routine=item.routine, when=when)

    def _verb(self, outcome: Outcome) -> str:
        return {
            Outcome.SUCCEEDED: _("Mark as succeeded"),
            Outcome.FAILED: _("Mark as failed"),
            Outcome.RETRY: _("Retry now"),
        }[outcome]

    def _consequence(self, outcome: Outcome) -> str:
        """The engine's words for what the decision does (one sentence for app and CLI)."""
        words = decision_consequence(outcome.value, self.locale_name)
        return words[:1].upper() + words[1:] + "."

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
        with self._choosing_rows():
            self.item_view.clearSelection()
            self._show_item(None)  # the receipt stands for it until the next case is picked
        await self.reload()

    # -- the receipt ------------------------------------------------------------------------
    def _show_decided(self) -> None:
        decided = self.decided
        if decided is None:
            self.banner.hide()
            return
        decision = decided.decision
        words = {
            Outcome.SUCCEEDED: _("succeeded"),
            Outcome.FAILED: _("failed"),
            Outcome.RETRY: _("to be retried"),
        }
        self.decided_text.setText(
            _("Recorded: run {run} of {routine} {outcome} — “{reason}”.").format(
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
            return _("The audit entry could not be read back; see `coven audit`.")
        return _(
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
            text = _("The routine {routine} is paused: nothing runs until you resume it.")
        else:
            text = _("The routine {routine} is {state}.")
        self.paused_text.setText(text.format(routine=routine, state=state))
        self.resume_button.setText(_("Resume {routine}").format(routine=routine))
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
            ngettext(
                "{routine} is active again; {count} moment that passed "
                "while it was paused was recorded as skipped.",
                "{routine} is active again; {count} moments that passed "
                "while it was paused were recorded as skipped.",
                skipped,
            ).format(routine=routine, count=skipped)
        )
        self.resume_button.hide()
        await self.reload()


def _live(item: Item | None) -> list[Live]:
    """What of the run still runs, runners first (as the engine names them)."""
    if item is None:
        return []
    found = [
        Live(attempt.number, fact.role, fact.pid, fact.started_at,
             attempt.command_line if fact.role == "command" else None)
        for attempt in item.attempts
        for fact in attempt.processes()
        if fact.alive
    ]  # fmt: skip
    return sorted(found, key=lambda process: process.role != "runner")


def _same(a: Item, b: Item) -> bool:
    return (a.kind, a.occurrence_id) == (b.kind, b.occurrence_id)
