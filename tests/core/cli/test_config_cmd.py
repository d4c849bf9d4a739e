"""``coven config`` and ``coven config set`` (issue #18)."""

from __future__ import annotations

from tests.core.cli.conftest import Coven

DAILY = ("--schedule", "@daily", "--tz", "UTC")


def test_config_shows_the_default_timeout_and_set_changes_it(coven: Coven) -> None:
    coven.new_store()
    shown = coven.json("config")["settings"]
    assert [(s["name"], s["value"], s["default"]) for s in shown] == [
        ("default-timeout", "1d", True),
        ("max-active", "4", True),
    ]
    status, out, err = coven("config", "set", "default-timeout", "6h")
    assert (status, err) == (0, "") and "default-timeout is now 6h" in out
    status, out, _ = coven("config")
    [line] = [line for line in out.splitlines() if line.startswith("default-timeout")]
    assert "6h" in line and "(default)" not in line


def test_config_set_refuses_what_is_not_a_timeout(coven: Coven) -> None:
    coven.refuses("config", "set", "default-timeout", "soon", message="is not a duration")
    coven.refuses("config", "set", "timeout", "6h", message="invalid choice")


def test_timeout_none_default_and_a_duration_are_three_things(coven: Coven) -> None:
    assert coven.add("plain", *DAILY)["timeout"] == "default"
    assert coven.add("unlimited", *DAILY, "--timeout", "none")["timeout"] == "none"
    assert coven.add("own", *DAILY, "--timeout", "2h")["timeout_seconds"] == 7200
    edited = coven.json("routine", "edit", "unlimited", "--timeout", "default")
    assert edited["timeout"] == "default"
