"""The runner: one small process per attempt that runs its command and journals what happened.

The engine writes ``spec.json`` into the attempt's directory and starts
``python -m coven_core.runner ATTEMPT_DIR`` in a new session. The runner outlives the engine: it
runs the command in its own process group, captures its output, enforces its timeout, answers
a cancel (SIGUSR1) and appends an fsync'd ``journal.jsonl`` that the engine reads back with
:func:`coven_core.runner.journal.read_journal` (DESIGN §7, §8).

This package imports only the standard library and psutil, psutil only where it is needed: it
is loaded once per attempt, and the fork server's image (forked for each runner) stays small.
"""
