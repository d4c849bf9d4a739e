"""Start at login: an XDG autostart entry, off by default, switched from the tray (issue #7)."""

from __future__ import annotations

import configparser
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtGui import QAction
from pytestqt.qtbot import QtBot

from coven_core.clock import VirtualClock
from coven_core.views.overview import Overview, TrayState
from coven_desktop import autostart
from coven_desktop.desktop import Desktop
from coven_desktop.tray import Tray

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
AWKWARD = ["/opt/My Apps/coven desktop", "--data-dir", '/home/a "b"/$HOME\\x`y` 100%', "plain"]


def read_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(path.read_text(encoding="utf-8"))
    return parser["Desktop Entry"]


def split_exec(value: str) -> list[str]:
    """Undo the key file's escapes, then the Exec quoting — the spec's parse, written apart
    from the module under test."""
    unescaped = value.replace("\\\\", "\0").replace("\\s", " ").replace("\0", "\\")
    arguments, current, quoted, escaped, started = [], "", False, False, False
    for char in unescaped:
        if escaped:
            current, escaped = current + char, False
        elif quoted and char == "\\":
            escaped = True
        elif char == '"':
            quoted, started = not quoted, True
        elif char == " " and not quoted:
            if started or current:
                arguments.append(current)
            current, started = "", False
        else:
            current += char
    if started or current:
        arguments.append(current)
    return [argument.replace("%%", "%") for argument in arguments]


def test_off_by_default(tmp_path: Path) -> None:
    assert not autostart.is_enabled(tmp_path)
    assert not autostart.is_enabled()  # the test's private XDG_CONFIG_HOME


def test_enable_writes_a_valid_entry(tmp_path: Path) -> None:
    path = autostart.enable(["/usr/bin/coven-desktop"], tmp_path)
    assert path == tmp_path / "autostart" / "coven-desktop.desktop"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    entry = read_entry(path)
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Coven Desktop"
    assert entry["Exec"] == "/usr/bin/coven-desktop"
    assert Path(entry["Icon"]).is_file() and entry["Icon"].endswith("coven.svg")
    assert entry["X-GNOME-Autostart-enabled"] == "true"
    assert entry["NoDisplay"] == "false"
    assert entry["Comment"]
    assert autostart.is_enabled(tmp_path)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left


def test_exec_quotes_what_the_spec_reserves(tmp_path: Path) -> None:
    entry = read_entry(autostart.enable(AWKWARD, tmp_path))
    assert entry["Exec"].startswith('"/opt/My Apps/coven desktop" --data-dir "')
    assert "\\\\\\\\x" in entry["Exec"]  # a literal backslash in a quoted argument is four
    assert "100%%" in entry["Exec"]
    assert split_exec(entry["Exec"]) == AWKWARD


@pytest.mark.parametrize("command", [["/usr/bin/coven-desktop"], AWKWARD])
def test_desktop_file_validate_accepts_the_entry(tmp_path: Path, command: list[str]) -> None:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        pytest.skip("desktop-file-validate is not installed (Debian: desktop-file-utils)")
    path = autostart.enable(command, tmp_path)
    checked = subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout


def test_disable_removes_the_entry_and_tolerates_none(tmp_path: Path) -> None:
    path = autostart.enable(["coven-desktop"], tmp_path)
    autostart.disable(tmp_path)
    assert not path.exists() and not autostart.is_enabled(tmp_path)
    autostart.disable(tmp_path)  # already off: nothing to do


def test_enable_replaces_the_previous_entry(tmp_path: Path) -> None:
    autostart.enable(["old"], tmp_path)
    path = autostart.enable(["new"], tmp_path)
    assert read_entry(path)["Exec"] == "new"


@pytest.mark.parametrize(
    "line", ["Hidden=true", "X-GNOME-Autostart-enabled=false"], ids=["hidden", "gnome-off"]
)
def test_switched_off_by_the_desktop_counts_as_off(tmp_path: Path, line: str) -> None:
    path = autostart.enable(["coven-desktop"], tmp_path)
    text = path.read_text(encoding="utf-8").replace("X-GNOME-Autostart-enabled=true\n", "")
    path.write_text(text + line + "\n", encoding="utf-8")
    assert not autostart.is_enabled(tmp_path)


def test_default_location_follows_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    assert autostart.enable(["coven-desktop"]) == tmp_path / "conf/autostart/coven-desktop.desktop"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert autostart.entry_path() == tmp_path / "home/.config/autostart/coven-desktop.desktop"


def test_an_empty_command_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="empty"):
        autostart.enable([], tmp_path)


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_other_platforms_say_it_is_not_built(tmp_path: Path, platform: str) -> None:
    assert not autostart.supported(platform)
    assert not autostart.is_enabled(tmp_path, platform=platform)
    with pytest.raises(NotImplementedError, match="not available"):
        autostart.enable(["coven-desktop"], tmp_path, platform=platform)
    with pytest.raises(NotImplementedError, match="not available"):
        autostart.disable(tmp_path, platform=platform)
    assert not (tmp_path / "autostart").exists()


def test_launch_command_prefers_the_script_beside_the_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python3"))
    assert autostart.launch_command(["--x"]) == [str(tmp_path / "python3"), "-m",
                                                 "coven_desktop.app", "--x"]  # fmt: skip
    script = tmp_path / "coven-desktop"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    assert autostart.launch_command(["--x"]) == [str(script), "--x"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert autostart.launch_command(["--x"]) == [str(tmp_path / "python3"), "--x"]


# -- through the tray -------------------------------------------------------------------------
def small_overview() -> Overview:
    return Overview(TrayState.IDLE, standby=False, paused_all=False, attention=0, error=None,
                    next_run=None)  # fmt: skip


def delete_now() -> None:
    """Run the deferred deletes here, on the GUI thread: left to the garbage collector, a
    QObject with timers may be destroyed on a later test's worker thread (a Qt warning)."""
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def tray(qapp) -> Iterator[Tray]:  # type: ignore[no-untyped-def]
    built = Tray()
    built.update(small_overview(), NOW, "en")
    yield built
    built.dispose()
    built.deleteLater()
    delete_now()


def autostart_action(tray: Tray) -> QAction:
    texts = [action.text() for action in tray.menu.actions()]
    assert texts.index("Start at login") == texts.index("Open Coven…") - 1
    return next(a for a in tray.menu.actions() if a.text() == "Start at login")


def test_the_tray_offers_start_at_login_unchecked(tray: Tray) -> None:
    action = autostart_action(tray)
    assert action.isCheckable() and not action.isChecked()


def test_triggering_it_emits_the_new_state_and_survives_a_rebuild(tray: Tray, qtbot: QtBot) -> None:
    with qtbot.waitSignal(tray.autostartToggled) as on:
        autostart_action(tray).trigger()
    assert on.args == [True]
    tray.update(small_overview(), NOW, "en")  # the menu is rebuilt on every change
    assert autostart_action(tray).isChecked()
    with qtbot.waitSignal(tray.autostartToggled) as off:
        autostart_action(tray).trigger()
    assert off.args == [False]


def test_not_offered_where_unsupported(tray: Tray) -> None:
    tray.autostart = None
    tray.update(small_overview(), NOW, "en")
    assert "Start at login" not in [action.text() for action in tray.menu.actions()]


@pytest.fixture
def desktop(tmp_path: Path, qapp) -> Iterator[Desktop]:  # type: ignore[no-untyped-def]
    """Built, not started: the toggle needs no engine."""
    built = Desktop(tmp_path / "data", VirtualClock(NOW, autojump=False))
    built.tray.update(small_overview(), NOW, "en")
    yield built
    built.tray.dispose()
    built.window.deleteLater()
    built.deleteLater()
    delete_now()


def test_the_app_writes_and_removes_the_entry_from_the_tray(desktop: Desktop) -> None:
    entry = autostart.entry_path()  # under the test's private XDG_CONFIG_HOME
    autostart_action(desktop.tray).trigger()
    command = split_exec(read_entry(entry)["Exec"])
    assert command[-2:] == ["--data-dir", str(desktop.data_dir)]
    assert autostart.is_enabled()
    autostart_action(desktop.tray).trigger()
    assert not entry.exists()


def test_a_failed_change_is_reported_and_unchecked(
    desktop: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(command: list[str]) -> Path:
        raise PermissionError(os.strerror(13))

    monkeypatch.setattr(autostart, "enable", refuse)
    with qtbot.waitSignal(desktop.failed) as failed:
        autostart_action(desktop.tray).trigger()
    assert "Permission denied" in failed.args[0]
    assert not autostart_action(desktop.tray).isChecked()
    assert desktop.tray.autostart is False
