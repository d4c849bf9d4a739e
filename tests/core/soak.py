"""The strict simulation on fresh random seeds, on every core, for a given time (``make soak``).

CI replays a few fixed seeds; this goes looking for new trouble. Each worker process draws
seeds nobody chose (printed as they finish), runs each for ``--steps`` steps in strict mode
(no known bug tolerated) and reports back; the first violation stops the soak and prints
the replay line. Stores live on ``/dev/shm`` where there is one: a tmpfs makes SQLite's
fsync free, and a seed's path does not depend on it.

    python -m tests.core.soak --seconds 600 [--steps 500] [--workers N]

Exit status 0: no violation; 1: a violation (or a worker that died). Interrupted (Ctrl-C,
SIGINT or SIGTERM), it stops drawing seeds, lets each worker finish the seed in hand and
prints its tally as at the end: a long soak can be cut short without losing what it proved.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.synchronize import Event
from pathlib import Path

from tests.core.simulation import describe, run_simulation

_SHM = Path("/dev/shm")
_FIRST_FRESH_SEED = 10_000  # above the ranges anyone replays by hand


@dataclass(frozen=True)
class Finished:
    """One seed's outcome, as a worker reports it."""

    seed: int
    steps: int
    seconds: float
    failure: str | None  # describe()'s text with the replay line, when it failed


def run_seed(seed: int, steps: int) -> Finished:
    scratch = _SHM if _SHM.is_dir() else None
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="coven-soak-", dir=scratch) as data:
        result = run_simulation(seed, steps, Path(data) / "data")
    failure = None if result.violation is None else describe(result, strict=True)
    return Finished(seed, result.steps, time.monotonic() - started, failure)


def _work(steps: int, until: float, stop: Event, results: multiprocessing.Queue) -> None:
    # The engine's warnings (a routine broken by a simulated tz upgrade) are the simulation
    # working; the soak's output is seeds and violations.
    logging.getLogger("coven_core").setLevel(logging.ERROR)
    for stopping in _STOPPING:  # the parent decides when to stop; a seed in hand is finished
        signal.signal(stopping, signal.SIG_IGN)
    draw = random.SystemRandom()
    while time.time() < until and not stop.is_set():
        seed = draw.randrange(_FIRST_FRESH_SEED, 2**31)
        try:
            results.put(run_seed(seed, steps))
        except Exception as error:  # the simulation itself broke: as bad as a violation
            results.put(Finished(seed, 0, 0.0, f"seed={seed}: the simulation raised {error!r}"))
    results.put(None)  # this worker is done


_STOPPING = (signal.SIGINT, signal.SIGTERM)


def soak(seconds: float, steps: int, workers: int) -> int:
    context = multiprocessing.get_context("spawn")
    stop, results = context.Event(), context.Queue()

    def interrupted(signum: int, _frame: object) -> None:
        if not stop.is_set():
            print("soak: stopping after the seeds in hand", flush=True)
        stop.set()

    for stopping in _STOPPING:
        signal.signal(stopping, interrupted)
    until = time.time() + seconds
    procs = [
        context.Process(target=_work, args=(steps, until, stop, results), daemon=True)
        for _ in range(workers)
    ]
    started = time.monotonic()
    for proc in procs:
        proc.start()
    print(
        f"soak: {workers} worker(s), {steps} strict steps a seed, for {seconds:.0f} s", flush=True
    )
    seeds = total = failures = 0
    running = workers
    while running:
        done = results.get()
        if done is None:
            running -= 1
            continue
        seeds, total = seeds + 1, total + done.steps
        if done.failure is None:
            print(f"seed {done.seed}: {done.steps} steps ok ({done.seconds:.1f} s)", flush=True)
        else:
            failures += 1
            stop.set()
            print(done.failure, flush=True)
    for proc in procs:
        proc.join()
    wall = time.monotonic() - started
    print(
        f"soak: {seeds} seeds × {steps} steps = {total} strict steps in {wall:.0f} s "
        f"({total / wall:.0f} steps/s), violations: {failures}",
        flush=True,
    )
    return 1 if failures or any(proc.exitcode for proc in procs) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.core.soak", description=__doc__)
    parser.add_argument("--seconds", type=float, default=600, help="how long (default 600)")
    parser.add_argument("--steps", type=int, default=500, help="steps a seed (default 500)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="processes (default: one a core)")  # fmt: skip
    args = parser.parse_args(argv)
    return soak(args.seconds, args.steps, args.workers)


if __name__ == "__main__":
    sys.exit(main())
