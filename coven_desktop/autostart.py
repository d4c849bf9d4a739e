"""Start at login (DESIGN §12, issue #7): off by default, on only when the person asks.

Linux and the other freedesktop systems: an XDG autostart entry,
``$XDG_CONFIG_HOME/autostart/coven-desktop.desktop`` (``~/.config`` when the variable is unset
or not absolute), which the desktop session starts at login. The entry is written atomically
(a temp file in the same folder, then a rename) with mode 0644, and its ``Exec`` line is
quoted as the Desktop Entry Specification says, so a path with spaces, ``$`` or ``%`` still
starts the right program.

macOS and Windows are not built yet: :func:`enable` and :func:`disable` raise
:class:`NotImplementedError` there, saying what the entry would be; :func:`supported` tells the
app whether to offer the choice at all.
"""

from __future__ import annotations

import configparser
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from coven_desktop.resources import icon

ENTRY_NAME = "coven-desktop.desktop"

#: Characters that make the Desktop Entry spec require an argument to be double-quoted.
_RESERVED = frozenset(" \t\n\r\"'\\><~|&;$*?#()`")
#: Characters that need a backslash inside a double-quoted argument.
_ESCAPED_IN_QUOTES = frozenset('"`$\\')
#: The key-file escapes of a string value, applied after the quoting (the spec's order).
_VALUE_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"})


def supported(platform: str = sys.platform) -> bool:
    """Whether this platform can start Coven at login (an XDG autostart entry)."""
    return not (platform == "darwin" or platform.startswith(("win32", "cygwin")))


def is_enabled(config_home: Path | None = None, *, platform: str = sys.platform) -> bool:
    """Whether our entry is there and not switched off by the desktop's own settings
    (``Hidden=true`` or ``X-GNOME-Autostart-enabled=false``). False where unsupported:
    nothing of ours can be there."""
    if not supported(platform):
        return False
    entry = _read_entry(entry_path(config_home))
    if entry is None:
        return False
    hidden = entry.get("Hidden", "false").strip() == "true"
    return not hidden and entry.get("X-GNOME-Autostart-enabled", "true").strip() != "false"


def enable(
    command: Sequence[str], config_home: Path | None = None, *, platform: str = sys.platform
) -> Path:
    """Write the autostart entry that runs ``command`` at login; return its path."""
    _require_support(platform)
    path = entry_path(config_home)
    _write_atomically(path, desktop_entry(command))
    return path


def disable(config_home: Path | None = None, *, platform: str = sys.platform) -> None:
    """Remove the autostart entry (nothing to do when there is none)."""
    _require_support(platform)
    entry_path(config_home).unlink(missing_ok=True)


def launch_command(arguments: Sequence[str] = ()) -> list[str]:
    """How to start this very installation of the app, followed by ``arguments``.

    A frozen bundle is its own executable. Otherwise the ``coven-desktop`` script installed
    beside the running interpreter (not the first one on ``PATH``, which may be a pyenv shim
    or another environment's copy); failing that, this interpreter with ``-m``.
    """
    if getattr(sys, "frozen", False):
        return [sys.executable, *arguments]
    script = shutil.which("coven-desktop", path=str(Path(sys.executable).parent))
    if script is not None:
        return [script, *arguments]
    return [sys.executable, "-m", "coven_desktop.app", *arguments]


def entry_path(config_home: Path | None = None) -> Path:
    return (config_home or _config_home()) / "autostart" / ENTRY_NAME


def desktop_entry(command: Sequence[str]) -> str:
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        "Name=Coven Desktop",
        "Comment=Personal scheduler in the system tray that keeps its promises",
        f"Exec={exec_value(command)}",
        # An absolute path: it resolves in an editable install, a wheel and the bundle alike,
        # where a theme name would need the icon installed into an icon theme first.
        f"Icon={icon('coven')}",
        "Terminal=false",
        "NoDisplay=false",
        "X-GNOME-Autostart-enabled=true",
    ]
    return "\n".join(lines) + "\n"


def exec_value(command: Sequence[str]) -> str:
    """The ``Exec`` value for ``command``: each argument quoted when it must be, ``%``
    doubled (no field codes), then the key file's escapes (so a backslash becomes four)."""
    if not command:
        raise ValueError("the command to start at login is empty")
    line = " ".join(_quote_argument(argument) for argument in command)
    return line.translate(_VALUE_ESCAPES)


def _quote_argument(argument: str) -> str:
    argument = argument.replace("%", "%%")
    if argument and not _RESERVED.intersection(argument):
        return argument
    quoted = "".join("\\" + c if c in _ESCAPED_IN_QUOTES else c for c in argument)
    return f'"{quoted}"'


def _config_home() -> Path:
    """``$XDG_CONFIG_HOME``; the Base Directory spec ignores a relative value."""
    configured = os.environ.get("XDG_CONFIG_HOME", "")
    if configured and Path(configured).is_absolute():
        return Path(configured)
    return Path.home() / ".config"


def _read_entry(path: Path) -> configparser.SectionProxy | None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None  # absent, or not an entry a desktop would start either
    return parser["Desktop Entry"] if parser.has_section("Desktop Entry") else None


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temp, 0o644)  # mkstemp makes it 0600; an autostart entry is world-readable
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _require_support(platform: str) -> None:
    if platform == "darwin":
        _macos_launch_agent()
    if platform.startswith(("win32", "cygwin")):
        _windows_startup_shortcut()


def _macos_launch_agent() -> None:
    """Not built: on macOS start at login would be a LaunchAgent, a property list at
    ``~/Library/LaunchAgents/org.coven.desktop.plist`` with ``Label``, ``ProgramArguments``
    (the command) and ``RunAtLoad`` true, which launchd loads at login (or, for a signed app
    bundle on macOS 13+, ``SMAppService.mainAppService().register()``)."""
    raise NotImplementedError(
        "Start at login is not available on macOS yet (it would be a LaunchAgent in "
        "~/Library/LaunchAgents); add Coven Desktop to System Settings › General › "
        "Login Items instead."
    )


def _windows_startup_shortcut() -> None:
    """Not built: on Windows start at login would be a shortcut (``.lnk``) to the command in
    the Startup folder (``%APPDATA%\\Microsoft\\Windows\\Start Menu\\Programs\\Startup``,
    ``shell:startup``), made through the Shell's ``IShellLink``, or a value under
    ``HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run``."""
    raise NotImplementedError(
        "Start at login is not available on Windows yet (it would be a shortcut in the "
        "Startup folder); put a shortcut to Coven Desktop in shell:startup instead."
    )
