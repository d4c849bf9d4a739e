"""Render the SVG icons in ``icons/`` to PNGs (and the Windows/macOS icon files) with QtSvg.

    python packaging/render_icons.py OUT_DIR           # <size>/<name>.png, coven.ico, coven.icns
    python packaging/render_icons.py --panels OUT_DIR  # tray-panels.png: light and dark panels

Runs offscreen (no display needed). The bundle's spec calls :func:`render_all` at build time,
so no generated image is committed; the freedesktop icon theme uses the same sizes.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

#: The freedesktop hicolor theme's usual sizes; 16 and 22 are the tray's.
SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
#: Panel colours to judge the tray icons against: a light (GNOME/KDE Breeze) and a dark one.
PANELS = {"light": "#f6f5f4", "dark": "#1e1e1e"}
TRAY_SIZES = (16, 22)

ICONS = Path(__file__).resolve().parent.parent / "icons"


def _application() -> None:
    if QCoreApplication.instance() is None:
        _application.keep = QGuiApplication([sys.argv[0]])  # type: ignore[attr-defined]


def render(svg: Path, size: int, background: str | None = None) -> QImage:
    """``svg`` at ``size`` x ``size`` pixels, on a transparent or a solid background."""
    _application()
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor(background) if background else Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


def _save(image: QImage, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(path)):
        raise OSError(f"could not write {path}")
    return path


def render_all(source: Path = ICONS, out: Path = Path("build/icons")) -> Path:
    """Every SVG in ``source`` at every size as ``out/<size>/<name>.png``, and the app icon as
    ``out/coven.ico`` and ``out/coven.icns`` (Qt's image plugins write both)."""
    svgs = sorted(source.glob("*.svg"))
    if not svgs:
        raise FileNotFoundError(f"no SVG icons in {source}")
    for svg in svgs:
        for size in SIZES:
            _save(render(svg, size), out / str(size) / f"{svg.stem}.png")
    app_icon = render(source / "coven.svg", 256)
    _save(app_icon, out / "coven.ico")
    _save(app_icon, out / "coven.icns")
    return out


def render_panels(out: Path, source: Path = ICONS, zoom: int = 4) -> Path:
    """One sheet to judge the tray icons by eye: a row per icon; for each panel colour and
    tray size, the icon at its real size and enlarged ``zoom`` times (pixels kept sharp)."""
    svgs = sorted(source.glob("tray-*.svg"))
    cell = max(TRAY_SIZES) * (zoom + 1) + 12
    sheet = QImage(
        cell * len(PANELS) * len(TRAY_SIZES), cell * len(svgs), QImage.Format.Format_RGB32
    )
    painter = QPainter(sheet)
    for row, svg in enumerate(svgs):
        for column, (colour, size) in enumerate(
            (colour, size) for colour in PANELS.values() for size in TRAY_SIZES
        ):
            image = render(svg, size, colour)
            left, top = column * cell, row * cell
            painter.fillRect(left, top, cell, cell, QColor(colour))
            painter.drawImage(left + 4, top + 4, image)
            large = image.scaled(
                size * zoom, size * zoom, mode=Qt.TransformationMode.FastTransformation
            )
            painter.drawImage(left + size + 8, top + 4, large)
    painter.end()
    return _save(sheet, out / "tray-panels.png")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--panels", action="store_true", help="tray icons on light/dark panels")
    args = parser.parse_args(argv)
    if args.panels:
        render_panels(args.out)
    else:
        render_all(ICONS, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
