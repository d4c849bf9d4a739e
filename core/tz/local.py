"""Resolve ``local`` to an exact IANA key, or refuse (DESIGN §3).

``local`` is accepted only as input. A routine is always stored with a real key, so that it
keeps its meaning when the host moves. The key must be *proven*: a POSIX TZ string or a copied
``/etc/localtime`` that no key can be matched to fails with a request for an explicit zone —
Coven never falls back to a fixed offset silently.

Sources, in the order the C library itself consults them: ``TZ``, the ``/etc/localtime`` link
target, then (only when ``/etc/localtime`` is a copy) ``/etc/timezone`` whose zone file must
have the same bytes as the copy.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from coven_core.errors import ZoneError
from coven_core.notation.i18n import N_, _
from coven_core.tz import tzdb

_ASK = N_("pass an explicit zone such as --tz Europe/Berlin")


@dataclass(frozen=True, slots=True)
class LocalZone:
    """The host's zone as an IANA key, with where it was read from."""

    key: str
    source: str


@dataclass(frozen=True, slots=True)
class HostFiles:
    """The files the resolution reads; tests point them at a temp directory."""

    localtime: Path = Path("/etc/localtime")
    timezone: Path = Path("/etc/timezone")


def resolve_zone_key(text: str) -> str:
    """``local`` becomes the host's proven IANA key; anything else is checked as it is."""
    key = text.strip()
    if key.lower() == "local":
        return resolve_local_zone().key
    tzdb.zone(key)
    return key


def resolve_local_zone(
    env: Mapping[str, str] | None = None, files: HostFiles | None = None
) -> LocalZone:
    """The host's zone, proven, or a ZoneError that says why and what to do."""
    env = os.environ if env is None else env
    files = files or HostFiles()
    tz = env.get("TZ")
    if tz:
        return _from_tz_variable(tz)
    if files.localtime.is_symlink():
        return _from_link(files.localtime)
    if files.localtime.exists():
        return _from_copy(files)
    return LocalZone("UTC", "no TZ and no /etc/localtime: the C library uses UTC")


def _from_tz_variable(value: str) -> LocalZone:
    name = value[1:] if value.startswith(":") else value
    value = value if len(value) <= 64 else f"{value[:64]}…"  # as it is shown
    if os.path.isabs(name):
        key = _key_from_path(Path(name))
        if key is None:
            raise _unproven(N_("TZ={value!r} is a file outside any zoneinfo directory; {ask}"),
                            value=value)  # fmt: skip
        return LocalZone(_checked(key, f"TZ={value!r}"), "TZ")
    if _is_known(name):
        return LocalZone(name, "TZ")
    raise _unproven(N_("TZ={value!r} is not an IANA zone name (a POSIX TZ string?); {ask}"),
                    value=value)  # fmt: skip


def _from_link(link: Path) -> LocalZone:
    target = Path(os.path.realpath(link))
    key = _key_from_path(target)
    if key is None:
        raise _unproven(N_("{link} points to {target}, which is not in a zoneinfo directory; "
                           "{ask}"), link=link, target=target)  # fmt: skip
    return LocalZone(_checked(key, f"{link} -> {target}"), f"{link} link")


def _from_copy(files: HostFiles) -> LocalZone:
    key = _read_timezone_file(files.timezone)
    if key and _is_known(key) and _same_zone_bytes(files.localtime, key):
        return LocalZone(key, f"{files.timezone}, matching the copy in {files.localtime}")
    raise _unproven(N_("{localtime} is a copy, not a link, so its zone cannot be proven; {ask}"),
                    localtime=files.localtime)  # fmt: skip


def _key_from_path(path: Path) -> str | None:
    parts = path.parts
    for index in range(len(parts) - 1, -1, -1):
        if parts[index] in ("zoneinfo", "zoneinfo-posix"):
            key = "/".join(parts[index + 1 :])
            return key.removeprefix("posix/").removeprefix("right/") or None
    return None


def _checked(key: str, where: str) -> str:
    if not _is_known(key):
        raise _unproven(N_("{where} names {key!r}, which this tz database does not know; {ask}"),
                        where=where, key=key)  # fmt: skip
    return key


def _unproven(problem: str, **values: object) -> ZoneError:
    """``problem`` (marked with N_) in the reader's language, with what to do instead."""
    return ZoneError(_(problem).format(ask=_(_ASK), **values))


def _is_known(key: str) -> bool:
    try:
        tzdb.zone(key)
    except ZoneError:
        return False
    return True


def _read_timezone_file(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _same_zone_bytes(copy: Path, key: str) -> bool:
    for directory in tzdb._default_tzpath():
        candidate = Path(directory) / key
        try:
            if candidate.read_bytes() == copy.read_bytes():
                return True
        except OSError:
            continue
    return False
