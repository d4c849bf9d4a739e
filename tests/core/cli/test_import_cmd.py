"""``coven import crontab|systemd|launchd``: a dry run first, then ``--apply`` (issue #25)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.core.cli.conftest import Coven
from tests.core.moving import systemd_analyze

DATA = Path(__file__).parent.parent / "moving" / "data"
CRONTAB = str(DATA / "crontab")
YEAR_2027 = ("--tz", "America/New_York", "--from", "2027-01-01T00:00Z")

NAMES = [
    "rsync-docs", "rsync-photos", "check-mail-sh", "notify-send-stand-up-and-stretch",
    "news-digest", "rotate-logs", "find-tmp", "dedupe", "pay-reminder", "date-y-m-d",
    "sync-calendar", "berlin-report", "berlin-sync", "sydney-weekly", "semiannual",
]  # fmt: skip


def dry_run(coven: Coven) -> dict:
    return coven.json("import", "crontab", CRONTAB, *YEAR_2027)


def by_name(plan: dict) -> dict[str, dict]:
    return {routine["name"]: routine for routine in plan["routines"]}


def test_a_personal_crontab_dry_run_names_every_routine_and_changes_nothing(
    coven: Coven, data_dir: Path
) -> None:
    plan = dry_run(coven)
    assert plan["applied"] is False
    assert [routine["name"] for routine in plan["routines"]] == NAMES
    routines = by_name(plan)
    docs = routines["rsync-docs"]
    assert (docs["schedule"], docs["timezone"], docs["shell"]) == (
        "cron:30 2 * * *", "America/New_York", True,
    )  # fmt: skip
    assert docs["argv"] == ['/usr/bin/rsync -a ~/docs "$BACKUP_DIR"']
    assert docs["env"] == {
        "BACKUP_DIR": "/mnt/backup", "PATH": "/usr/local/bin:/usr/bin:/bin", "SHELL": "/bin/sh",
    }  # fmt: skip
    assert docs["misfire"] == "skip_missed"  # cron runs nothing it missed while down
    assert routines["date-y-m-d"]["argv"] == ["date +%Y-%m-%d >> ~/weekly.log"]  # \% is %
    assert routines["find-tmp"]["schedule"] == "cron:@daily"
    assert routines["berlin-report"]["timezone"] == "Europe/Berlin"  # CRON_TZ below it
    assert routines["semiannual"]["timezone"] == "Australia/Sydney"
    assert not data_dir.exists()  # a dry run does not even create the store


def test_every_line_not_imported_is_named_with_its_reason(coven: Coven) -> None:
    refused = {item["source"]: item["why"] for item in dry_run(coven)["not_imported"]}
    assert list(refused) == ["line 4", "line 16", "line 19", "line 21"]
    assert refused["line 4"].startswith("MAILTO:")
    assert refused["line 16"].startswith("@reboot:")
    assert "unescaped %" in refused["line 19"] and "standard input" in refused["line 19"]
    assert "'L'" in refused["line 21"]


def test_the_dry_run_says_each_dst_difference_with_cron_aloud(coven: Coven) -> None:
    said = {
        name: [d["sentence"] for d in r["dst_differences"]]
        for name, r in by_name(dry_run(coven)).items()
    }
    assert said["rsync-docs"] == ["cron would run 02:30 at 03:00 on 2027-03-14; Coven skips it"]
    assert said["check-mail-sh"] == [
        f"cron would run 01:{m} twice on 2027-11-07; Coven runs it once, at the first 01:{m} (-04:00)"
        for m in ("00", "15", "30", "45")
    ]
    assert said["berlin-report"] == ["cron would run 02:30 at 03:00 on 2027-03-28; Coven skips it"]
    assert said["sydney-weekly"] == ["cron would run 02:30 at 03:00 on 2027-10-03; Coven skips it"]
    # A fixed-time job in the repeated hour: cron avoids the second run, as Coven does.
    assert said["sync-calendar"] == said["rsync-photos"] == []


def test_the_dry_run_reads_as_one_line_per_routine(coven: Coven) -> None:
    status, out, err = coven("import", "crontab", CRONTAB, *YEAR_2027)
    assert (status, err) == (0, "")
    assert out.startswith("would create 15 routines from cron:\n")
    assert "  rsync-docs: cron:30 2 * * * in America/New_York: sh -c /usr/bin/rsync" in out
    assert "    DST: cron would run 02:30 at 03:00 on 2027-03-14; Coven skips it\n" in out
    assert "  line 16: '@reboot ~/bin/start-agent': @reboot:" in out
    assert out.endswith("run again with --apply to create these routines\n")


def test_a_german_reader_reads_the_dry_run_in_german_and_json_stays_english(
    coven: Coven, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every line of the dry run is in the reader's language (issue #22), the refused lines
    still in the crontab's order; ``--json`` is for scripts, and stays English."""
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    status, out, err = coven("import", "crontab", CRONTAB, *YEAR_2027)
    assert (status, err) == (0, "")
    assert out.startswith("würde 15 Routinen aus cron anlegen:\n")
    assert ("    Zeitumstellung: cron würde 02:30 am 2027-03-14 um 03:00 ausführen; "
            "Coven überspringt ihn\n") in out  # fmt: skip
    assert "nicht importiert (4):\n  Zeile 4: 'MAILTO=me@example.org': MAILTO: Coven " in out
    refused = [out.index(f"  Zeile {n}: ") for n in (4, 16, 19, 21)]
    assert refused == sorted(refused)
    assert "Zeile 16: '@reboot ~/bin/start-agent': @reboot: Coven hat keinen Zeitplan" in out
    assert "Zeile 19: " in out and "ein unmaskiertes % schickt" in out
    assert out.endswith("mit --apply erneut aufrufen, um diese Routinen anzulegen\n")
    plan = dry_run(coven)
    refused_json = {item["source"]: item["why"] for item in plan["not_imported"]}
    assert list(refused_json) == ["line 4", "line 16", "line 19", "line 21"]
    assert refused_json["line 16"] == "@reboot: Coven has no run-at-start schedule"
    docs = by_name(plan)["rsync-docs"]["dst_differences"]
    assert docs[0]["sentence"] == "cron would run 02:30 at 03:00 on 2027-03-14; Coven skips it"


def test_apply_creates_each_routine_through_the_operator_with_one_audit_entry(
    coven: Coven,
) -> None:
    plan = coven.json("import", "crontab", CRONTAB, *YEAR_2027, "--apply")
    assert plan["applied"] is True
    listed = coven.json("routine", "list")["routines"]
    assert sorted(r["name"] for r in listed) == sorted(NAMES)
    added = [e["target"] for e in coven.json("audit")["entries"] if e["action"] == "routine.add"]
    assert sorted(added) == sorted(NAMES)
    shown = coven.json("routine", "show", "berlin-report")
    assert shown["timezone"] == "Europe/Berlin"


def test_apply_refuses_a_taken_name_and_creates_nothing(coven: Coven) -> None:
    coven.add("dedupe", "--schedule", "@daily", "--tz", "UTC")
    err = coven.refuses(
        "import",
        "crontab",
        CRONTAB,
        *YEAR_2027,
        "--apply",
        message="'dedupe' already exist",
        status=3,
    )
    assert "rename or delete" in err


def test_a_crontab_from_standard_input(coven: Coven, monkeypatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("0 5 * * * /bin/true\n"))
    plan = coven.json("import", "crontab", "-", "--tz", "UTC")
    assert [r["name"] for r in plan["routines"]] == ["true"]


# -- systemd and launchd ---------------------------------------------------------------------
def preview_utc(coven: Coven, schedule: str, zone: str, start: str, count: int) -> list[datetime]:
    doc = coven.json(
        "preview", "--schedule", schedule, "--tz", zone, "--from", start, "--count", str(count)
    )
    return [
        datetime.fromisoformat(m["utc"].replace("Z", "+00:00"))
        for m in doc["occurrences"]
        if m["disposition"] == "planned"
    ]


def test_a_systemd_timer_imports_with_its_service(coven: Coven) -> None:
    plan = coven.json("import", "systemd", str(DATA / "backup.timer"), *YEAR_2027)
    (backup,) = plan["routines"]
    assert backup["name"] == "backup"
    assert (backup["schedule"], backup["timezone"]) == ("cron:30 2 * * 1-5", "Europe/Berlin")
    assert backup["argv"] == ["/usr/bin/rsync", "-a", "/home/me/docs", "/mnt/backup"]
    assert (backup["cwd"], backup["shell"]) == ("/tmp", False)
    assert backup["env"] == {"MODE": "fast", "TARGET": "/mnt/backup"}
    assert backup["misfire"] == "latest_only"  # Persistent=true
    assert backup["not_carried_over"] == [
        "[Timer] RandomizedDelaySec=10min: Coven starts on the moment itself",
        "[Service] Nice=10",
    ]
    assert backup["dst_differences"] == []  # systemd skips a gap and runs a fold once, as we do
    coven.json("import", "systemd", str(DATA / "backup.timer"), "--apply")
    assert coven.json("routine", "show", "backup")["name"] == "backup"


@systemd_analyze.needed
def test_an_imported_timer_has_the_same_next_moments_as_systemd(coven: Coven) -> None:
    (imported,) = coven.json("import", "systemd", str(DATA / "backup.timer"))["routines"]
    base = datetime(2027, 3, 20, tzinfo=UTC)  # across Berlin's spring gap on 2027-03-28
    schedule, zone = imported["schedule"], imported["timezone"]
    ours = preview_utc(coven, schedule, zone, "2027-03-20T00:00Z", 12)
    theirs = systemd_analyze.next_elapses("Mon..Fri *-*-* 02:30:00 Europe/Berlin", base, 12)
    assert ours == theirs


def test_a_timer_coven_cannot_express_is_refused_by_name(coven: Coven, tmp_path: Path) -> None:
    timer = tmp_path / "boot.timer"
    timer.write_text("[Timer]\nOnBootSec=5min\n")
    plan = coven.json("import", "systemd", str(timer))
    assert plan["routines"] == []
    assert "OnBootSec=" in plan["not_imported"][0]["why"]
    timer.write_text("[Timer]\nOnCalendar=Mon *-*-1..7 09:00\n")
    (item,) = coven.json("import", "systemd", str(timer))["not_imported"]
    assert "a weekday and a day of month together" in item["why"]


def test_a_launchd_plist_imports_with_its_label_as_the_name(coven: Coven) -> None:
    plan = coven.json("import", "launchd", str(DATA / "reports.plist"), *YEAR_2027)
    (reports,) = plan["routines"]
    assert reports["name"] == "org.example.reports"
    assert reports["schedule"] == "cron:30 1,13 * * *"  # two dicts that differ in Hour only
    assert reports["argv"] == ["/usr/local/bin/report", "--daily"]
    assert (reports["cwd"], reports["env"]) == ("/tmp", {"LANG": "en_US.UTF-8"})
    assert reports["not_carried_over"] == ["RunAtLoad"]
    assert [d["sentence"] for d in reports["dst_differences"]] == [
        "launchd has been reported to run 01:30 twice on 2027-11-07;"
        " Coven runs it once, at the first 01:30 (-04:00)"
    ]
    coven.json("import", "launchd", str(DATA / "reports.plist"), "--apply")
    assert coven.json("routine", "show", "org.example.reports")["schedule"] == "cron:30 1,13 * * *"


def test_launchd_intervals_one_cron_spec_cannot_say_are_refused(
    coven: Coven, tmp_path: Path
) -> None:
    import plistlib

    plist = tmp_path / "odd.plist"
    intervals = [{"Hour": 1, "Minute": 0}, {"Hour": 2, "Minute": 30}]
    plist.write_bytes(
        plistlib.dumps(
            {"Label": "odd", "ProgramArguments": ["/bin/true"], "StartCalendarInterval": intervals}
        )
    )
    plan = coven.json("import", "launchd", str(plist))
    assert plan["routines"] == []
    assert "differ in Minute, Hour" in plan["not_imported"][0]["why"]


# -- what --apply would refuse, the dry run refuses (issue 19) -------------------------------
def test_a_launchd_label_no_one_can_read_is_not_imported(coven: Coven, tmp_path: Path) -> None:
    import plistlib

    plist = tmp_path / "odd.plist"
    job = {"Label": "a\u202ebackup", "ProgramArguments": ["/bin/true"],
           "StartCalendarInterval": {"Hour": 1, "Minute": 0}}  # fmt: skip
    plist.write_bytes(plistlib.dumps(job))
    plan = coven.json("import", "launchd", str(plist))
    assert plan["routines"] == []
    assert "U+202E" in plan["not_imported"][0]["why"]
    assert coven.json("import", "launchd", str(plist), "--apply")["routines"] == []
    assert coven.json("routine", "list")["routines"] == []


def test_a_crontab_that_is_not_text_is_refused_in_one_line(coven: Coven, tmp_path: Path) -> None:
    binary = tmp_path / "crontab"
    binary.write_bytes(b"0 5 * * * /bin/true\n\xff\xfe\n")
    coven.refuses("import", "crontab", str(binary), message="cannot be read as text")


def test_a_timer_that_is_not_text_is_not_imported(coven: Coven, tmp_path: Path) -> None:
    timer = tmp_path / "odd.timer"
    timer.write_bytes(b"[Timer]\nOnCalendar=daily\n\xff\n")
    (item,) = coven.json("import", "systemd", str(timer))["not_imported"]
    assert "utf-8" in item["why"]
