"""Printing for the CLI: stable JSON for scripts, aligned tables for people."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from coven_core.notation.i18n import _


def print_json(document: Any) -> None:
    import json  # here: the readable output, the usual one, never needs it

    json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    for row in (headers, *rows):
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        print(line.rstrip())


def print_fields(fields: Sequence[tuple[str, str]], *, indent: str = "") -> None:
    """``label: value`` lines with the values aligned, for one thing shown in detail."""
    width = max((len(label) for label, _ in fields), default=0) + 1
    for label, value in fields:
        print(f"{indent}{label + ':':<{width}}  {value}".rstrip())


def print_lines(lines: Sequence[str], *, indent: str = "") -> None:
    for line in lines:
        print(f"{indent}{line}".rstrip())


def last_lines(lines: Sequence[str], count: int) -> list[str]:
    """The last ``count`` lines, after a line saying how many earlier ones were left out."""
    if len(lines) <= count:
        return list(lines)
    earlier = _("… ({count} earlier)").format(count=len(lines) - count)
    return [earlier, *lines[-count:]]
