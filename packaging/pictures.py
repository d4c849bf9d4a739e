"""``make pictures``: the README's pictures of the main windows, drawn by the demo renderer in
English and German, under a light palette and a dark one (issue #22), into docs/pictures/.

Only the windows the README shows are kept, so the folder stays small.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SHOWN = ("routines", "runs", "run-detail-failed", "timeline", "reconciliation", "tray-menu")
VARIANTS = {
    "en-light": ("--locale", "en_US"),
    "de-light": ("--locale", "de_DE"),
    "en-dark": ("--locale", "en_US", "--palette", "dark"),
    "de-dark": ("--locale", "de_DE", "--palette", "dark"),
}


def main(out: Path = Path("docs/pictures")) -> int:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for variant, options in VARIANTS.items():
            drawn = Path(scratch) / variant
            subprocess.run(
                [sys.executable, "-m", "coven_desktop.demo", "--out", str(drawn), *options],
                check=True, stdout=subprocess.DEVNULL,
            )  # fmt: skip
            for name in SHOWN:
                shutil.copyfile(drawn / f"{name}.png", out / f"{name}-{variant}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
