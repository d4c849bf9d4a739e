"""Which IANA time-zone database plans occurrences, and its version.

``zoneinfo`` reads the system database before the ``tzdata`` package, and the two can differ
(a stale distribution, a newer wheel). Coven picks one database for the whole process, makes
``zoneinfo`` (and so Babel) use it, and records its version on every planned occurrence.

Policy, set by ``COVEN_TZDB``:

* ``newest`` (default): whichever of the system database and the ``tzdata`` package is newer;
* ``system``: the operating system's database (falls back to ``tzdata`` if there is none);
* ``bundled``: the ``tzdata`` package shipped with Coven.
"""

from __future__ import annotations

import os
import sysconfig
import threading
import zoneinfo
from pathlib import Path
from typing import Literal, NamedTuple

from coven_core.errors import ZoneError
from coven_core.notation.i18n import _

Source = Literal["system", "bundled"]
POLICIES = ("newest", "system", "bundled")

#: Keys that zoneinfo lists but that name no real zone a person should bind to.
_NOT_ZONES = frozenset({"localtime", "posixrules", "Factory"})


class Tzdb(NamedTuple):
    """One time-zone database: where it comes from and which IANA release it is."""

    source: Source
    version: str
    path: str | None  # the directory for the system database; None for the package

    def __str__(self) -> str:
        return f"{self.version} ({self.source})"


_lock = threading.Lock()
_active: Tzdb | None = None


def _default_tzpath() -> tuple[str, ...]:
    env = os.environ.get("PYTHONTZPATH")
    raw = env if env is not None else (sysconfig.get_config_var("TZPATH") or "")
    return tuple(p for p in raw.split(os.pathsep) if os.path.isabs(p))


def system_tzdb() -> Tzdb | None:
    """The first system zoneinfo directory that has a version file, if any."""
    for directory in _default_tzpath():
        version = _read_version(Path(directory) / "tzdata.zi")
        if version is not None:
            return Tzdb("system", version, directory)
    return None


def _read_version(zi: Path) -> str | None:
    try:
        with zi.open(encoding="ascii", errors="replace") as handle:
            first = handle.readline().split()
    except OSError:
        return None
    return first[2] if first[:2] == ["#", "version"] and len(first) > 2 else None


def bundled_tzdb() -> Tzdb | None:
    try:
        import tzdata
    except ImportError:
        return None
    return Tzdb("bundled", str(tzdata.IANA_VERSION), None)


def choose(policy: str, system: Tzdb | None, bundled: Tzdb | None) -> Tzdb:
    """Apply the policy to the databases found (pure, so it is testable)."""
    if policy not in POLICIES:
        raise ZoneError(
            _("COVEN_TZDB={policy!r} is not one of {known}").format(
                policy=policy, known=", ".join(POLICIES)
            )
        )
    ordered = {"system": [system, bundled], "bundled": [bundled, system]}.get(policy)
    if ordered is None:  # newest; IANA versions sort as text ("2025b" < "2026f")
        ordered = sorted([system, bundled], key=lambda db: db.version if db else "", reverse=True)
    for db in ordered:
        if db is not None:
            return db
    raise ZoneError(_("no time-zone database found: install the 'tzdata' package"))


def activate(policy: str | None = None) -> Tzdb:
    """Choose the process's database and point zoneinfo at it. Idempotent per policy."""
    global _active
    chosen = choose(policy or os.environ.get("COVEN_TZDB", "newest"), system_tzdb(), bundled_tzdb())
    with _lock:
        if _active != chosen:
            zoneinfo.reset_tzpath([chosen.path] if chosen.path else [])
            zoneinfo.ZoneInfo.clear_cache()
            _active = chosen
    return chosen


def active() -> Tzdb:
    """The database in use, choosing it on first use."""
    return _active if _active is not None else activate()


def zone(key: str) -> zoneinfo.ZoneInfo:
    """The zone for an IANA key, from the active database, or a ZoneError naming the key."""
    active()
    if not key or key in _NOT_ZONES or key.startswith(("/", ".")) or ".." in key:
        raise _unknown(key)
    try:
        return zoneinfo.ZoneInfo(key)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise _unknown(key) from None


def _unknown(key: str) -> ZoneError:
    return ZoneError(
        _("unknown time zone {key!r}: use UTC or an IANA name like Europe/Berlin").format(key=key)
    )


def available_zones() -> frozenset[str]:
    """Every zone key a routine may bind to."""
    active()
    return frozenset(zoneinfo.available_timezones() - _NOT_ZONES)
