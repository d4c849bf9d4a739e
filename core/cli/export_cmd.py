"""``coven export systemd|kubernetes``."""

from __future__ import annotations

from typing import Any


def register(commands: Any) -> None:
    commands.add_parser("export", help="export routines as systemd units or Kubernetes CronJobs")
