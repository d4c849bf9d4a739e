"""The Diagnostics window: is the scheduler doing its job, and is the store safe?
(DESIGN §3, §9, §11, §13; issue #8, and issue #10's data directory location.)

Scheduler status — leader, generation, standby or not — the last passes with durations and
counts, lags and queue depth, what happened to the machine's time (sleep, downtime, clock
jumps, time-zone changes), where the data directory is and whether it is private, the tz
database, **Run doctor**, whose report is computed on the operator thread, and the log's
recent lines with a button that opens the log file (issue 18).
"""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING

from babel.numbers import format_decimal
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QPalette, QTextCursor
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from coven_core import queries
from coven_core.engine import log_path
from coven_core.events import EventKind
from coven_core.queries import (
    N_,
    DataDirectory,
    Diagnostics,
    HostEvent,
    PassLine,
    Report,
    Status,
    _,
    diagnostics,
    doctor,
    ngettext,
    recent_log_lines,
)
from coven_desktop import texts
from coven_desktop.windows.common import (
    LivePage,
    Row,
    RowsModel,
    moment,
    named,
    span,
    table,
)
from coven_desktop.windows.fitting import FittingTable
from coven_desktop.windows.tones import Tone, Tones

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

_SEVERITY_TONE = {"error": Tone.ERROR, "warning": Tone.WARNING}
#: The passes' columns (Started, Why, Role, Took, Late, Planned, Claimed, Dispatched,
#: Recovered, Settled, Error): no wider than their words need at most, and where the page is
#: narrow (German headers, 1,000 px), the counts a person reads least give way first; Error,
#: the last, takes what is left. Nothing scrolls sideways (issue #22).
PASS_CAPS = {0: 170, 1: 160, 10: 160}
PASS_GIVE_WAY = (8, 2, 4, 6, 7, 5, 9, 1)


class Page(LivePage):
    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(desktop, parent)
        self.shown: Diagnostics | None = None
        self.report: Report | None = None
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addWidget(self._scheduler_box(), 1)
        top.addWidget(self._store_box(), 1)
        layout.addLayout(top)
        self.tabs = QTabWidget(self)
        self._tables()
        layout.addWidget(self.tabs, 1)
        self.tones = Tones(self)
        self.tones.also(self._paint_states)

    # -- building ---------------------------------------------------------------------------
    def _form(self, title: str, names: list[tuple[str, str]]) -> QGroupBox:
        box = QGroupBox(title, self)
        form = QFormLayout(box)
        for key, label in names:
            value = QLabel("—", box)
            value.setWordWrap(True)
            value.setObjectName(key)
            form.addRow(label, value)
            self.values[key] = value
        return box

    def _scheduler_box(self) -> QGroupBox:
        self.values: dict[str, QLabel] = {}
        return self._form(
            _("Scheduler"),
            [
                ("role", _("This app")),
                ("leader", _("Leader")),
                ("last_pass", _("Last pass")),
                ("next", _("Next deadline")),
                ("queue", _("Queue")),
                ("lags", _("Lags")),
            ],
        )

    def _store_box(self) -> QGroupBox:
        return self._form(
            _("Store"),
            [
                ("data_dir", _("Data directory")),
                ("permissions", _("Permissions")),
                ("size", _("Size")),
                ("tzdb", _("Time zones")),
            ],
        )

    def _tables(self) -> None:
        tabs = self.tabs
        self.pass_model = RowsModel(
            [
                _("Started"),
                _("Why"),
                _("Role"),
                _("Took"),
                _("Late"),
                _("Planned"),
                _("Claimed"),
                _("Dispatched"),
                _("Recovered"),
                _("Settled"),
                _("Error"),
            ],
            self,
        )
        self.event_model = RowsModel([_("When"), _("What"), _("Details")], self)
        self.finding_model = RowsModel([_("Check"), _("Severity"), _("Finding")], self)
        self.pass_table = FittingTable(tabs, caps=PASS_CAPS, give_way=PASS_GIVE_WAY)
        passes = table(self.pass_model, tabs, view=self.pass_table)
        tabs.addTab(named(passes, _("Recent passes")), _("Recent passes"))
        events = named(table(self.event_model, tabs, stretch=2), _("Sleep, clock and zones"))
        tabs.addTab(events, _("Sleep, clock and zones"))
        self.doctor_tab = self._doctor_tab(tabs)
        tabs.addTab(self.doctor_tab, _("Doctor"))
        tabs.addTab(self._log_tab(tabs), _("Log"))

    def _log_tab(self, parent: QWidget) -> QWidget:
        tab = QWidget(parent)
        layout = QVBoxLayout(tab)
        self.log_view = named(QPlainTextEdit(tab), _("Recent log lines"))
        self.log_view.setReadOnly(True)
        self.log_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.log_button = QPushButton(_("Open the log file"), tab)
        self.log_button.clicked.connect(self.open_log)
        layout.addWidget(self.log_view, 1)
        layout.addWidget(self.log_button)
        return tab

    def open_log(self) -> None:
        """Show the whole file in the desktop's viewer for text files."""
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_path(self.desktop.data_dir))))

    def _doctor_tab(self, parent: QWidget) -> QWidget:
        tab = QWidget(parent)
        layout = QVBoxLayout(tab)
        row = QHBoxLayout()
        self.doctor_button = QPushButton(_("Run doctor"), tab)
        self.doctor_button.clicked.connect(self.ask_doctor)
        self.doctor_summary = QLabel(
            _(
                "The doctor checks the store's integrity, its permissions and that every "
                "promise holds: one disposition per moment, nothing ran twice, no success "
                "without evidence."
            ),
            tab,
        )
        self.doctor_summary.setWordWrap(True)
        row.addWidget(self.doctor_button)
        row.addWidget(self.doctor_summary, 1)
        layout.addLayout(row)
        findings = named(table(self.finding_model, tab, stretch=2), _("Doctor's findings"))
        layout.addWidget(findings, 1)
        return tab

    # -- loading ----------------------------------------------------------------------------
    async def reload(self) -> None:
        now = self.desktop.clock.now_utc()
        found = await self.desktop.service.call(lambda engine: diagnostics(engine.store, now))
        self.show_diagnostics(found)
        data_dir = self.desktop.data_dir
        lines = await self.desktop.service.call(lambda _engine: recent_log_lines(data_dir))
        self.show_log(lines)

    def show_log(self, lines: list[str]) -> None:
        text = "\n".join(lines) if lines else _("Nothing has been logged yet.")
        self.log_view.setPlainText(text)
        self.log_view.moveCursor(QTextCursor.MoveOperation.End)  # the newest line

    def show_diagnostics(self, found: Diagnostics) -> None:
        self.shown = found
        values = self.values
        values["role"].setText(self._role())
        values["leader"].setText(self._leader(found.status))
        values["last_pass"].setText(self._last_pass(found.passes))
        values["next"].setText(moment(found.status.next_deadline, self.locale_name))
        values["queue"].setText(self._queue(found.status))
        values["lags"].setText(self._lags(found.status))
        self._show_store(found)
        self._show_passes(found.passes)
        self.event_model.set_rows([self._event_row(event) for event in found.host_events])

    def _show_passes(self, passes: list[PassLine]) -> None:
        self.pass_model.set_rows([self._pass_row(line) for line in passes])
        self.pass_table.fit_to_contents()

    def _role(self) -> str:
        overview = self.desktop.overview
        if overview is not None and overview.standby:
            return _(
                "standby: another Coven process (coven daemon) schedules this store; "
                "every action still works"
            )
        return _("scheduling this store")

    def _leader(self, status: Status) -> str:
        held = status.leader
        if held is None:
            return _("none: no scheduler has run here yet")
        alive = _("alive") if status.leader_alive else _("not answering")
        return _("{holder}, generation {generation}, {alive}; lease until {expires}").format(
            holder=held.fingerprint(),
            generation=held.generation,
            alive=alive,
            expires=moment(held.expires_at, self.locale_name),
        )

    def _last_pass(self, passes: list[PassLine]) -> str:
        if not passes:
            return _("none yet")
        last = passes[0]
        return _("{when} ({why}), took {took}").format(
            when=moment(last.started_at, self.locale_name),
            why=self._trigger(last.trigger),
            took=_milliseconds(last.duration_ms, self.locale_name),
        )

    def _queue(self, status: Status) -> str:
        paused = _(" · all scheduling paused") if status.paused_all else ""
        return _("{due} planned, {active} running{paused}").format(
            due=status.queue_depth, active=status.active, paused=paused
        )

    def _lags(self, status: Status) -> str:
        lags, locale = status.lags, self.locale_name
        return ngettext(
            "oldest due waiting {oldest} · planning {planning} · start p50 {p50}, "
            "p99 {p99} ({samples} start in the last hour)",
            "oldest due waiting {oldest} · planning {planning} · start p50 {p50}, "
            "p99 {p99} ({samples} starts in the last hour)",
            lags.start_lag_samples,
        ).format(
            oldest=queries.duration_text(lags.oldest_eligible_age, locale),
            planning=queries.duration_text(lags.planning_lag, locale),
            p50=queries.duration_text(lags.start_lag_p50, locale),
            p99=queries.duration_text(lags.start_lag_p99, locale),
            samples=lags.start_lag_samples,
        )

    def _show_store(self, found: Diagnostics) -> None:
        place = found.data_directory
        self.values["data_dir"].setText(str(place.directory.path))
        self.values["data_dir"].setToolTip(_("Filesystem: {fs}").format(fs=place.filesystem or "?"))
        self.values["permissions"].setText(self._permissions(place))
        error = self.tones.colour(Tone.ERROR).name()
        self.values["permissions"].setStyleSheet("" if place.safe else f"color: {error};")
        self.values["size"].setText(queries.size_text(found.status.store_bytes, self.locale_name))
        db = found.tzdb
        self.values["tzdb"].setText(
            _("tz database {version}").format(version=texts.tz_database(db.version, db.source))
        )

    def _permissions(self, place: DataDirectory) -> str:
        if not place.safe:
            return " ".join(place.problems)
        facts = place.directory
        mode = stat.filemode(stat.S_IFDIR | (facts.mode or 0))
        files = ", ".join(f"{f.path.name} {f.mode or 0:04o}" for f in place.files)
        return _("private to you ({mode} {octal}); files: {files}").format(
            mode=mode, octal=f"{facts.mode or 0:04o}", files=files or "—"
        )

    def _pass_row(self, line: PassLine) -> Row:
        locale = self.locale_name
        late = None if line.late_ms is None else _milliseconds(line.late_ms, locale)
        counts = (line.planned, line.claimed, line.dispatched, line.recovered, line.settled)
        error = line.error_class or ""
        return Row(
            [
                moment(line.started_at, locale),
                self._trigger(line.trigger),
                _(_ROLES[line.role]) if line.role in _ROLES else line.role,
                _milliseconds(line.duration_ms, locale),
                late or "—",
                *[str(n) for n in counts],
                error,
            ],
            tooltip=line.error,
            colour=self._tone_name(Tone.ERROR if error else None),
        )

    def _trigger(self, trigger: str) -> str:
        """Why a pass ran, in words (the wake reasons of DESIGN §3)."""
        return {
            "startup": _("start"),
            "shutdown": _("stop"),
            "deadline": _("its time"),
            "safety_cap": _("safety check"),
            "run_finished": _("a run ended"),
            "definition_changed": _("a routine changed"),
            "operator_command": _("your command"),
            "system_resumed": _("woke from sleep"),
            "clock_jumped": _("clock set"),
            "timezone_changed": _("time zone changed"),
        }.get(trigger, trigger)

    def _event_row(self, event: HostEvent) -> Row:
        words = {
            EventKind.SLEPT: _("the machine slept"),
            EventKind.DOWNTIME: _("Coven was not running"),
            EventKind.CLOCK_JUMPED: _("the clock was set"),
            EventKind.REPLANNED: _("replanned after a clock change"),
            EventKind.TIMEZONE_CHANGED: _("the time zone changed"),
            EventKind.LEADER_CHANGED: _("a new scheduler took over"),
            EventKind.SHUTDOWN: _("the scheduler stopped"),
        }
        return Row(
            [
                moment(event.at, self.locale_name),
                words.get(event.kind, event.kind.value),
                self._event_details(event),
            ]
        )

    def _event_details(self, event: HostEvent) -> str:
        data, locale = event.data, self.locale_name
        interval = event.interval
        if interval is not None:
            start, end = interval
            return _("from {start} to {end} ({length})").format(
                start=moment(start, locale),
                end=moment(end, locale),
                length=span((end - start).total_seconds(), locale),
            )
        if event.kind is EventKind.CLOCK_JUMPED:
            seconds = float(data.get("seconds", 0))
            way = _("forward") if seconds >= 0 else _("back")
            return _("{way} by {length}").format(way=way, length=span(seconds, locale))
        if event.kind is EventKind.TIMEZONE_CHANGED:
            return _("from {old} to {new}").format(
                old=data.get("old") or "?", new=data.get("new") or "?"
            )
        if event.kind is EventKind.SHUTDOWN:
            left = int(data.get("left_running") or 0)
            if not left:
                return _("nothing was left running")
            return ngettext(
                "{count} command left running for the next start to adopt",
                "{count} commands left running for the next start to adopt",
                left,
            ).format(count=left)
        if event.kind is EventKind.LEADER_CHANGED and "holder" in data:
            return _("{holder}, generation {generation}").format(
                holder=data["holder"], generation=data.get("generation", "?")
            )
        if event.kind is EventKind.REPLANNED and isinstance(data.get("why"), str):
            return queries.reason_text(data["why"])
        return ", ".join(f"{key}: {value}" for key, value in data.items())

    # -- the doctor -------------------------------------------------------------------------
    def ask_doctor(self) -> None:
        self.doctor_button.setEnabled(False)  # at once: one report at a time
        self.spawn(self.run_doctor())

    async def run_doctor(self) -> Report:
        """Run the doctor on the operator thread (it reads the whole store) and show it."""
        self.doctor_button.setEnabled(False)
        self.doctor_summary.setText(_("The doctor is examining the store…"))
        now = self.desktop.clock.now_utc()
        try:
            report = await self.desktop.service.call(lambda engine: doctor(engine.store, now))
        finally:
            self.doctor_button.setEnabled(True)
        self.show_report(report)
        return report

    def _severity(self, severity: str) -> str:
        words = {"error": _("error"), "warning": _("warning"), "info": _("ok")}
        return words.get(severity, severity)

    def show_report(self, report: Report) -> None:
        self.report = report
        errors, warnings = report.count("error"), report.count("warning")
        counts = {
            "errors": ngettext("{count} error", "{count} errors", errors).format(count=errors),
            "warnings": ngettext("{count} warning", "{count} warnings", warnings).format(
                count=warnings
            ),
        }
        if report.ok and not warnings:
            text = _("All clear at {when}: every check passed.")
        elif report.ok:
            text = _("No errors at {when}, {warnings} worth a look.")
        else:
            text = _("{errors} and {warnings} at {when}: see below.")
        self.doctor_summary.setText(
            text.format(when=moment(report.checked_at, self.locale_name), **counts)
        )
        self.finding_model.set_rows(self._finding_rows(report))
        self.tabs.setCurrentWidget(self.doctor_tab)

    def _finding_rows(self, report: Report) -> list[Row]:
        return [
            Row(
                [
                    _(_CHECKS[f.check]) if f.check in _CHECKS else f.check,
                    self._severity(f.severity),
                    f.text(self.locale_name),
                ],
                tooltip=f.text(self.locale_name),
                colour=self._tone_name(_SEVERITY_TONE.get(f.severity)),
                bold=f.severity == "error",
            )
            for f in report.findings
        ]

    def _tone_name(self, tone: Tone | None) -> str | None:
        return None if tone is None else self.tones.colour(tone).name()

    def _paint_states(self, _palette: QPalette) -> None:
        """What is red or amber is drawn again in the new palette's tones."""
        if self.shown is not None:
            self._show_store(self.shown)
            self._show_passes(self.shown.passes)
        if self.report is not None:
            self.finding_model.set_rows(self._finding_rows(self.report))


#: The doctor's checks by name, in words.
_CHECKS = {
    "attempts": N_("attempts"), "audit": N_("audit"), "counters": N_("counters"),
    "evidence": N_("evidence"), "growth": N_("growth"), "ids": N_("ids"),
    "integrity": N_("integrity"), "lease": N_("lease"), "location": N_("location"),
    "occurrences": N_("occurrences"), "references": N_("references"),
    "routines": N_("routines"), "schema": N_("schema"),
}  # fmt: skip

#: A pass's role in words: which process made it.
_ROLES = {"leader": N_("leader"), "standby": N_("standby")}


def _milliseconds(value: float, locale: str) -> str:
    return f"{format_decimal(round(value, 1), locale=locale)} ms"
