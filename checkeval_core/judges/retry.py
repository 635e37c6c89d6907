"""What a backend says about a failure, and how long the wrapper waits before asking again.

A backend does not retry: it classifies. Its ``should_retry(exc)`` returns a
:class:`RetryDecision` for a transient failure (rate limit, server error, timeout, lost
connection) and ``None`` for anything else; the one wrapper around every backend
(``cached.py``) owns the retry loop, so every backend gets the same policy. Waits are
full-jitter exponential backoff unless the server named a delay (``Retry-After``), capped.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

DEFAULT_ATTEMPTS = 4
MAX_WAIT = 30.0


@dataclass(frozen=True)
class RetryDecision:
    """Retry this failure. ``message`` is what the result's ``error`` says if every attempt
    fails (never holding a key); ``delay`` is the server's hint in seconds (``None``: back
    off exponentially)."""

    message: str
    delay: float | None = None


def backoff_delay(attempt: int, base: float = 0.5, cap: float = MAX_WAIT,
                  rng: random.Random | None = None) -> float:
    """Full-jitter exponential backoff: uniform(0, min(cap, base * 2**attempt))."""
    r = rng or random
    return r.uniform(0, min(cap, base * (2 ** attempt)))


def wait_before_retry(decision: RetryDecision, attempt: int, max_wait: float = MAX_WAIT) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (0-based)."""
    wait = decision.delay if decision.delay is not None else backoff_delay(attempt)
    return min(max_wait, max(0.0, wait))
