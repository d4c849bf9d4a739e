"""What the engine asks a runner to do (``spec.json``), and the attempt directory's file names."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any

#: The attempt directory's files: the engine writes the spec, the runner writes the rest.
SPEC_FILE = "spec.json"
JOURNAL_FILE = "journal.jsonl"
STDOUT_FILE = "stdout"
STDERR_FILE = "stderr"
LOG_FILE = "runner.log"
#: Written by whoever cancels before it signals the runner: a pooled runner acts on SIGUSR1
#: only for the attempt whose directory holds it (a late signal must not stop the next one).
CANCEL_FILE = "cancel"

DEFAULT_STOP_GRACE_SECONDS = 5.0
DEFAULT_OUTPUT_CAP_BYTES = 10 * 1024 * 1024  # per stream

_FIELDS = frozenset(
    {"attempt_id", "argv", "cwd", "env", "shell", "timeout_seconds"}
    | {"stop_grace_seconds", "output_cap_bytes"}
)


class SpecError(ValueError):
    """The spec is missing or malformed: nothing can be run (a ``validation`` failure)."""


@dataclass(frozen=True)
class RunnerSpec:
    """One attempt's command. ``env`` is added to the runner's inherited environment.

    With ``shell`` true, ``argv`` is exactly one string, run by ``/bin/sh -c``.
    """

    attempt_id: str
    argv: tuple[str, ...]
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    shell: bool = False
    timeout_seconds: float | None = None
    stop_grace_seconds: float = DEFAULT_STOP_GRACE_SECONDS
    output_cap_bytes: int = DEFAULT_OUTPUT_CAP_BYTES

    def __post_init__(self) -> None:
        _check(self)

    @property
    def command(self) -> list[str]:
        """The argv actually executed."""
        return ["/bin/sh", "-c", self.argv[0]] if self.shell else list(self.argv)

    def to_json(self, indent: int | None = 1) -> str:
        """The spec as ``spec.json`` holds it; ``indent=None``: on one line (``runner.pool``)."""
        return json.dumps(
            {
                "attempt_id": self.attempt_id,
                "argv": list(self.argv),
                "cwd": self.cwd,
                "env": dict(self.env),
                "shell": self.shell,
                "timeout_seconds": self.timeout_seconds,
                "stop_grace_seconds": self.stop_grace_seconds,
                "output_cap_bytes": self.output_cap_bytes,
            },
            indent=indent,
        )

    @classmethod
    def from_json(cls, text: str) -> RunnerSpec:
        try:
            data = json.loads(text)
        except ValueError as error:
            raise SpecError(f"spec is not JSON: {error}") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> RunnerSpec:
        if not isinstance(data, dict):
            raise SpecError("spec must be a JSON object")
        unknown = sorted(set(data) - _FIELDS)
        if unknown:
            raise SpecError(f"unknown spec fields: {', '.join(unknown)}")
        try:
            return cls(**_from_json_shapes(data))
        except TypeError as error:  # a missing required field
            raise SpecError(str(error)) from None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> RunnerSpec:
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except (OSError, UnicodeDecodeError) as error:
            raise SpecError(f"cannot read spec: {error}") from None
        return cls.from_json(text)


def _from_json_shapes(data: dict[str, Any]) -> dict[str, Any]:
    """JSON lists and objects become the dataclass's tuples."""
    shaped = dict(data)
    if isinstance(shaped.get("argv"), list):
        shaped["argv"] = tuple(shaped["argv"])
    if isinstance(shaped.get("env"), dict):
        shaped["env"] = tuple(shaped["env"].items())
    return shaped


def _check(spec: RunnerSpec) -> None:
    _require(isinstance(spec.attempt_id, str) and spec.attempt_id != "", "attempt_id")
    _require(_is_strings(spec.argv) and len(spec.argv) > 0, "argv: a non-empty list of strings")
    _require(not spec.shell or len(spec.argv) == 1, "argv: exactly one string with shell")
    _require(isinstance(spec.shell, bool), "shell: a boolean")
    _require(spec.cwd is None or _is_strings((spec.cwd,)), "cwd: a string or null")
    _require(_is_env(spec.env), "env: an object of strings")
    _require(spec.timeout_seconds is None or _positive(spec.timeout_seconds), "timeout_seconds")
    _require(_positive(spec.stop_grace_seconds, zero=True), "stop_grace_seconds")
    _require(_is_int(spec.output_cap_bytes) and spec.output_cap_bytes >= 0, "output_cap_bytes")


def _require(ok: bool, what: str) -> None:
    if not ok:
        raise SpecError(f"bad spec field {what}")


def _is_strings(values: object) -> bool:
    """Strings an exec can take: no NUL byte."""
    return isinstance(values, tuple) and all(isinstance(v, str) and "\0" not in v for v in values)


def _is_env(env: object) -> bool:
    return isinstance(env, tuple) and all(
        isinstance(pair, tuple)
        and len(pair) == 2
        and _is_strings(pair)
        and pair[0] != ""
        and "=" not in pair[0]
        for pair in env
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive(value: object, zero: bool = False) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return False
    return value >= 0 if zero else value > 0
