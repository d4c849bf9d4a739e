"""What the attention windows share: Babel formatting in en_US and de_DE, and the model."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import Qt

from coven_desktop.windows.common import Row, RowsModel, moment, moment_text, span

AT = datetime(2026, 3, 30, 13, 5, 9, tzinfo=UTC)


def test_moments_in_the_users_zone_and_locale(in_berlin: None) -> None:
    assert moment(AT, "en_US") == "Mar 30, 2026, 3:05:09\u202fPM"
    assert moment(AT, "de_DE") == "30.03.2026, 15:05:09"
    assert moment(AT, "de_DE", seconds=False) == "30.03.2026, 15:05"
    assert moment(None, "de_DE") == "—"


def test_stored_and_iso_instants_read_alike(in_berlin: None) -> None:
    assert moment_text("2026-03-30T13:05:09.000000Z", "de_DE") == "30.03.2026, 15:05:09"
    assert moment_text("2026-03-30T13:05:09+00:00", "de_DE") == "30.03.2026, 15:05:09"
    assert moment_text("not a time", "de_DE") == "not a time"  # shown, never hidden
    assert moment_text(None, "de_DE") == "—"


def test_lengths() -> None:
    assert span(95, "en_US") == "1 minute 35 seconds"
    assert span(2 * 86400 + 8.5 * 3600, "de_DE") == "2 Tage 8 Stunden"


def test_the_rows_model(qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    model = RowsModel(["Routine", "State"])
    model.set_rows([Row(["backup", "paused"], tooltip="why", colour="#b00020", bold=True),
                    Row(["sync"])])  # fmt: skip
    qtmodeltester.check(model)
    assert model.data(model.index(1, 1)) == ""  # a short row reads as empty cells
    assert model.headerData(0, Qt.Orientation.Horizontal) == "Routine"
    assert model.headerData(0, Qt.Orientation.Vertical) is None
