"""Verdict parsing (last verdict wins) and p(Yes) from log-probabilities."""

import math

import pytest

from checkeval_core.judges.parsing import p_yes_from_logprobs, parse_verdict, yes_no_token_kind


@pytest.mark.parametrize("text,verdict", [
    ("Yes", "yes"), ("no.", "no"), ("**No**", "no"), ("YES!", "yes"),
    ("Is it fluent? Let me think... yes, but actually no", "no"),
    ("The answer is: Yes", "yes"), ("", "invalid"), (None, "invalid"),
    ("I cannot tell", "invalid"), ("Nobody knows; yesterday", "invalid"),
])
def test_parse_verdict(text, verdict):
    assert parse_verdict(text) == verdict


def test_token_kinds():
    for t in (" Yes", "yes", "YES", "Ġyes", "▁Yes", "Yes."):
        assert yes_no_token_kind(t) == "yes"
    for t in ("No", " no", "NO", "Ġno"):
        assert yes_no_token_kind(t) == "no"
    assert yes_no_token_kind("None") is None and yes_no_token_kind("Yesterday") is None


def test_p_yes_sums_all_spellings():
    top = {" Yes": math.log(0.5), "yes": math.log(0.1), "YES": math.log(0.05),
           "No": math.log(0.2), " no": math.log(0.05), "Maybe": math.log(0.1)}
    p, mass = p_yes_from_logprobs(top)
    assert p == pytest.approx(0.65 / 0.9)
    assert mass == pytest.approx(0.9)


def test_p_yes_neither_present():
    assert p_yes_from_logprobs({"The": -0.1, "I": -2.0}) == (None, 0.0)
    assert p_yes_from_logprobs({}) == (None, 0.0)
