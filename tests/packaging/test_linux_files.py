"""The freedesktop files in packaging/linux pass the tools the distributions check them with."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

LINUX = Path(__file__).resolve().parents[2] / "packaging" / "linux"
APP_ID = "io.coven.Desktop"


def _tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (apt-get install {package})")
    return path


def test_the_desktop_entry_is_valid() -> None:
    tool = _tool("desktop-file-validate", "desktop-file-utils")
    checked = subprocess.run(
        [tool, str(LINUX / f"{APP_ID}.desktop")], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == "", checked.stdout  # not even a hint


def test_the_appstream_metainfo_is_valid_and_names_the_entry() -> None:
    tool = _tool("appstreamcli", "appstream")
    metainfo = LINUX / f"{APP_ID}.metainfo.xml"
    checked = subprocess.run(
        [tool, "validate", "--no-net", str(metainfo)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    text = metainfo.read_text()
    assert f"<id>{APP_ID}</id>" in text
    assert f'<launchable type="desktop-id">{APP_ID}.desktop</launchable>' in text


def test_the_entry_starts_the_tray_app_under_its_icon_name() -> None:
    entry = (LINUX / f"{APP_ID}.desktop").read_text().splitlines()
    assert "Exec=coven-desktop" in entry and f"Icon={APP_ID}" in entry
