"""The frozen bundle's runner entry points (``coven_core.runner.frozen``), without a bundle;
tests/packaging/test_bundle.py runs them in a real one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from coven_core.runner import frozen
from coven_core.runtime.forkserver import server_command
from coven_core.runtime.runner import runner_command

BUNDLE = Path("/opt/coven")


def test_the_runtime_starts_the_flags_the_entry_point_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert runner_command() == [sys.executable, frozen.RUNNER_FLAG]
    assert server_command() == [sys.executable, frozen.SERVER_FLAG]


def test_arguments_for_the_app_are_left_to_the_app() -> None:
    assert frozen.frozen_entry([]) is None
    assert frozen.frozen_entry(["--data-dir", "/tmp/x"]) is None
    assert frozen.frozen_entry(["status", "--coven-runner"]) is None  # only as the first argument


def test_the_flags_hand_over_to_the_runner_and_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", str(BUNDLE / "coven"))
    monkeypatch.setenv("_PYI_PARENT_PROCESS_LEVEL", "-1")
    assert frozen.frozen_entry([frozen.RUNNER_FLAG]) == 2  # the runner's usage error
    assert "_PYI_PARENT_PROCESS_LEVEL" not in os.environ  # undone before the runner ran
    assert frozen.frozen_entry([frozen.SERVER_FLAG, "not-a-descriptor"]) == 2


def test_the_bootloaders_library_path_is_given_back() -> None:
    environ = {
        "LD_LIBRARY_PATH": f"{BUNDLE}/_internal:/usr/local/lib",
        "LD_LIBRARY_PATH_ORIG": "/usr/local/lib",
    }
    frozen.restore_environment(environ, BUNDLE)
    assert environ == {"LD_LIBRARY_PATH": "/usr/local/lib"}


def test_without_an_original_the_library_path_goes() -> None:
    environ = {"LD_LIBRARY_PATH": f"{BUNDLE}/_internal", "HOME": "/home/me"}
    frozen.restore_environment(environ, BUNDLE)
    assert environ == {"HOME": "/home/me"}


def test_paths_into_the_bundle_and_its_bookkeeping_go_and_the_rest_stays() -> None:
    environ = {
        "QT_PLUGIN_PATH": f"{BUNDLE}/_internal/PySide6/Qt/plugins",
        "XDG_DATA_DIRS": f"/usr/share:{BUNDLE}/_internal/share",
        "_PYI_ARCHIVE_FILE": f"{BUNDLE}/coven",
        "_PYI_PARENT_PROCESS_LEVEL": "-1",
        "EMPTY": "",
        "PATH": "/usr/bin:/opt/covenant/bin",  # a sibling of the bundle, not inside it
        "NOTE": "relative/opt/coven",
    }
    frozen.restore_environment(environ, BUNDLE)
    assert environ == {
        "XDG_DATA_DIRS": "/usr/share",
        "EMPTY": "",
        "PATH": "/usr/bin:/opt/covenant/bin",
        "NOTE": "relative/opt/coven",
    }


def test_the_bundle_root_holds_the_executables_and_the_libraries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "executable", "/opt/coven/coven-desktop")
    monkeypatch.setattr(sys, "_MEIPASS", "/opt/coven/_internal", raising=False)
    assert frozen.bundle_root() == Path("/opt/coven")
    app = "/Applications/Coven Desktop.app/Contents"
    monkeypatch.setattr(sys, "executable", f"{app}/MacOS/coven-desktop")
    monkeypatch.setattr(sys, "_MEIPASS", f"{app}/Frameworks")
    assert frozen.bundle_root() == Path(app)
