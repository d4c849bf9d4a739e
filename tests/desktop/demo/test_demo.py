"""``python -m coven_desktop.demo`` draws every page to a PNG file, offscreen (issue #8)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coven_desktop.demo.tray import TRAY_PICTURES
from coven_desktop.demo.windows import EXTRA_WINDOWS
from coven_desktop.windows import PAGES

PNG = b"\x89PNG\r\n\x1a\n"


def expected_files() -> list[str]:
    names = [info.key for info in PAGES]
    for info in PAGES:
        names += [name for name, _make in EXTRA_WINDOWS.get(info.key, ())]
    names += TRAY_PICTURES
    return [f"{name}.png" for name in names]


@pytest.mark.parametrize(
    "options",
    [("--locale", "en_US"), ("--locale", "de_DE"), ("--palette", "dark")],
    ids=["en", "de", "dark"],
)
def test_every_page_is_drawn(tmp_path: Path, options: tuple[str, ...]) -> None:
    env = {key: value for key, value in os.environ.items() if key != "DISPLAY"}
    done = subprocess.run(
        [sys.executable, "-m", "coven_desktop.demo", "--out", str(tmp_path), *options],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # Qt said nothing worth hearing
    for name in expected_files():
        drawn = (tmp_path / name).read_bytes()
        assert drawn.startswith(PNG) and len(drawn) > 10_000, name
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(expected_files())


def test_a_2x_render_has_twice_the_pixels(tmp_path: Path) -> None:
    from PySide6.QtGui import QImage

    env = {key: value for key, value in os.environ.items() if key != "DISPLAY"}
    for scale in ("1", "2"):
        subprocess.run(
            [sys.executable, "-m", "coven_desktop.demo", "--out", str(tmp_path / scale),
             "--scale", scale],
            env=env, capture_output=True, check=True, timeout=300,
        )  # fmt: skip
    one, two = (QImage(str(tmp_path / scale / "routines.png")) for scale in ("1", "2"))
    assert (two.width(), two.height()) == (2 * one.width(), 2 * one.height())
