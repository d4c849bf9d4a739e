"""The query face: what it names for the app resolves, and only when asked for."""

from __future__ import annotations

import subprocess
import sys

from coven_core import queries


def test_every_name_loaded_on_first_use_resolves() -> None:
    for home, names in queries._ELSEWHERE.items():
        for name in names:
            assert getattr(queries, name) is getattr(sys.modules[home], name), name


def test_the_query_face_loads_the_app_s_views_only_when_asked() -> None:
    probe = (
        "import sys, coven_core.queries\n"
        "print(sorted(m for m in ('coven_core.views.timeline', 'coven_core.views.attention')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=60)  # fmt: skip
    assert done.stdout.strip() == "[]"
