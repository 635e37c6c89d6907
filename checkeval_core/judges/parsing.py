"""Turning model output into verdicts: the one documented verdict parser and log-prob maths.

``parse_verdict`` rule: find every standalone yes/no word (any case, optional surrounding
punctuation or markdown); **the last one wins** (models often restate the question or reason
before concluding). No yes/no word at all → ``invalid`` (never "no").
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from checkeval_core.judges.base import Verdict

_WORD = re.compile(r"(?<![A-Za-z])(yes|no)(?![A-Za-z])", re.IGNORECASE)


def parse_verdict(text: str | None) -> Verdict:
    """``"yes"`` / ``"no"`` from free text, the last verdict word winning; else ``"invalid"``."""
    if not text:
        return "invalid"
    found = _WORD.findall(text)
    if not found:
        return "invalid"
    return "yes" if found[-1].lower() == "yes" else "no"


def yes_no_token_kind(token: str) -> str | None:
    """``"yes"``/``"no"`` when a token is a spelling of it (" Yes", "yes", "YES", "▁No"…)."""
    t = token.replace("Ġ", " ").replace("▁", " ").strip().strip(".,:;!\"'*`").lower()
    if t == "yes":
        return "yes"
    if t == "no":
        return "no"
    return None


def p_yes_from_logprobs(top: Mapping[str, float]) -> tuple[float | None, float]:
    """Normalized p(Yes) from a token→logprob map of candidates.

    Sums the probabilities of all yes spellings and of all no spellings, returns
    ``(p_yes / (p_yes + p_no), p_yes + p_no)``; ``(None, 0.0)`` when neither is present.
    """
    p_y = sum(math.exp(lp) for tok, lp in top.items() if yes_no_token_kind(tok) == "yes")
    p_n = sum(math.exp(lp) for tok, lp in top.items() if yes_no_token_kind(tok) == "no")
    mass = p_y + p_n
    if mass <= 0.0:
        return None, 0.0
    return p_y / mass, mass
