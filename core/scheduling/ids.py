"""Identifiers. Occurrence ids are *derived*, never random (DESIGN §5): re-planning the
same moment — after a crash, a backward clock jump, in a second process — yields the same id,
and the store's primary key refuses a second row for it."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime

from coven_core.store.codec import instant_text
from coven_core.tz.binding import BoundTime


def _stamp(instant: datetime) -> str:
    """``YYYYMMDDTHHMMSSZ``, cut from the stored text of a UTC instant (which the caller has
    usually just written, so it is remembered): ``strftime`` costs several times as much.
    Anything else (another zone, a year before 1000) keeps ``strftime``, so no id changes."""
    text = instant_text(instant) if instant.tzinfo is UTC else ""
    if len(text) != 27:
        return instant.strftime("%Y%m%dT%H%M%SZ")
    return f"{text[0:4]}{text[5:7]}{text[8:13]}{text[14:16]}{text[17:19]}Z"


def new_routine_id() -> str:
    return "r" + secrets.token_hex(6)


def occurrence_id(routine_id: str, moment: BoundTime) -> str:
    """``<routine>@<UTC instant>``. A nonexistent wall time gets a ``~gap`` suffix: its
    nominal instant can equal a real moment's instant (Apia lost 2011-12-30: 09:00 that day
    reads as the same instant as 09:00 on the 31st), and the two must never share a key."""
    suffix = "~gap" if moment.skipped else ""
    return f"{routine_id}@{_stamp(moment.utc)}{suffix}"


def coalesced_id(routine_id: str, first: datetime, *, broken: bool = False) -> str:
    """A window of moments starts at a moment (whole seconds name it). A broken revision's
    window starts where planning stopped, at any microsecond: two of them can begin within
    one second (broken, restored, broken again), so the microseconds are part of its name."""
    if broken:
        return f"{routine_id}@{first.astimezone(UTC):%Y%m%dT%H%M%S.%fZ}~broken"
    return f"{routine_id}@{_stamp(first)}~missed"


def triggered_id(routine_id: str, upstream_id: str) -> str:
    """``<routine>@after:<upstream occurrence>``: one per upstream end, whoever plans it."""
    return f"{routine_id}@after:{upstream_id}"


def manual_id(routine_id: str, key: str) -> str:
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return f"{routine_id}@manual~{digest}"


def new_run_id() -> str:
    return "run" + secrets.token_hex(6)


def attempt_id(run_id: str, number: int) -> str:
    return f"{run_id}.{number}"
