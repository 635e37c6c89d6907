"""``fake``: a deterministic, rule-based judge for tests and UI development (never the default).

Rules for binary requests (documented in the README):

1. If the item text (the request's context) contains ``[[invalid]]``, the answer is the
   unparsable ``"I cannot tell."`` → verdict ``invalid``.
2. Otherwise ``overlap`` = share of the question's content words (4+ letters, not stop
   words) that occur in the item text, and ``h`` = a stable hash of (question, item text)
   mapped to [0, 1). ``p_yes = round(0.5 * overlap + 0.5 * h, 4)``; verdict ``yes`` iff
   ``p_yes >= 0.5``. Mode ``logprob``; raw text ``"Yes"``/``"No"``; tokens = words.

Test hooks (environment): ``CHECKEVAL_FAKE_DELAY`` = seconds to sleep per request (to make
runs slow enough to kill), ``CHECKEVAL_FAKE_LOG`` = a file that gets one line per request
that reached the judge (to count judge calls across processes).

Generate requests are answered by the generator registered for the request's ``purpose``
(each feature registers its own with :func:`register_fake_generator`); without one, the
answer is ``"FAKE: "`` + the first 60 characters of the last message.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Sequence

from checkeval_core.judges.base import (
    BinaryRequest,
    BinaryResult,
    Capabilities,
    GenerateRequest,
    GenerateResult,
)

INVALID_MARKER = "[[invalid]]"
_STOP = {
    "does", "the", "this", "that", "with", "from", "into", "there", "their", "have", "will",
    "about", "each", "every", "any", "are", "is", "such", "than", "then", "them",
    "they", "what", "when", "which", "while", "would", "could", "should", "summary",
    "response", "text", "without", "other", "more", "most", "also", "only",
}
_WORDS = re.compile(r"[a-z]{4,}")

_GENERATORS: dict[str, Callable[[GenerateRequest], str]] = {}


def register_fake_generator(purpose: str, fn: Callable[[GenerateRequest], str]) -> None:
    """Make the fake judge answer generate requests of ``purpose`` with ``fn(request)``."""
    _GENERATORS[purpose] = fn


def stable_unit(*parts: str) -> float:
    """A deterministic number in [0, 1) from strings (sha256-based)."""
    h = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def fake_p_yes(question: str, text: str) -> float:
    """Rule 2 above."""
    words = [w for w in _WORDS.findall(question.lower()) if w not in _STOP]
    low = text.lower()
    overlap = (sum(1 for w in words if w in low) / len(words)) if words else 0.0
    return round(0.5 * overlap + 0.5 * stable_unit(question, text), 4)


class FakeJudge:
    """Deterministic judge; see the module docstring for its rules."""

    def __init__(self, spec: object = "fake", **params: object) -> None:
        self.spec = str(getattr(spec, "spec", spec))  # a parsed spec or its string
        self.params = params
        self.capabilities = Capabilities(logprobs=True, prefix_reuse=False, max_concurrency=8,
                                         local=True, model="fake")
        self.calls = 0  # number of requests answered (tests count cache misses with it)

    def _hook(self, text: str) -> None:
        delay = float(os.environ.get("CHECKEVAL_FAKE_DELAY", "0") or 0)
        if delay:
            time.sleep(delay)
        log = os.environ.get("CHECKEVAL_FAKE_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(hashlib.sha256(text.encode()).hexdigest()[:16] + "\n")

    def binary(self, requests: Sequence[BinaryRequest]) -> list[BinaryResult]:
        out = []
        for r in requests:
            self.calls += 1
            self._hook(r.system + r.user_text)
            text = r.prefix
            n_in = len((r.system + r.user_text).split())
            if INVALID_MARKER in text:
                out.append(BinaryResult(verdict="invalid", raw="I cannot tell.", mode="text",
                                        tokens_in=n_in, tokens_out=4))
                continue
            p = fake_p_yes(r.question, text)
            verdict = "yes" if p >= 0.5 else "no"
            out.append(BinaryResult(verdict=verdict, p_yes=p, raw=verdict.capitalize(),
                                    mode="logprob", tokens_in=n_in, tokens_out=1,
                                    yes_no_mass=1.0))
        return out

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]:
        out = []
        for r in requests:
            self.calls += 1
            self._hook(repr(r.messages))
            fn = _GENERATORS.get(r.purpose)
            last = r.messages[-1][1] if r.messages else ""
            text = fn(r) if fn else "FAKE: " + last[:60]
            n_in = sum(len(c.split()) for _, c in r.messages)
            out.append(GenerateResult(text=text, tokens_in=n_in, tokens_out=len(text.split())))
        return out
