"""Reading systemd unit files (systemd.syntax(7)): sections of ``Key=value`` lines, keys that
may repeat, ``#``/``;`` comments and ``\\`` continuations."""

from __future__ import annotations

from pathlib import Path

Unit = dict[str, list[tuple[str, str]]]  # section → (key, value) in file order


def read_unit(path: Path) -> Unit:
    unit: Unit = {}
    section = ""
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = pending + raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            unit.setdefault(section, [])
        elif "=" in line:
            key, _, value = line.partition("=")
            unit.setdefault(section, []).append((key.strip(), value.strip()))
    return unit


def values(unit: Unit, section: str, key: str) -> list[str]:
    """Every value of ``key``; an empty assignment resets the list, as systemd does."""
    found: list[str] = []
    for name, value in unit.get(section, []):
        if name == key:
            found = [] if value == "" else [*found, value]
    return found
