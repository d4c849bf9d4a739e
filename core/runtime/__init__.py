"""Runtimes: how an attempt's command is started and how its exit is observed."""
