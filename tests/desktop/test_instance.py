"""One instance per user and store: the socket stays where only its owner can reach it."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from coven_desktop.instance import InstanceServer, hand_over, server_name


def _long_data_dir(tmp_path: Path) -> Path:
    data = tmp_path / ("data-" + "x" * 70) / ("store-" + "y" * 40)
    data.mkdir(mode=0o700, parents=True)
    return data


def test_a_long_data_dir_keeps_the_socket_inside_it(
    qtbot: QtBot, loop: qasync.QEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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


def _private_store(tmp_path: Path) -> tuple[Path, str]:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    return data, server_name(data)


def test_a_stale_socket_is_replaced_and_no_instance_means_no_hand_over(
    qtbot: QtBot, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    _data, name = _private_store(tmp_path)
    crashed = socket.socket(socket.AF_UNIX)
    crashed.bind(name)  # what an instance that crashed leaves: a socket file, no listener
    crashed.close()
    assert not hand_over(name, ["--show"])
    server = InstanceServer(name)
    try:
        with qtbot.waitSignal(server.activated, timeout=5000) as activated:
            assert hand_over(name, [])
        assert activated.args == [[]]
    finally:
        server.close()
    assert not hand_over(name, [])


def test_a_line_that_is_not_a_launch_shows_the_window_and_a_silent_one_nothing(
    qtbot: QtBot, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    data, name = _private_store(tmp_path)
    server = InstanceServer(name)
    shown: list[object] = []
    server.activated.connect(shown.append)
    try:
        with socket.socket(socket.AF_UNIX) as silent:
            silent.connect(name)  # connects and says nothing: no launch
        with (
            qtbot.waitSignal(server.activated, timeout=5000),
            socket.socket(socket.AF_UNIX) as other,
        ):
            other.connect(name)
            other.sendall(b'{"not": "a list"}\n')
        with qtbot.waitSignal(server.activated, timeout=5000):
            assert hand_over(name, ["--data-dir", str(data)])
    finally:
        server.close()
    assert shown == [[], ["--data-dir", str(data)]]
