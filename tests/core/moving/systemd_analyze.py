"""``systemd-analyze`` for the tests that check our units and calendars against systemd's own
reading; a test that needs it skips, saying why, where it is not installed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from datetime import UTC, datetime

import pytest

available = shutil.which("systemd-analyze") is not None
needed = pytest.mark.skipif(
    not available,
    reason="systemd-analyze is not installed (CI installs the systemd package)",
)
_ELAPSE = re.compile(r"(?:Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC")


def next_elapses(calendar: str, base: datetime, count: int) -> list[datetime]:
    """systemd's next ``count`` elapses of an ``OnCalendar=`` value after ``base`` (UTC)."""
    result = subprocess.run(
        ["systemd-analyze", "calendar", f"--iterations={count}",
         f"--base-time={base.strftime('%Y-%m-%d %H:%M:%S')} UTC", calendar],
        capture_output=True, text=True, timeout=30, env={**os.environ, "TZ": "UTC"}, check=True,
    )  # fmt: skip
    found = _ELAPSE.findall(result.stdout)
    return [datetime.fromisoformat(text).replace(tzinfo=UTC) for text in found]


def verify(*paths: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["systemd-analyze", "verify", *paths], capture_output=True, text=True, timeout=60
    )
