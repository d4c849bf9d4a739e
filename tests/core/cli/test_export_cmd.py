"""``coven export systemd|kubernetes`` (issue #25): the files, checked by systemd itself and
against the batch/v1 CronJob fields, with what does not carry over and the DST differences."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.core.cli.conftest import Coven
from tests.core.moving import systemd_analyze

FROM_2027 = ("--from", "2027-01-01T00:00Z")
# Routine → (schedule, zone, extra options); each crosses a gap or a fold in 2027.
ROUTINES = {
    "nightly": ("30 2 * * *", "America/New_York", ("--timeout", "2h")),
    "fold-hour": ("*/20 1 * * *", "America/New_York", ("--misfire", "skip_missed")),
    "berlin-workdays": ("15 2,9 * * mon-fri", "Europe/Berlin", ()),
    "sydney-either-day": ("30 2 1,15 * sun", "Australia/Sydney", ("--grace", "1h")),
}


@pytest.fixture
def routines(coven: Coven) -> Coven:
    for name, (schedule, zone, options) in ROUTINES.items():
        coven.add(name, "--schedule", schedule, "--tz", zone, *options)
    return coven


def export(coven: Coven, target: str, out: Path, *args: str) -> dict:
    return coven.json("export", target, "--out", str(out), *FROM_2027, *args)


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "out"


def test_systemd_units_pass_systemd_analyze_verify(routines: Coven, out: Path) -> None:
    doc = export(routines, "systemd", out)
    assert [r["name"] for r in doc["routines"]] == sorted(ROUTINES)
    files = sorted(out.iterdir())
    assert [f.name for f in files] == sorted(
        f"coven-{name}.{kind}" for name in ROUTINES for kind in ("service", "timer")
    )
    nightly = (out / "coven-nightly.service").read_text()
    assert "ExecStart=/bin/true\n" in nightly and "TimeoutStartSec=7200\n" in nightly
    timer = (out / "coven-fold-hour.timer").read_text()
    assert "OnCalendar=*-*-* 01:00,20,40:00 America/New_York\n" in timer
    assert "Persistent=false\n" in timer  # skip_missed
    either = (out / "coven-sydney-either-day.timer").read_text()
    assert "OnCalendar=Sun *-*-* 02:30:00 Australia/Sydney\n" in either
    assert "OnCalendar=*-*-01,15 02:30:00 Australia/Sydney\n" in either
    if systemd_analyze.available:
        checked = systemd_analyze.verify(*(str(f) for f in files))
        assert checked.returncode == 0, checked.stderr


def preview_planned(coven: Coven, schedule: str, zone: str, count: int) -> list[datetime]:
    doc = coven.json(
        "preview",
        "--schedule",
        schedule,
        "--tz",
        zone,
        "--from",
        "2027-01-01T00:00Z",
        "--to",
        "2028-01-01T00:00Z",
    )
    planned = [m for m in doc["occurrences"] if m["disposition"] == "planned"]
    return [datetime.fromisoformat(m["utc"].replace("Z", "+00:00")) for m in planned][:count]


@systemd_analyze.needed
@pytest.mark.parametrize("name", sorted(ROUTINES))
def test_the_exported_calendar_elapses_when_coven_plans(
    routines: Coven, out: Path, name: str
) -> None:
    """Round trip across 2027's gaps and folds: the same next moments as Coven's preview."""
    export(routines, "systemd", out, name)
    timer = (out / f"coven-{name}.timer").read_text()
    calendars = [
        line.removeprefix("OnCalendar=")
        for line in timer.splitlines()
        if line.startswith("OnCalendar=")
    ]
    schedule, zone, _ = ROUTINES[name]
    ours = preview_planned(routines, schedule, zone, 400)
    base = datetime(2027, 1, 1, tzinfo=UTC)
    theirs = sorted(
        {t for c in calendars for t in systemd_analyze.next_elapses(c, base, len(ours))}
    )
    assert theirs[: len(ours)] == ours


def test_systemd_and_coven_agree_on_every_dst_moment(routines: Coven, out: Path) -> None:
    doc = export(routines, "systemd", out)
    assert all(r["dst_differences"] == [] for r in doc["routines"])
    assert "quarantine after repeated failures (coven release / probe)" in doc["never_carried_over"]


def test_a_routine_systemd_cannot_express_is_refused_by_name(routines: Coven, out: Path) -> None:
    routines.add(
        "last-friday",
        "--schedule",
        "rrule:FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=18;BYMINUTE=0",
        "--tz",
        "UTC",
    )
    out = out / "units"
    status, stdout, err = routines("export", "systemd", "--out", str(out))
    assert (status, stdout) == (2, "")
    assert "cannot export 'last-friday' (rrule:" in err and "nothing was written" in err
    assert not out.exists()


# -- Kubernetes --------------------------------------------------------------------------------
def check_cronjob(doc: dict) -> None:
    """The batch/v1 CronJob fields we emit, with their types (the API's schema, in small)."""
    assert (doc["apiVersion"], doc["kind"]) == ("batch/v1", "CronJob")
    assert set(doc) == {"apiVersion", "kind", "metadata", "spec"}
    name = doc["metadata"]["name"]
    assert len(name) <= 52 and name.replace("-", "").isalnum() and name == name.lower()
    spec = doc["spec"]
    assert set(spec) <= {
        "schedule",
        "timeZone",
        "concurrencyPolicy",
        "startingDeadlineSeconds",
        "suspend",
        "jobTemplate",
    }
    assert len(spec["schedule"].split()) == 5
    assert spec["concurrencyPolicy"] in ("Allow", "Forbid", "Replace")
    assert isinstance(spec["suspend"], bool)
    assert isinstance(spec.get("startingDeadlineSeconds", 0), int)
    job = spec["jobTemplate"]["spec"]
    assert set(job) <= {"backoffLimit", "activeDeadlineSeconds", "template"}
    pod = job["template"]["spec"]
    assert pod["restartPolicy"] in ("Never", "OnFailure")
    (container,) = pod["containers"]
    assert set(container) <= {"name", "image", "command", "workingDir", "env"}
    assert all(isinstance(word, str) for word in container["command"])


def test_kubernetes_cronjobs_carry_the_zone_and_the_policies(routines: Coven, out: Path) -> None:
    doc = export(routines, "kubernetes", out, "--image", "busybox:1.36")
    manifests = {p.name: json.loads(p.read_text()) for p in out.iterdir()}
    assert sorted(manifests) == sorted(f"{name}.cronjob.json" for name in ROUTINES)
    for manifest in manifests.values():
        check_cronjob(manifest)
    nightly = manifests["nightly.cronjob.json"]["spec"]
    assert (nightly["schedule"], nightly["timeZone"]) == ("30 2 * * *", "America/New_York")
    assert nightly["concurrencyPolicy"] == "Forbid"  # overlap skip
    assert "startingDeadlineSeconds" not in nightly  # latest_only, no grace limit
    assert nightly["jobTemplate"]["spec"]["activeDeadlineSeconds"] == 7200
    assert manifests["fold-hour.cronjob.json"]["spec"]["startingDeadlineSeconds"] == 60
    sydney = manifests["sydney-either-day.cronjob.json"]["spec"]
    assert (sydney["schedule"], sydney["startingDeadlineSeconds"]) == ("30 2 1,15 * 0", 3600)
    workdays = manifests["berlin-workdays.cronjob.json"]["spec"]["schedule"]
    assert workdays == "15 2,9 * * 1,2,3,4,5"
    said = {r["name"]: [d["sentence"] for d in r["dst_differences"]] for r in doc["routines"]}
    assert said["fold-hour"] == [
        f"Kubernetes would run 01:{m} twice on 2027-11-07; Coven runs it once, at the first 01:{m} (-04:00)"
        for m in ("00", "20", "40")
    ]
    assert said["berlin-workdays"] == []  # 2027-10-31 is a Sunday
    assert said["sydney-either-day"] == [
        "Kubernetes would run 02:30 twice on 2027-04-04; Coven runs it once, at the first 02:30 (+11:00)"
    ]
    assert said["nightly"] == []  # robfig/cron skips 02:30 on 2027-03-14, as Coven does


def test_queue_one_is_said_aloud_as_forbid(coven: Coven, out: Path) -> None:
    coven.add("q", "--schedule", "@hourly", "--tz", "UTC", "--overlap", "queue_one")
    (q,) = export(coven, "kubernetes", out, "--image", "alpine")["routines"]
    assert (
        "overlap queue_one: a moment due while a run is active is not queued"
        in q["not_carried_over"]
    )
    assert json.loads((out / "q.cronjob.json").read_text())["spec"]["concurrencyPolicy"] == "Forbid"


def test_kubernetes_refuses_a_schedule_it_has_no_form_for(coven: Coven, out: Path) -> None:
    coven.add("often", "--schedule", "every 90m", "--tz", "UTC")
    status, _, err = coven("export", "kubernetes", "--out", str(out / "k"), "--image", "x")
    assert status == 2 and "cannot export 'often'" in err
