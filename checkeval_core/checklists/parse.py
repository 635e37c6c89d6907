"""Reading questions out of messy LLM output, and flagging questions that are not Yes/No or
not phrased so that "Yes" means better.

Accepted: numbered lists (``1.``, ``2)``, ``(3)``, ``Q4:``), bullets (``-``, ``*``, ``•``), a
JSON array of strings or of objects with ``question``/``text``, a JSON object holding such an
array, and plain lines ending with ``?``. Every step is linear in the text's length (model
output is untrusted: no backtracking regex over the whole text, one JSON parse). Lines that are neither (stray prose) and listed answer
options ("- Yes", "- No") are returned as *problems* so the user sees what was not used.
"""

from __future__ import annotations

import json
import re

from checkeval_core.safeio import json_depth_error

_PREFIX = re.compile(r"^\s*(?:[-*•·]+|\(?\d{1,3}[.):]|\(?[A-Za-z][.)]|Q\d{1,3}[.):]?)\s*")
_AUX = re.compile(r"^(is|are|does|do|did|has|have|had|can|could|will|would|was|were|should|"
                  r"shall|may|might|must)\b", re.IGNORECASE)
_NEGATIVE = re.compile(
    r"\b(any (?:errors?|mistakes?|issues?|problems?|irrelevant|redundan\w*|contradictions?|"
    r"hallucinat\w*)|contain(?:s)? (?:errors?|mistakes?|irrelevant|redundan\w*|hallucinat\w*)|"
    r"fail(?:s)? to|lack(?:s)?|incorrect|inaccura\w*|confus\w*|awkward|irrelevant|"
    r"unnecessary|repetitive|contradict\w*)\b", re.IGNORECASE)
# a listed line that is only an answer option ("- Yes", "b) No"), not a question
_OPTION = re.compile(r"^(yes|no|true|false|yes\s*/\s*no)[.!]?$", re.IGNORECASE)
_AVOID = re.compile(r"\b(avoid\w*|free of|free from|without|no(?:t)? (?:contain|include))\b",
                    re.IGNORECASE)


def _from_json(text: str) -> list[str] | None:
    """The JSON value starting at the first ``[``/``{`` (one linear parse; text after the
    value is ignored), as a list of question texts, or None."""
    start = min([i for i in (text.find("["), text.find("{")) if i >= 0], default=-1)
    if start < 0 or json_depth_error(text[start:]) is not None:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError):
        return None
    if isinstance(data, dict):
        data = next((v for v in data.values() if isinstance(v, list)), None)
    if not isinstance(data, list):
        return None
    out = []
    for x in data:
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, dict):
            t = x.get("question") or x.get("text")
            if isinstance(t, str):
                out.append(t)
    return out


def parse_questions(text: str | None) -> tuple[list[str], list[str]]:
    """``(questions, problems)`` from an LLM answer; duplicates removed, order kept."""
    if not text or not text.strip():
        return [], ["the model returned an empty answer"]
    found = _from_json(text)
    problems: list[str] = []
    if found is None:
        found = []
        for line in text.splitlines():
            if not line.strip():
                continue
            body = _PREFIX.sub("", line).strip().strip('"').strip()
            listed = bool(_PREFIX.match(line)) and body != line.strip()
            if _OPTION.match(body):
                problems.append(f"an answer option, not a question, ignored: {line.strip()}")
            elif body.endswith("?") or (listed and body):
                found.append(body)
            else:
                problems.append(f"not a question, ignored: {line.strip()[:120]}")
    out: list[str] = []
    for q in found:
        q = " ".join(q.replace("**", "").split())
        if q and q not in out:
            out.append(q)
    return out, problems


def question_flags(text: str) -> list[str]:
    """``not_yes_no`` (does not start with an auxiliary verb / lacks '?'), ``negative`` (a Yes
    would mean worse: asks about errors, failures… without 'avoid'/'free of')."""
    flags = []
    t = text.strip()
    if not t.endswith("?") or not _AUX.match(t):
        flags.append("not_yes_no")
    if _NEGATIVE.search(t) and not _AVOID.search(t):
        flags.append("negative")
    return flags
