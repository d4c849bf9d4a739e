"""The one entry script of the frozen bundle: both executables run it.

``coven`` is the command line, ``coven-desktop`` the tray app; either one started as
``--coven-runner DIR`` or ``--coven-runner-server FD`` is a runner (the bundle has no Python
interpreter for ``-m coven_core.runner``). The runner check comes first so a runner imports
nothing it does not need.
"""

import sys
from pathlib import Path

from coven_core.runner.frozen import frozen_entry


def main() -> int:
    status = frozen_entry(sys.argv[1:])
    if status is not None:
        return status
    if Path(sys.executable).stem == "coven":
        from coven_core.cli.main import main as cli

        return cli()
    from coven_desktop.app import main as desktop

    return desktop()


if __name__ == "__main__":
    sys.exit(main())
