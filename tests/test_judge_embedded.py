"""The real embedded model (llama.cpp, Qwen2.5-Coder-0.5B) on a tiny item."""

import pytest

from checkeval_core.judges.registry import get_judge, load_backend
from checkeval_core.prompts.judge import binary_request_for_item

pytestmark = pytest.mark.embedded

ITEM = {"source": "Maria bought three red apples at the market on Tuesday. She paid two euros.",
        "output": "Maria bought three red apples on Tuesday for two euros."}
TRUE_Q = "Does the summary say that Maria bought apples?"
FALSE_Q = "Does the summary say that Maria bought a car?"
MORE = ["Does the summary mention the price?", "Is the summary written in French?"]


def test_true_statement_scores_higher_than_false():
    j = load_backend("embedded")
    r_true, r_false = j.binary([binary_request_for_item(ITEM, q, "summarization")
                                for q in (TRUE_Q, FALSE_Q)])
    assert r_true.mode == "logprob" and r_true.yes_no_mass > 0.5
    assert r_true.p_yes > r_false.p_yes
    assert r_true.verdict == "yes" and r_false.verdict == "no"


def test_prefix_reuse_matches_full_prompts():
    reqs = [binary_request_for_item(ITEM, q, "summarization") for q in
            (TRUE_Q, FALSE_Q, *MORE)]
    reuse = load_backend("embedded").binary(reqs)
    full = load_backend("embedded", reuse=False).binary(reqs)
    for a, b in zip(reuse, full):
        assert abs(a.p_yes - b.p_yes) < 0.08
    agree = sum(a.verdict == b.verdict for a, b in zip(reuse, full))
    assert agree >= len(reqs) - 1  # a p(Yes) near 0.5 may flip within the tolerance


def test_generate_and_cache(db):
    from checkeval_core.judges.base import GenerateRequest

    j = get_judge("embedded", db=db)
    g = GenerateRequest.chat("You answer briefly.", "Name one colour.", max_tokens=8)
    first = j.generate([g])[0]
    assert first.text.strip() and not first.error
    again = get_judge("embedded", db=db).generate([g])[0]
    assert again.cached and again.text == first.text


def test_short_generation_reuses_shared_parts():
    """G-Eval's Likert prompts of one item share the article and the summary: decoded on the
    segment cache they cost far fewer evaluated tokens and give the same answers."""
    from checkeval_core.runs.methods import plan_geval

    item = {"id": 1, **ITEM}
    ctx = {"kind": "summarization", "params": {}, "definitions": {},
           "content": {"dimensions": [{"name": d, "definition": f"the {d} of the summary"}
                                      for d in ("fluency", "relevance", "coherence")],
                       "questions": [{"dimension": d} for d in
                                     ("fluency", "relevance", "coherence")]}}
    reqs = [w.request for w in plan_geval(item, ctx)]
    assert len(reqs) == 3 and all(r.shared_parts for r in reqs)
    reuse_j, full_j = load_backend("embedded"), load_backend("embedded", reuse=False)
    reuse, full = reuse_j.generate(reqs), full_j.generate(reqs)
    assert reuse_j.tokens_evaluated < 0.7 * full_j.tokens_evaluated
    for a, b in zip(reuse, full):
        assert not a.error and a.text.strip()[:1] in "12345"
        assert a.text.strip()[:1] == b.text.strip()[:1]
        assert a.first_token_logprobs and set(a.first_token_logprobs) & {"1", "2", "3", "4", "5"}


def test_questions_side_by_side_match_one_by_one():
    """An item's questions evaluated as parallel sequences over the shared prefix give the
    p(Yes) of the one-by-one path: exactly for a question alone in its batch (positions,
    the shared prefix's cells and the cleanup are right), and within llama.cpp's numerical
    noise for the whole batch (its kernels round a row differently in a larger batch)."""
    from checkeval_core.judges import embedded

    reqs = [binary_request_for_item(ITEM, q, "summarization") for q in (TRUE_Q, FALSE_Q, *MORE)]
    par_j, seq_j = load_backend("embedded", parallel=True), load_backend("embedded")
    seq = seq_j.binary(reqs)
    par = par_j.binary(reqs)
    for a, b in zip(seq, par):
        assert b.mode == "logprob" and not b.error and b.tokens_in == a.tokens_in
        assert abs(a.p_yes - b.p_yes) < 0.04
    assert par[0].p_yes > par[1].p_yes and par[0].verdict == "yes" and par[1].verdict == "no"
    eng = embedded._engine("")
    for req, a in zip(reqs, seq):
        tokens, bounds = eng.segments(req)
        logits, _ = eng.eval_parallel(tokens[:bounds[-2]], bounds[:-1], [tokens[bounds[-2]:]])
        assert abs(embedded._binary_result(eng, logits[0], 0, 0).p_yes - a.p_yes) < 1e-5
    # the questions' sequences are gone: the one-by-one path gives its answers again
    assert [r.p_yes for r in seq_j.binary(reqs)] == pytest.approx([r.p_yes for r in seq],
                                                                   abs=1e-6)
