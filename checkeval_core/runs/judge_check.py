"""A one-question check of a judge (Judges page, ``checkeval judge test``): the judge asked
one checklist question about a fixed item, through the same prompt a run uses (so it lives
above ``prompts/``; the speed benchmark is :mod:`checkeval_core.bench.speed`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from checkeval_core.judges.base import BinaryRequest
from checkeval_core.judges.registry import get_judge
from checkeval_core.prompts.judge import binary_request_for_item

TEST_ITEM = {
    "source": "The city of Northbridge opened its first light-rail line on Monday. The 12 km "
              "line has 9 stations and cost 1.2 billion euros.",
    "output": "Northbridge opened a 12 km light-rail line with 9 stations.",
}
TEST_QUESTION = "Does the summary state the length of the new line correctly?"


def test_request(item: dict[str, Any] | None = None, question: str | None = None) -> BinaryRequest:
    return binary_request_for_item(item or TEST_ITEM, question or TEST_QUESTION, "summarization")


def judge_test(judge: Any, item: dict[str, Any] | None = None,
               question: str | None = None) -> dict[str, Any]:
    """Ask one question; returns verdict, p_yes, mode, latency, tokens, error, capabilities."""
    t0 = time.perf_counter()
    r = judge.binary([test_request(item, question)])[0]
    return {"verdict": r.verdict, "p_yes": r.p_yes, "mode": r.mode,
            "latency_ms": round((time.perf_counter() - t0) * 1000, 1),
            "tokens_in": r.tokens_in, "tokens_out": r.tokens_out, "raw": r.raw, "error": r.error,
            "capabilities": judge.capabilities.to_dict()}


def ask_judge(db: Any, spec: str, *, key_env: str | None = None,
              secrets: Mapping[str, Any] | None = None,
              question: str | None = None) -> dict[str, Any]:
    """The Judges page's *Ask one question*: the judge for ``spec`` (its key from ``key_env``,
    the saved judge or the defaults; no response cache, so the backend is really asked) and
    :func:`judge_test`'s answer. A spec or key problem raises (JudgeSpecError, ValueError,
    ImportError); a failed request is an answer with ``error`` set."""
    judge = get_judge(spec, db=db, cache=False, key_env=key_env, secrets=secrets)
    return judge_test(judge, question=question)
