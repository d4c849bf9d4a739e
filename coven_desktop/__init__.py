"""Coven Desktop: the Qt tray application. It talks to the engine only through its API."""

#: What the app calls itself: Qt's application name and the main window's title. Here, not
#: in ``app_window``, so that starting the tray need not import the window (``bench_idle``).
APP_NAME = "Coven Desktop"
