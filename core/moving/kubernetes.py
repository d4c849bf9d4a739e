"""Exporting a routine as a Kubernetes ``batch/v1`` CronJob, written as JSON.

JSON, not YAML: it needs no YAML library, ``kubectl apply -f`` reads it as a manifest, and
JSON is valid YAML for any tool that insists. Mapped: ``schedule`` (a cron spec, re-checked
to mean the same moments under robfig/cron's rules), ``timeZone``, ``concurrencyPolicy``
(skip → Forbid; queue_one has no equivalent — Forbid too, said aloud),
``startingDeadlineSeconds`` (the grace under latest_only; 60 s, Coven's lateness limit,
under skip_missed), ``suspend`` (paused), the job's ``activeDeadlineSeconds`` (timeout) and
``backoffLimit`` (retries). The container image is the person's choice (``--image``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from coven_core.errors import ScheduleError
from coven_core.model import MisfirePolicy, RevisionSpec
from coven_core.moving.export import Rendered, Routine, common_notes
from coven_core.notation.durations import NO_TIMEOUT
from coven_core.notation.i18n import _
from coven_core.schedule.cron import CronSchedule, field_texts
from coven_core.schedule.timetable import ScheduleKind, classify

_DNS_LABEL = re.compile(r"[^a-z0-9-]+")
_LATE = 60  # seconds: a moment reached later than this was missed (DESIGN §3)


def cronjob_name(routine: str) -> str:
    """A DNS-1123 label of at most 52 characters (the CronJob limit)."""
    return _DNS_LABEL.sub("-", routine.lower()).strip("-")[:52].rstrip("-") or "routine"


def render_kubernetes(routine: Routine, image: str) -> Rendered:
    spec = routine.spec
    name = cronjob_name(routine.name)
    notes = common_notes(routine)
    cronjob_spec: dict[str, Any] = {
        "schedule": schedule_of(spec),
        "timeZone": spec.timezone,
        "concurrencyPolicy": "Forbid",
        "suspend": routine.paused,
        "jobTemplate": {"spec": _job_spec(routine, image)},
    }
    deadline = _deadline(spec)
    if deadline is None:
        notes.append(_("no grace limit: without startingDeadlineSeconds the controller gives up"
                       " after 100 missed schedules"))  # fmt: skip
    else:
        cronjob_spec["startingDeadlineSeconds"] = deadline
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "coven-export"}},
        "spec": cronjob_spec,
    }
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    return Rendered({f"{name}.cronjob.json": text}, tuple(notes))


def schedule_of(spec: RevisionSpec) -> str:
    """Five fields robfig/cron reads as Coven does: numbers, and '*' kept where the day rule
    (either day vs both days) depends on it; checked by parsing it back."""
    kind, body = classify(spec.schedule)
    if kind is not ScheduleKind.CRON:
        raise ScheduleError(
            _("{schedule}: a CronJob takes a cron schedule only").format(schedule=spec.schedule)
        )
    parsed = CronSchedule.parse(body)
    texts = field_texts(body)
    values = (parsed.minutes, parsed.hours, parsed.days_of_month, parsed.months,
              parsed.days_of_week)  # fmt: skip
    fields = [
        text if text.startswith("*") else ",".join(str(v) for v in sorted(numbers))
        for text, numbers in zip(texts, values, strict=True)
    ]
    schedule = " ".join(fields)
    again = CronSchedule.parse(schedule)
    if (again.minutes, again.hours, again.days_of_month, again.months, again.days_of_week,
            again.days_and) != (*values, parsed.days_and):  # fmt: skip
        raise ScheduleError(
            _("{schedule}: no five-field form means the same moments").format(
                schedule=spec.schedule
            )
        )
    return schedule


def _deadline(spec: RevisionSpec) -> int | None:
    if spec.misfire is MisfirePolicy.SKIP_MISSED:
        return _LATE
    return None if spec.grace is None else int(spec.grace.total_seconds())


def _job_spec(routine: Routine, image: str) -> dict[str, Any]:
    spec = routine.spec
    container: dict[str, Any] = {
        "name": "routine",
        "image": image,
        "command": ["/bin/sh", "-c", spec.argv[0]] if spec.shell else list(spec.argv),
    }
    if spec.cwd:
        container["workingDir"] = spec.cwd
    if spec.env:
        container["env"] = [{"name": key, "value": value} for key, value in spec.env]
    job: dict[str, Any] = {
        "backoffLimit": spec.retries,
        "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
    }
    if routine.timeout is not None and routine.timeout != NO_TIMEOUT:
        job["activeDeadlineSeconds"] = int(routine.timeout.total_seconds())
    return job
