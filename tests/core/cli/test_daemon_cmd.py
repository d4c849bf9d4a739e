"""``coven daemon``: only its interface here; the lead's system tests run it for real."""

from __future__ import annotations

from collections.abc import Callable

Invoke = Callable[..., tuple[int, str, str]]


def test_help_describes_the_foreground_scheduler(cli: Invoke) -> None:
    status, out, err = cli("daemon", "--help")
    assert (status, err) == (0, "")
    assert "usage: coven daemon [-h] [--data-dir DIR]" in out and "SIGTERM" in out


def test_it_is_listed_in_the_top_level_help(cli: Invoke) -> None:
    status, out, _ = cli("--help")
    assert status == 0
    for command in ("routine", "pause", "resume", "explain", "history", "status", "daemon"):
        assert command in out
