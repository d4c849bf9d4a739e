"""``python -m coven_core.runner ATTEMPT_DIR``: run one attempt (see ``coven_core.runner.main``)."""

import sys

from coven_core.runner.main import main

sys.exit(main(sys.argv[1:]))
