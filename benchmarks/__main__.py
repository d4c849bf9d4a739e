"""``python -m benchmarks``: the whole suite (see ``benchmarks/suite.py``)."""

import sys

from benchmarks.suite import main

sys.exit(main())
