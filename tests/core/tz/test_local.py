"""Resolving ``local`` to a proven IANA key, or refusing (DESIGN §3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coven_core.errors import ZoneError
from coven_core.tz import tzdb
from coven_core.tz.local import HostFiles, resolve_local_zone


def _zone_file(key: str) -> Path:
    system = tzdb.system_tzdb()
    if system is None or not (Path(system.path or "") / key).exists():
        pytest.skip("needs a system zoneinfo directory")
    return Path(system.path or "") / key


@pytest.fixture
def host(tmp_path: Path) -> HostFiles:
    return HostFiles(localtime=tmp_path / "localtime", timezone=tmp_path / "timezone")


def test_tz_variable_with_iana_key(host: HostFiles) -> None:
    assert resolve_local_zone({"TZ": "Europe/Berlin"}, host).key == "Europe/Berlin"


def test_tz_variable_with_colon_prefix(host: HostFiles) -> None:
    zone = resolve_local_zone({"TZ": ":America/New_York"}, host)
    assert (zone.key, zone.source) == ("America/New_York", "TZ")


def test_tz_variable_with_zoneinfo_path(host: HostFiles) -> None:
    assert (
        resolve_local_zone({"TZ": "/usr/share/zoneinfo/Asia/Kolkata"}, host).key == "Asia/Kolkata"
    )


@pytest.mark.parametrize("posix", ["CET-1CEST,M3.5.0,M10.5.0/3", "XYZ-3", "Mars/Olympus"])
def test_posix_tz_string_is_refused_with_a_request_for_a_zone(host: HostFiles, posix: str) -> None:
    with pytest.raises(ZoneError, match=r"not an IANA zone name .*--tz Europe/Berlin"):
        resolve_local_zone({"TZ": posix}, host)


def test_localtime_link_target(host: HostFiles) -> None:
    host.localtime.symlink_to("/usr/share/zoneinfo/Pacific/Apia")
    zone = resolve_local_zone({}, host)
    assert zone.key == "Pacific/Apia"
    assert "link" in zone.source


def test_link_outside_zoneinfo_is_refused(host: HostFiles, tmp_path: Path) -> None:
    (tmp_path / "somewhere").write_bytes(b"TZif")
    host.localtime.symlink_to(tmp_path / "somewhere")
    with pytest.raises(ZoneError, match="not in a zoneinfo directory"):
        resolve_local_zone({}, host)


def test_copied_localtime_without_proof_is_refused(host: HostFiles) -> None:
    shutil.copyfile(_zone_file("Europe/Berlin"), host.localtime)
    with pytest.raises(ZoneError, match="is a copy, not a link"):
        resolve_local_zone({}, host)


def test_copied_localtime_proven_by_etc_timezone(host: HostFiles) -> None:
    shutil.copyfile(_zone_file("Europe/Berlin"), host.localtime)
    host.timezone.write_text("Europe/Berlin\n")
    assert resolve_local_zone({}, host).key == "Europe/Berlin"


def test_copied_localtime_contradicting_etc_timezone_is_refused(host: HostFiles) -> None:
    shutil.copyfile(_zone_file("Europe/Berlin"), host.localtime)
    host.timezone.write_text("Europe/Paris\n")
    with pytest.raises(ZoneError, match="cannot be proven"):
        resolve_local_zone({}, host)


def test_no_localtime_at_all_is_utc_like_the_c_library(host: HostFiles) -> None:
    assert resolve_local_zone({}, host).key == "UTC"
