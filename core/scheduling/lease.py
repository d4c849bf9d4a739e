"""One scheduler per store: the leader lease and its fence (DESIGN §9).

The lease row names its holder, a **monotonic generation** and an expiry. A process that takes
the lease over from another bumps the generation; every state transition the scheduler writes
checks, in the same transaction, that its generation is still current (:func:`check_fence`),
so a stale process is refused and stands down instead of dispatching twice.

Every scheduler transaction reads the lease (the fence); the leader *rewrites* it only once
its last renewal is :data:`RENEW_AFTER` old. A pass happens at least every
``clock.SAFETY_CAP`` and the lease lives ``2 × SAFETY_CAP + RENEW_AFTER``, so a live leader's
lease always has more than a safety cap left: it outlives one whole missed pass, as it did when
every pass rewrote it (one minute less margin), while a busy leader — several passes a minute —
writes the lease once a minute instead of on every pass. A holder on this host whose process is
gone (pid *and* start time checked, never the pid alone) is taken over at once, so a restart
after a crash does not wait for the expiry.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from functools import lru_cache
from typing import NamedTuple

import apsw

from coven_core.clock import SAFETY_CAP
from coven_core.errors import CovenError
from coven_core.store.codec import instant_from, instant_text

RENEW_AFTER = timedelta(minutes=1)
"""How old the leader's last renewal may be before a pass writes a new expiry."""

LEASE_TTL = 2 * SAFETY_CAP + RENEW_AFTER


class Fenced(CovenError):
    """This process no longer holds the leader lease; it must stand down."""


class Holder(NamedTuple):
    """Who a process is, in a form another process on the same host can check."""

    host: str
    pid: int
    started: float  # the process's start mark, so a reused pid is not mistaken for it
    nonce: str  # tells apart two schedulers in one process (tests)
    boot: str = ""  # the boot the mark was taken in ("" in a token from before marks)

    @classmethod
    def of_this_process(cls) -> Holder:
        import secrets
        import socket

        from coven_core.runner.process import boot_id, start_mark

        pid = os.getpid()
        return cls(socket.gethostname(), pid, start_mark(pid), secrets.token_hex(4), boot_id())

    @property
    def token(self) -> str:
        return _token(self)

    @classmethod
    def parse(cls, token: str) -> Holder | None:
        """A token of either form: ``host/pid/mark/nonce/boot``, or ``host/pid/start/nonce``
        as tokens were before marks (a host name holds no slash)."""
        parts = token.split("/")
        if len(parts) not in (4, 5):
            return None
        try:
            return cls(parts[0], int(parts[1]), float(parts[2]), *parts[3:])
        except ValueError:
            return None


@lru_cache(maxsize=64)
def _token(holder: Holder) -> str:
    """A holder's token, formatted once: every scheduler transaction compares it."""
    return f"{holder.host}/{holder.pid}/{holder.started:.3f}/{holder.nonce}/{holder.boot}"


class Lease(NamedTuple):
    holder: str
    generation: int
    acquired_at: datetime
    renewed_at: datetime
    expires_at: datetime

    def fingerprint(self) -> str:
        """A short, safe way to show the holder (tokens are never shown in full, §13)."""
        holder = Holder.parse(self.holder)
        return f"{holder.host}:{holder.pid}" if holder else self.holder[:12]


def current(conn: apsw.Connection) -> Lease | None:
    global _last_read
    row = conn.execute(
        "SELECT holder, generation, acquired_at, renewed_at, expires_at FROM lease WHERE id = 1"
    ).fetchone()
    if row is None:
        return None
    last_row, last_lease = _last_read
    if row == last_row:
        return last_lease  # unchanged since the last read (it is rewritten once a minute)
    holder, generation, acquired, renewed, expires = row
    lease = Lease(
        holder, generation, instant_from(acquired), instant_from(renewed), instant_from(expires)
    )
    _last_read = (row, lease)
    return lease


# The last lease row read and its parsed Lease: every scheduler transaction reads the row, and
# it changes at most once a minute. One tuple, so a reader on another thread sees a matching
# pair (its assignment is atomic).
_last_read: tuple[object, Lease | None] = (None, None)


def acquire(conn: apsw.Connection, me: Holder, now: datetime) -> Lease | None:
    """Take or renew the lease inside the caller's write transaction; None means standby."""
    lease = current(conn)
    if lease is None:
        return _write(conn, me.token, 1, now, now, insert=True)
    if lease.holder == me.token:
        if _fresh(lease, now):
            return lease  # checked (the fence), and no write needed yet
        return _write(conn, me.token, lease.generation, lease.acquired_at, now)
    if lease.expires_at <= now or holder_is_gone(lease.holder):
        return _write(conn, me.token, lease.generation + 1, now, now)
    return None


def _fresh(lease: Lease, now: datetime) -> bool:
    """Renewed less than RENEW_AFTER ago, as the expiry shows. A released lease (expiry set to
    its release) and a wall clock set back (an expiry further off than a term) are rewritten."""
    return LEASE_TTL - RENEW_AFTER < lease.expires_at - now <= LEASE_TTL


def release(conn: apsw.Connection, me: Holder, now: datetime) -> None:
    """Let a standby or a restart take over at once (on orderly shutdown)."""
    conn.execute(
        "UPDATE lease SET expires_at = ? WHERE id = 1 AND holder = ?", (instant_text(now), me.token)
    )


def check_fence(conn: apsw.Connection, generation: int) -> None:
    """Refuse a write from a process whose generation is no longer current."""
    row = conn.execute("SELECT generation FROM lease WHERE id = 1").fetchone()
    if row is None or row[0] != generation:
        now_generation = None if row is None else row[0]
        raise Fenced(f"leader generation {generation} is stale (the store is at {now_generation})")


def is_alive(held: Lease | None, now: datetime) -> bool:
    """Whether a scheduler holds the store now: a lease not expired (nor released) whose
    holder is not provably gone. ``coven status`` shows it as the leader's ``alive``."""
    return held is not None and held.expires_at > now and not holder_is_gone(held.holder)


def holder_is_gone(token: str) -> bool:
    """True only when the holder is provably dead: same host, and no process with its pid and
    start time. A holder on another host is never presumed dead."""
    return _liveness(token) is False


def holder_is_alive(token: str) -> bool:
    """True only when provably alive: on this host, a process with its pid *and* start time."""
    return _liveness(token) is True


def _liveness(token: str) -> bool | None:
    """Alive, gone, or None when it cannot be known (another host, no permission)."""
    # Here, not at the top: a reader such as `coven status` needs process checks only when a
    # lease is live, and socket and psutil are a good part of its start-up.
    import socket

    from coven_core.runner.process import liveness

    holder = Holder.parse(token)
    if holder is None or holder.host != socket.gethostname():
        return None
    return liveness(holder.pid, holder.started, holder.boot or None)


def _write(
    conn: apsw.Connection,
    token: str,
    generation: int,
    acquired: datetime,
    now: datetime,
    *,
    insert: bool = False,
) -> Lease:
    expires = now + LEASE_TTL
    values = (token, generation, instant_text(acquired), instant_text(now), instant_text(expires))
    verb = "INSERT INTO" if insert else "REPLACE INTO"
    conn.execute(
        f"{verb} lease (id, holder, generation, acquired_at, renewed_at, expires_at) "
        "VALUES (1, ?, ?, ?, ?, ?)",
        values,
    )
    return Lease(token, generation, acquired, now, expires)
