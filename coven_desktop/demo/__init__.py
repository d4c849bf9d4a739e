"""``python -m coven_desktop.demo --out build/screens``: the windows over realistic demo data,
as PNG files, without a display (issue #8). See :mod:`coven_desktop.demo.history` for what the
demo store holds and :mod:`coven_desktop.demo.render` for how pages are drawn."""
