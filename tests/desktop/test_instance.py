"""One instance per user and store: the socket stays where only its owner can reach it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from coven_desktop.instance import InstanceServer, hand_over, server_name


def _long_data_dir(tmp_path: Path) -> Path:
    data = tmp_path / ("data-" + "x" * 70) / ("store-" + "y" * 40)
    data.mkdir(mode=0o700, parents=True)
    return data


def test_a_long_data_dir_keeps_the_socket_inside_it(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    data = _long_data_dir(tmp_path)
    name = server_name(data)
    assert len(os.fsencode(name)) > 108  # too long to bind as it is
    server = InstanceServer(name)
    try:
        sockets = [path for path in data.iterdir() if path.is_socket()]
        assert [str(path) for path in sockets] == [name]
        assert stat.S_IMODE(sockets[0].stat().st_mode) == 0o600
        with qtbot.waitSignal(server.activated, timeout=5000) as activated:
            assert hand_over(name, ["--show"])
        assert activated.args == [["--show"]]
    finally:
        server.close()
    assert list(data.iterdir()) == []


def test_a_runtime_dir_others_can_enter_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "run"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    data = tmp_path / "data"
    assert Path(server_name(data)).parent == data
    shared.chmod(0o700)
    assert Path(server_name(data)).parent == shared
