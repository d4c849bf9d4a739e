"""Coven Desktop: the Qt tray application. It talks to the engine only through its API."""
