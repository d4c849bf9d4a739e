"""Test hooks, kept out of the product: only tests and the demo import this module.

``python -m coven_core.testing ARGS`` is ``coven ARGS`` on a wall clock shifted by
``COVEN_TEST_CLOCK_OFFSET`` seconds: the system tests start real daemons this way, so that
they meet a moment a test chose a few seconds after they start instead of at the next
wall-clock minute (tests/system/conftest.py). The product's own entry points never read the
variable.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from datetime import timedelta

from coven_core.clock import Clock, SystemClock
from coven_core.engine import use_default_clock

#: Seconds to add to the wall clock of a process started through :func:`main`.
CLOCK_OFFSET = "COVEN_TEST_CLOCK_OFFSET"


def shifted_clock() -> Clock:
    """The system clock, shifted by ``COVEN_TEST_CLOCK_OFFSET`` seconds (none when unset)."""
    raw = os.environ.get(CLOCK_OFFSET)
    return SystemClock(offset=timedelta(seconds=float(raw)) if raw else None)


def main(argv: Sequence[str] | None = None) -> int:
    """``coven`` with every engine it opens on the shifted clock."""
    use_default_clock(shifted_clock)
    from coven_core.cli.main import main as coven

    return coven(argv)


if __name__ == "__main__":
    sys.exit(main())
