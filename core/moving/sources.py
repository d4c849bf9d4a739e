"""Where an import reads its jobs (DESIGN §15): a crontab (a file, or its text as ``crontab -l``
prints it), a systemd timer with its service beside it, or a launchd job's plist. The CLI and
the app's Import window read through here, so both see the same dry run."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from coven_core.errors import ValidationError
from coven_core.moving.dst_differences import Scheduler
from coven_core.moving.plan import Found, NotImported
from coven_core.notation.i18n import _

Jobs = tuple[list[Found], list[NotImported]]

#: How long ``crontab -l`` may take (it reads one small file).
CRONTAB_SECONDS = 10


def read_jobs(origin: Scheduler, source: Path | str, zone: str) -> Jobs:
    """The jobs ``source`` defines, and the lines it has that Coven cannot take. ``source``
    is a file; for a crontab it may also be the crontab's text."""
    if origin is Scheduler.CRON:
        from coven_core.moving.crontab import read_crontab

        text = source if isinstance(source, str) else _text_of(source)
        return read_crontab(text, zone)
    return _FILE_READERS[origin](_readable(Path(source)), zone)


def users_crontab() -> str:
    """This user's crontab, as ``crontab -l`` prints it; a refusal names why there is none."""
    program = shutil.which("crontab")
    if program is None:
        raise ValidationError(_("there is no crontab command here: choose a crontab file instead"))
    try:
        listed = subprocess.run([program, "-l"], capture_output=True, text=True,
                                timeout=CRONTAB_SECONDS, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ValidationError(_("crontab -l did not answer: {error}").format(error=error)) from None
    if listed.returncode != 0:
        said = listed.stderr.strip() or _("it exited with {status}").format(
            status=listed.returncode
        )
        raise ValidationError(f"crontab -l: {said}")
    return listed.stdout


def _readable(path: Path) -> Path:
    if not path.is_file():
        raise ValidationError(_("{path!r} is not a readable file").format(path=str(path)))
    return path


def _text_of(path: Path) -> str:
    try:
        return _readable(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValidationError(
            _("{path!r} cannot be read as text: {error}").format(path=str(path), error=error)
        ) from None


def _timer(path: Path, zone: str) -> Jobs:
    from coven_core.moving.systemd_timer import read_timer

    return read_timer(path, zone)


def _plist(path: Path, zone: str) -> Jobs:
    from coven_core.moving.launchd import read_plist

    return read_plist(path, zone)


_FILE_READERS: dict[Scheduler, Callable[[Path, str], Jobs]] = {
    Scheduler.SYSTEMD: _timer,
    Scheduler.LAUNCHD: _plist,
}
