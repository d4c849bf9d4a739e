"""Retry decisions per failure class and deterministic full-jitter backoff (DESIGN §6)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coven_core.model import FailureClass
from coven_core.scheduling.retry import RetryPolicy, backoff, decide

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("failure", "policy", "attempt", "retry"),
    [
        (FailureClass.ACTION_FAILED, RetryPolicy(2, False), 1, True),
        (FailureClass.ACTION_FAILED, RetryPolicy(2, False), 3, False),
        (FailureClass.ACTION_FAILED, RetryPolicy(0, False), 1, False),
        (FailureClass.RUNTIME_UNAVAILABLE, RetryPolicy(0, False), 2, True),
        (FailureClass.RUNTIME_UNAVAILABLE, RetryPolicy(0, False), 3, False),
        (FailureClass.VALIDATION, RetryPolicy(5, True), 1, False),
        (FailureClass.REFUSED, RetryPolicy(5, True), 1, False),
        (FailureClass.AMBIGUOUS, RetryPolicy(5, False), 1, False),
        (FailureClass.AMBIGUOUS, RetryPolicy(0, True), 1, True),
        (FailureClass.CANCELLED, RetryPolicy(5, True), 1, False),
        (FailureClass.TIMED_OUT, RetryPolicy(5, True), 1, False),
    ],
)
def test_retry_table(failure, policy, attempt, retry) -> None:
    decision = decide(policy, failure, attempt, "r@1", NOW)
    assert decision.retry is retry
    assert (decision.not_before is not None) is retry
    assert retry or decision.why


def test_exhaustion_names_the_attempts() -> None:
    assert decide(RetryPolicy(1, False), FailureClass.ACTION_FAILED, 2, "o", NOW).why == (
        "retries exhausted after 2 attempt(s)"
    )


def test_backoff_is_deterministic_per_occurrence_and_attempt() -> None:
    policy = RetryPolicy(3, False)
    assert backoff(policy, "r@1", 2) == backoff(policy, "r@1", 2)
    assert backoff(policy, "r@1", 2) != backoff(policy, "r@2", 2)


@given(st.text(min_size=1, max_size=40), st.integers(min_value=1, max_value=40))
def test_backoff_stays_within_the_exponential_ceiling(occurrence: str, attempt: int) -> None:
    policy = RetryPolicy(50, False)
    ceiling = min(3600.0, 30.0 * 2 ** (attempt - 1))
    assert timedelta(0) <= backoff(policy, occurrence, attempt) <= timedelta(seconds=ceiling)
