"""Retries with exponential backoff and jitter for transient remote failures (one place).

Transient = rate limits (429), server errors (5xx), timeouts and connection errors.
A ``Retry-After`` header (seconds) is honoured, capped at ``max_wait``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class TransientError(Exception):
    """A failure worth retrying; ``retry_after`` in seconds when the server said so."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def backoff_delay(attempt: int, base: float = 0.5, cap: float = 30.0,
                  rng: random.Random | None = None) -> float:
    """Full-jitter exponential backoff: uniform(0, min(cap, base * 2**attempt))."""
    r = rng or random
    return r.uniform(0, min(cap, base * (2 ** attempt)))


def with_retries(fn: Callable[[], T], attempts: int = 4, base: float = 0.5,
                 max_wait: float = 30.0, sleep: Callable[[float], None] = time.sleep) -> T:
    """Call ``fn``; on :class:`TransientError` wait and retry, up to ``attempts`` calls."""
    for attempt in range(attempts):
        try:
            return fn()
        except TransientError as e:
            if attempt == attempts - 1:
                raise
            wait = e.retry_after if e.retry_after is not None else backoff_delay(attempt, base)
            sleep(min(max_wait, max(0.0, wait)))
    raise AssertionError("unreachable")  # pragma: no cover
