"""A real desktop (issue #22): ``coven-desktop`` on an X server with an XEmbed tray host, as a
person meets it. Its icon is embedded in the tray, a right click opens its menu, and the menu's
"Pause all" takes effect in the engine.

Xvfb, openbox (a window manager: menus are placed as on a desktop), trayer (the tray host) and
xdotool come from Debian packages that ``.ci/run`` installs; off CI the test is skipped on a
machine without them.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from coven_core import queries
from coven_core.clock import SystemClock
from coven_core.engine import open_engine
from coven_core.model import RevisionSpec
from coven_core.views.status import status
from tests.system.conftest import wait_for

TOOLS = ("Xvfb", "openbox", "trayer", "xdotool", "xwininfo")


@dataclass(frozen=True)
class Spot:
    """Where a window is on the screen."""

    x: int
    y: int
    width: int
    height: int

    @property
    def centre(self) -> tuple[int, int]:
        return self.x + self.width // 2, self.y + self.height // 2


def _tools() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if not missing:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must install {', '.join(missing)} (.ci/run)")
    pytest.skip(f"no {', '.join(missing)} here (apt: xvfb openbox trayer xdotool x11-utils)")


def _display_number(xvfb: subprocess.Popen[bytes], pipe: int) -> str:
    """Xvfb writes the display it chose to ``-displayfd`` once it accepts clients: the number,
    then a newline, in two writes. Closing the pipe before the newline kills it (EPIPE)."""
    text = b""
    deadline = time.monotonic() + 30
    while not text.endswith(b"\n"):
        ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(pipe, 16) if ready else b""
        if not chunk:
            xvfb.kill()
            pytest.fail(f"Xvfb did not start (it said {text!r})")
        text += chunk
    return text.decode().strip()


@dataclass
class Display:
    """An X display with a window manager; ``env`` runs apps on it."""

    env: dict[str, str]
    processes: list[subprocess.Popen[bytes]]

    def start(self, *argv: str) -> None:
        self.processes.append(subprocess.Popen(
            argv, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        ))  # fmt: skip

    def start_tray_host(self) -> None:
        self.start("trayer", "--edge", "top", "--align", "right", "--widthtype", "request",
                   "--height", "24")  # fmt: skip
        assert wait_for(lambda: _tray_host_ready(self.env)), "trayer never showed its panel"


@pytest.fixture
def display() -> Iterator[Display]:
    _tools()
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write,), stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write)
    number = _display_number(xvfb, read)
    os.close(read)
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # no session bus: Qt's balloon tips, no daemon
    env["DISPLAY"] = f":{number}"
    made = Display(env, [xvfb])
    made.start("openbox")
    try:
        yield made
    finally:
        for process in reversed(made.processes):
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


_WINDOW = re.compile(r"^(\s*)0x[0-9a-f]+ .*?(\d+)x(\d+)\+-?\d+\+-?\d+\s+\+(-?\d+)\+(-?\d+)\s*$")


def embedded_icon(env: dict[str, str]) -> Spot | None:
    """The Coven icon's window, if it sits inside the tray host's panel (XEmbed)."""
    tree = subprocess.run(["xwininfo", "-root", "-tree"], env=env, capture_output=True,
                          text=True, check=False).stdout.splitlines()  # fmt: skip
    panel_depth = None
    for line in tree:
        depth = len(line) - len(line.lstrip())
        if '"panel": ("panel" "trayer")' in line:
            panel_depth = depth
        elif panel_depth is not None and depth <= panel_depth:
            panel_depth = None  # left the panel's subtree
        elif panel_depth is not None and '("coven-desktop"' in line:
            match = _WINDOW.match(line)
            if match:
                width, height, x, y = map(int, match.groups()[1:])
                return Spot(x, y, width, height)
    return None


def _tray_host_ready(env: dict[str, str]) -> bool:
    tree = subprocess.run(["xwininfo", "-root", "-tree"], env=env, capture_output=True,
                          text=True, check=False).stdout  # fmt: skip
    return '"panel": ("panel" "trayer")' in tree


def launch(env: dict[str, str], data: Path, log: Path) -> subprocess.Popen[bytes]:
    script = shutil.which("coven-desktop")
    argv = [script] if script else [sys.executable, "-m", "coven_desktop.app"]
    with log.open("wb") as out:
        return subprocess.Popen([*argv, "--data-dir", str(data)], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip


def key_presses_to(label: str, data: Path) -> int:
    """How many Down presses from the menu's top reach ``label``: the tray's own menu, built
    from the same store, counts the items the keyboard stops at (enabled, not separators)."""
    from PySide6.QtWidgets import QApplication

    from coven_desktop.tray import Tray

    app = QApplication.instance() or QApplication([])
    engine = open_engine(data, clock=SystemClock())
    try:
        now = datetime.now(UTC)
        overview = queries.overview(engine.store, now, None)
    finally:
        engine.close()
    tray = Tray()
    tray.update(overview, now, queries.user_locale())
    stops = [a.text() for a in tray.menu.actions() if a.isEnabled() and not a.isSeparator()]
    tray.dispose()
    app.processEvents()
    return stops.index(label) + 1


def add_routine(data: Path) -> None:
    """One routine that does not come due while a test drives the menu: a run starting or
    ending in between would enable "Running (1)" and move every item below it. ("every 1h"
    came due at the next whole minute, and a slow run of the test crossed it.)"""
    engine = open_engine(data, clock=SystemClock())
    try:
        spec = RevisionSpec(schedule="@yearly", timezone="UTC", argv=("/bin/true",))
        engine.operator.add_routine("backup", spec)
    finally:
        engine.close()


@pytest.fixture
def quit_at_end(tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """The apps a test launched; each must quit cleanly on SIGTERM, as at logout."""
    apps: list[subprocess.Popen[bytes]] = []
    yield apps
    for app in apps:
        app.terminate()
        code = app.wait(30)
        assert code == 0, (tmp_path / "app.log").read_text()


def test_pause_all_from_the_tray_menu_on_a_real_display(
    display: Display, tmp_path: Path, quit_at_end: list[subprocess.Popen[bytes]]
) -> None:
    display.start_tray_host()
    data = tmp_path / "data"
    add_routine(data)
    quit_at_end.append(launch(display.env, data, tmp_path / "app.log"))
    assert wait_for(lambda: embedded_icon(display.env)), "the icon was never embedded in the tray"
    icon = embedded_icon(display.env)
    assert icon is not None
    presses = lambda: key_presses_to("Pause all", data)  # noqa: E731
    assert choose_from_menu(display.env, icon, presses, lambda: _paused(data)), (
        "Pause all did not reach the engine"
    )


def choose_from_menu(
    env: dict[str, str], icon: Spot, presses: Callable[[], int], done: Callable[[], bool]
) -> bool:
    """Right-click the icon, walk down to the item and press Return, as a person does; again,
    after Escape, when it did not take. On a loaded machine (CI beside other work) the menu
    can open after the keys were sent, or before the app's first overview filled it in; the
    way down is counted again for each try, from the store as it is then."""
    x, y = icon.centre
    for pause in (0.5, 1.5, 3.0):
        right_click = ["xdotool", "mousemove", str(x), str(y), "click", "3", "sleep", str(pause)]
        keys = ["key", *["Down"] * presses(), "Return"]
        subprocess.run([*right_click, *keys], env=env, check=True)
        if wait_for(done, timeout=10):
            return True
        subprocess.run(["xdotool", "key", "Escape"], env=env, check=True)
    return False


def test_the_icon_embeds_when_the_tray_host_comes_up_after_the_app(
    display: Display, tmp_path: Path, quit_at_end: list[subprocess.Popen[bytes]]
) -> None:
    """At login the app may start before the panel: it still ends up in the tray."""
    data = tmp_path / "data"
    add_routine(data)
    quit_at_end.append(launch(display.env, data, tmp_path / "app.log"))
    assert wait_for(lambda: _window_shown(display.env), timeout=30), "no way in without a tray"
    display.start_tray_host()
    assert wait_for(lambda: embedded_icon(display.env)), "the icon never came to the tray"


def _window_shown(env: dict[str, str]) -> bool:
    found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "^Coven Desktop$"],
                           env=env, capture_output=True, text=True, check=False)  # fmt: skip
    return bool(found.stdout.strip())


def _paused(data: Path) -> bool:
    engine = open_engine(data, clock=SystemClock())
    try:
        return status(engine.store, datetime.now(UTC)).paused_all
    finally:
        engine.close()
