"""spec.json: what the engine asks of a runner, and what a runner refuses to read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coven_core.runner.spec import (
    DEFAULT_OUTPUT_CAP_BYTES,
    DEFAULT_STOP_GRACE_SECONDS,
    RunnerSpec,
    SpecError,
)

GOOD = {"attempt_id": "a1", "argv": ["/bin/echo", "hi"]}


def test_a_spec_survives_the_round_trip_through_a_file(tmp_path: Path) -> None:
    spec = RunnerSpec(
        "a1", ("/bin/echo", "hi"), cwd="/tmp", env=(("A", "1"),), timeout_seconds=2.5,
        stop_grace_seconds=0.5, output_cap_bytes=1024,
    )  # fmt: skip
    path = tmp_path / "spec.json"
    path.write_text(spec.to_json(), encoding="utf-8")
    assert RunnerSpec.from_file(path) == spec


def test_the_json_shape_is_the_documented_one() -> None:
    data = json.loads(RunnerSpec("a1", ("x",), env=(("A", "1"),)).to_json())
    assert data == {
        "attempt_id": "a1", "argv": ["x"], "cwd": None, "env": {"A": "1"}, "shell": False,
        "timeout_seconds": None, "stop_grace_seconds": 5.0, "output_cap_bytes": 10 * 1024 * 1024,
    }  # fmt: skip


def test_omitted_fields_take_their_defaults() -> None:
    spec = RunnerSpec.from_json(json.dumps(GOOD))
    assert spec.stop_grace_seconds == DEFAULT_STOP_GRACE_SECONDS == 5.0
    assert spec.output_cap_bytes == DEFAULT_OUTPUT_CAP_BYTES
    assert (spec.cwd, spec.env, spec.shell, spec.timeout_seconds) == (None, (), False, None)


def test_a_shell_command_runs_through_sh() -> None:
    assert RunnerSpec("a1", ("echo $HOME",), shell=True).command == ["/bin/sh", "-c", "echo $HOME"]
    assert RunnerSpec("a1", ("echo", "$HOME")).command == ["echo", "$HOME"]


@pytest.mark.parametrize(
    "change",
    [
        {"attempt_id": ""},
        {"attempt_id": None},
        {"argv": []},
        {"argv": "echo hi"},
        {"argv": ["echo", 1]},
        {"argv": ["echo\0"]},
        {"argv": ["echo", "hi"], "shell": True},
        {"shell": "yes"},
        {"cwd": 3},
        {"env": {"A": 1}},
        {"env": {"A=B": "1"}},
        {"env": ["A", "1"]},
        {"timeout_seconds": 0},
        {"timeout_seconds": -1},
        {"timeout_seconds": True},
        {"stop_grace_seconds": -0.5},
        {"output_cap_bytes": 1.5},
        {"output_cap_bytes": -1},
        {"surprise": 1},
    ],
)
def test_a_malformed_spec_is_refused(change: dict[str, object]) -> None:
    with pytest.raises(SpecError):
        RunnerSpec.from_json(json.dumps({**GOOD, **change}))


@pytest.mark.parametrize("text", ["", "{", "[]", '{"argv": ["x"]}', "NaN"])
def test_text_that_is_no_spec_is_refused(text: str) -> None:
    with pytest.raises(SpecError):
        RunnerSpec.from_json(text)


def test_a_missing_spec_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read spec"):
        RunnerSpec.from_file(tmp_path / "spec.json")


def test_infinite_timeouts_are_refused() -> None:
    with pytest.raises(SpecError):
        RunnerSpec("a1", ("x",), timeout_seconds=float("inf"))
