"""The frozen bundle (packaging/coven.spec), built for real and run without any Python.

Slow (a PyInstaller build, ~30 s here, and real processes): ``python -m pytest --run-slow
tests/packaging``. Every bundled program runs with a PATH that has no Python on it, from a
bundle built into a temp dir, so what works here works from ``_internal`` alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from coven_core.runner.frozen import RUNNER_FLAG
from coven_core.runner.journal import read_journal
from coven_core.runner.spec import JOURNAL_FILE, SPEC_FILE, STDOUT_FILE, RunnerSpec
from coven_desktop.resources import icon_names
from tests.packaging.scripts import render_icons

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip(
        "PyInstaller", reason="install the packaging extra: pip install -e '.[packaging]'"
    )
    work = tmp_path_factory.mktemp("pyinstaller")
    command = [sys.executable, "-m", "PyInstaller", str(ROOT / "packaging" / "coven.spec"),
               "--noconfirm", "--log-level", "WARN",
               "--distpath", str(work / "dist"), "--workpath", str(work / "build")]  # fmt: skip
    env = {**os.environ, "COVEN_BUNDLE_WORK": str(work / "assets")}
    built = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-4000:]
    return work / "dist" / "coven"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def run(
    bundle: Path, program: str, *args: str, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bundle / program), *args], env=_bundle_env(**extra_env),
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def _bundle_env(**extra: str) -> dict[str, str]:
    """The test's private home and dirs, and a PATH with nothing on it: no Python the bundle
    could fall back on (the routines' commands are absolute paths)."""
    keep = ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    return {
        **env,
        "PATH": "/nonexistent",
        "QT_QPA_PLATFORM": "offscreen",
        "LANG": "C.UTF-8",
        **extra,
    }


def test_the_bundle_holds_both_programs_and_every_icon(bundle: Path) -> None:
    assert (bundle / "coven").is_file() and (bundle / "coven-desktop").is_file()
    icons = bundle / "_internal" / "coven_desktop" / "icons"
    for name in icon_names():
        assert (icons / f"{name}.svg").is_file()
        for size in render_icons.SIZES:
            assert (icons / "png" / str(size) / f"{name}.png").is_file()


def test_the_translation_catalogues_are_inside(bundle: Path) -> None:
    """Every language of ``resources/locale``, compiled, where ``coven_core.notation.i18n`` looks."""
    catalogues = ROOT / "resources" / "locale"
    sources = sorted(catalogues.glob("*/LC_MESSAGES/coven.po"))
    assert sources
    for source in sources:
        compiled = source.relative_to(catalogues).with_suffix(".mo")
        assert (bundle / "_internal" / "coven_core" / "locale" / compiled).is_file(), compiled


def test_the_command_line_speaks_german(bundle: Path, data: Path) -> None:
    """The compiled catalogue is read: ``coven routine add`` answers in de_DE."""
    added = run(bundle, "coven", "--data-dir", str(data), "routine", "add", "env", "--schedule",
                "@yearly", "--tz", "UTC", "--", "/usr/bin/env", LC_ALL="de_DE.UTF-8")  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "hinzugefügt" in added.stdout, added.stdout


def test_the_tray_app_reaches_ready_and_quits(bundle: Path, data: Path) -> None:
    started = run(bundle, "coven-desktop", "--data-dir", str(data), "--quit-after-ready")
    assert started.returncode == 0, started.stderr
    report = json.loads(started.stdout.strip().splitlines()[-1])
    assert report["ready"] and report["state"] == "idle" and report["window_shown"]
    assert report["tray_icon_renders"] and report["window_icon_renders"]  # the SVG plugin is in
    assert "Traceback" not in started.stderr
    assert data.stat().st_mode & 0o777 == 0o700  # DESIGN §13


def test_status_answers_in_json(bundle: Path, data: Path) -> None:
    missing = run(bundle, "coven", "--data-dir", str(data), "status", "--json")
    assert missing.returncode == 2 and "no Coven store" in missing.stderr  # and makes none
    made = run(bundle, "coven", "--data-dir", str(data), "config", "set", "default-timeout", "1d")
    assert made.returncode == 0, made.stderr
    status = run(bundle, "coven", "--data-dir", str(data), "status", "--json")
    assert status.returncode == 0, status.stderr
    assert "leader" in json.loads(status.stdout)


def test_the_bundled_tz_database_and_locale_data_are_inside(bundle: Path, data: Path) -> None:
    import tzdata

    preview = run(bundle, "coven", "--data-dir", str(data), "preview", "--schedule", "30 2 * * *",
                  "--tz", "Pacific/Apia", "--from", "2011-12-28T00:00", "--count", "4",
                  COVEN_TZDB="bundled", LC_ALL="de_DE.UTF-8")  # fmt: skip
    assert preview.returncode == 0, preview.stderr
    assert f"tzdb {tzdata.IANA_VERSION} (bundled)" in preview.stdout
    assert "30.12.2011, 02:30:00" in preview.stdout  # Babel's de_DE data, Apia's lost day
    assert "übersprungen" in preview.stdout  # and in German words (resources/locale, compiled)


def test_a_routine_runs_through_the_bundled_runner(bundle: Path, data: Path) -> None:
    cli = ("--data-dir", str(data))
    added = run(bundle, "coven", *cli, "routine", "add", "env", "--schedule", "@yearly",
                "--tz", "UTC", "--", "/usr/bin/env")  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert run(bundle, "coven", *cli, "run-now", "env").returncode == 0
    with _daemon(bundle, data) as daemon:
        assert _bootloader_set(daemon.pid, "LD_LIBRARY_PATH", str(bundle / "_internal"))
        assert _poll(lambda: _disposition(bundle, data) is not None), "the run never settled"
    assert _disposition(bundle, data) == "succeeded"
    (output,) = (data / "output").rglob("*.out")
    environment = output.read_text()
    # The command got the person's environment, not the bundle's library path.
    assert str(bundle) not in environment and "_PYI_" not in environment


def test_the_runner_entry_point_runs_an_attempt(bundle: Path, tmp_path: Path) -> None:
    """The fallback when the fork server cannot be had: ``<executable> --coven-runner DIR``."""
    attempt = tmp_path / "attempt"
    attempt.mkdir(mode=0o700)
    spec = RunnerSpec(attempt_id="a1", argv=("/bin/sh", "-c", "echo hello from the bundle"))
    (attempt / SPEC_FILE).write_text(spec.to_json())
    ran = run(bundle, "coven", RUNNER_FLAG, str(attempt))
    assert ran.returncode == 0, ran.stderr
    journal = read_journal(attempt / JOURNAL_FILE)
    assert journal.exit is not None and journal.exit.exit_code == 0
    assert "hello from the bundle" in (attempt / STDOUT_FILE).read_text()


class _daemon:
    """``coven daemon`` from the bundle, stopped with SIGTERM (it drains) on exit."""

    def __init__(self, bundle: Path, data: Path) -> None:
        self.command = [str(bundle / "coven"), "--data-dir", str(data), "daemon"]

    def __enter__(self) -> subprocess.Popen[str]:
        self.process = subprocess.Popen(self.command, env=_bundle_env(), text=True,
                                        stderr=subprocess.PIPE)  # fmt: skip
        return self.process

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        _, stderr = self.process.communicate(timeout=60)
        assert self.process.returncode == 0, stderr


def _disposition(bundle: Path, data: Path) -> str | None:
    history = run(bundle, "coven", "--data-dir", str(data), "history", "env", "--json")
    occurrences = json.loads(history.stdout)["occurrences"]
    return occurrences[0]["disposition"] if occurrences else None


def _bootloader_set(pid: int, name: str, value: str) -> bool:
    """Whether the bundle's process runs with ``name=value`` (so restoring it matters)."""
    environ = Path(f"/proc/{pid}/environ")
    return _poll(lambda: f"{name}={value}".encode() in environ.read_bytes().split(b"\0"))


def _poll(predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)  # real-time: waiting on another process (the bundled daemon)
    return False


def test_install_sh_puts_it_in_the_menu_and_it_starts_from_there(
    bundle: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}  # the script's own tools: cp, sed, ln
    installed = subprocess.run(["/bin/sh", str(bundle / "install.sh")], env=env,
                               capture_output=True, text=True, timeout=120)  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    entry = home / ".local/share/applications/io.coven.Desktop.desktop"
    lib = home / ".local/lib/coven-desktop"
    assert f'Exec="{lib}/coven-desktop"' in entry.read_text().splitlines()
    validate = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout
    for size in render_icons.SIZES:
        assert (
            home / f".local/share/icons/hicolor/{size}x{size}/apps/io.coven.Desktop.png"
        ).is_file()
    started = subprocess.run([str(home / ".local/bin/coven-desktop"), "--quit-after-ready",
                              "--data-dir", str(tmp_path / "data")],
                             env=_bundle_env(HOME=str(home)), capture_output=True, text=True,
                             timeout=120)  # fmt: skip
    assert started.returncode == 0 and '"ready": true' in started.stdout, started.stderr
    removed = subprocess.run(["/bin/sh", str(lib / "install.sh"), "--uninstall"], env=env,
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert removed.returncode == 0, removed.stderr
    assert not lib.exists() and not entry.exists() and not (home / ".local/bin/coven").exists()
    assert (tmp_path / "data").is_dir()  # the person's data stays
