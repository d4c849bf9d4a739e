"""The macOS and Windows packaging, configured but not built here: what can be checked
without those systems (the files parse and say what the README promises)."""

from __future__ import annotations

import plistlib
from pathlib import Path

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"
APP_ID = "io.coven.Desktop"


def test_the_mac_app_is_a_menu_bar_app_with_our_bundle_id() -> None:
    with open(PACKAGING / "macos" / "Info.plist", "rb") as plist:
        info = plistlib.load(plist)
    assert info["LSUIElement"] is True  # no Dock icon
    assert info["CFBundleIdentifier"] == APP_ID
    assert "info_plist=info" in (PACKAGING / "coven.spec").read_text()


def test_the_windows_installer_adds_a_start_menu_entry_and_optional_autostart() -> None:
    script = (PACKAGING / "windows" / "coven.iss").read_text()
    assert f"AppId={APP_ID}" in script
    assert 'Name: "{userprograms}\\{#AppName}"; Filename: "{app}\\{#AppExe}"' in script
    assert 'Subkey: "Software\\Microsoft\\Windows\\CurrentVersion\\Run"' in script
    assert "Tasks: startatlogin" in script and "Flags: unchecked" in script  # off by default
