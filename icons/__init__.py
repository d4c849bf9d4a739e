"""SVG sources for the tray and window icons (installed as ``coven_desktop.icons``)."""
