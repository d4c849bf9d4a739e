"""The runner: a small process that runs an attempt's command and journals what happened.

A pooled runner (``runner.pool``), forked once by the fork server, takes attempts one after
another from the engine's socket: each one's spec, and the directory it makes for it. Without
the fork server, the engine writes ``spec.json`` into the attempt's directory and starts
``python -m coven_core.runner ATTEMPT_DIR`` in a new session for that attempt alone. Either
way the runner outlives the engine: it runs the command in its own process group, captures its
output, enforces its timeout, answers a cancel (SIGUSR1, fenced to its attempt by the cancel
file) and appends a ``journal.jsonl``, its outcome fsync'd, that the engine reads back with
:func:`coven_core.runner.journal.read_journal` (DESIGN §7, §8).

This package imports only the standard library and psutil, psutil only where it is needed: it
is loaded once per attempt, and the fork server's image (forked for each runner) stays small.
"""
