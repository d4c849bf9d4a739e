"""coven_desktop.resources: icons load through one helper, here and from an installed wheel
(which also carries the compiled translation catalogues)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from PySide6.QtGui import QIcon

from coven_desktop import resources

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {"coven", "tray-attention", "tray-error", "tray-idle", "tray-paused", "tray-running"}


def test_every_icon_loads_and_renders_here(qapp) -> None:  # type: ignore[no-untyped-def]
    assert set(resources.icon_names()) == EXPECTED
    for name in resources.icon_names():
        assert not QIcon(str(resources.icon(name))).pixmap(22, 22).isNull(), name


def test_a_missing_resource_is_named() -> None:
    with pytest.raises(FileNotFoundError, match=r"tray-sleepy\.svg"):
        resources.icon("tray-sleepy")
    with pytest.raises(FileNotFoundError, match=r"png/22/coven\.png"):
        resources.icon_png("coven", 22)  # only a frozen bundle ships PNGs


_CHECK = textwrap.dedent("""
    import json, os, sys
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtGui import QGuiApplication, QIcon
    import coven_desktop
    from coven_desktop import resources
    app = QGuiApplication([])
    names = resources.icon_names()
    paths = {n: str(resources.icon(n)) for n in names}
    renders = {n: not QIcon(p).pixmap(22, 22).isNull() for n, p in paths.items()}
    from coven_core.notation import i18n
    catalogues = [str(p) for p in __import__("pathlib").Path(i18n.CATALOG_DIRS[0]).rglob("*.mo")]
    german = i18n._("Needs attention", "de_DE")
    print(json.dumps({"package": coven_desktop.__file__, "paths": paths, "renders": renders,
                      "catalogues": catalogues, "german": german}))
""")


@pytest.mark.slow
def test_every_icon_loads_from_an_installed_wheel(tmp_path: Path) -> None:
    """A wheel built from this tree, installed into a fresh venv; the dependencies come from
    this environment (a .pth line to its site-packages, after the venv's own)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                    "-q", "-w", str(tmp_path / "wheels"), str(ROOT)], check=True)  # fmt: skip
    (wheel,) = (tmp_path / "wheels").glob("coven_desktop-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", str(wheel)], check=True)  # fmt: skip
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # only the wheel's copy
    report = json.loads(
        subprocess.check_output([python, "-c", _CHECK], text=True, cwd=tmp_path, env=clean)
    )
    assert report["package"].startswith(str(site))  # the wheel's copy, not this tree
    assert set(report["paths"]) == EXPECTED
    assert all(path.startswith(str(site)) for path in report["paths"].values())
    assert all(report["renders"].values()), report["renders"]
    # The build compiled resources/locale into the package (setup.py), and it is read.
    assert report["catalogues"] and all(p.startswith(str(site)) for p in report["catalogues"])
    assert report["german"] == "Handlungsbedarf"
