"""Whether a failed attempt is tried again, and when (DESIGN §6).

Every failure is classified before any retry is considered. Backoff is bounded exponential
with **full jitter**, and the jitter is derived from the occurrence id and attempt number —
so it is reproducible in tests and explainable to a person ("attempt 3 waits 41 s").
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from coven_core.model import FailureClass, RevisionSpec

BASE_DELAY = timedelta(seconds=30)
MAX_DELAY = timedelta(hours=1)
#: Nothing ran, so trying again is safe; bounded even when the routine allows no retries.
RUNTIME_UNAVAILABLE_TRIES = 3


@dataclass(frozen=True)
class RetryPolicy:
    """A snapshot of the revision's policy, stored with each attempt."""

    retries: int
    idempotent: bool
    base_seconds: float = BASE_DELAY.total_seconds()
    max_seconds: float = MAX_DELAY.total_seconds()

    @classmethod
    def of(cls, spec: RevisionSpec) -> RetryPolicy:
        return cls(spec.retries, spec.idempotent)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Decision:
    retry: bool
    not_before: datetime | None = None
    why: str = ""  # the exhaustion (or refusal) reason when retry is False


def decide(
    policy: RetryPolicy, failure: FailureClass, attempt: int, occurrence_id: str, now: datetime
) -> Decision:
    """Retry only where the §6 table allows, within the policy's bound."""
    allowed = _allowed_attempts(policy, failure)
    if allowed is None:
        return Decision(False, why=_NEVER[failure])
    if attempt >= allowed:
        return Decision(False, why=f"retries exhausted after {attempt} attempt(s)")
    return Decision(True, now + backoff(policy, occurrence_id, attempt))


def _allowed_attempts(policy: RetryPolicy, failure: FailureClass) -> int | None:
    if failure is FailureClass.ACTION_FAILED:
        return 1 + policy.retries
    if failure is FailureClass.RUNTIME_UNAVAILABLE:
        return max(1 + policy.retries, RUNTIME_UNAVAILABLE_TRIES)
    if failure is FailureClass.AMBIGUOUS and policy.idempotent:
        return 1 + max(policy.retries, 1)
    return None


_NEVER = {
    FailureClass.VALIDATION: "not retried: the routine itself is invalid",
    FailureClass.REFUSED: "not retried: refused by the system (needs a new decision)",
    FailureClass.STORE_TRANSIENT: "not retried here: the scheduler retries its own operation",
    FailureClass.AMBIGUOUS: "not retried: it may have run (the routine is not idempotent)",
    FailureClass.DELIVERY_FAILED: "not retried: only the delivery is retried",
    FailureClass.CANCELLED: "not retried: it was stopped",  # a cancel, or a stop from outside
    FailureClass.TIMED_OUT: "not retried: it ran past its timeout",
    FailureClass.ACTION_FAILED: "",
    FailureClass.RUNTIME_UNAVAILABLE: "",
}


def backoff(policy: RetryPolicy, occurrence_id: str, attempt: int) -> timedelta:
    """Full jitter: uniform in [0, min(max, base * 2^(attempt-1))], the uniform draw taken
    from a hash of the occurrence id and attempt number."""
    ceiling = min(policy.max_seconds, policy.base_seconds * 2 ** (attempt - 1))
    digest = hashlib.sha256(f"{occurrence_id}#{attempt}".encode()).digest()
    fraction = int.from_bytes(digest[:8], "big") / 2**64
    return timedelta(seconds=round(ceiling * fraction, 3))
