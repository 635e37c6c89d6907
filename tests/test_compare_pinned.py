"""``compare_runs`` output pinned on a small random fixture (tests/fixtures/compare_pinned.json),
so a rewrite for speed cannot change a number: every level and coefficient, both directions,
SEAL units, invalid answers, Likert answers (question 0), items and answers only one run has,
a question with more flips than the listed 20, missing and constant human scores.

The pinned file was written by the implementation it guards. To rewrite it on purpose (a
deliberate change of output, said in the commit): ``CHECKEVAL_PIN_COMPARE=1 pytest
tests/test_compare_pinned.py``. Integers, strings and None must match exactly; floats within
``helpers.PINNED_REL`` (so a CPU whose vector code sums in another order, or an upgrade of
numpy/pandas, that moves the last bits does not fail it)."""

from __future__ import annotations

import json
import os

from checkeval_core.analysis.compare import compare_runs
from tests.helpers import FIXTURES, same_pinned
from tests.helpers import random_two_runs as build

PINNED = FIXTURES / "compare_pinned.json"
# (level, coef, n_boot, seed): the agreement of each is pinned
CASES = [("sample_level", "spearman", 200, 0), ("sample_level", "kendall", 100, 3),
         ("sample_level", "pearson", 100, 1), ("dataset_level", "spearman", 60, 0),
         ("system_level", "pearson", 60, 2), ("system_level", "kendall", 40, 0)]


def outputs(db) -> dict:
    a, b = build(db)
    out = {"a_b": compare_runs(db, a, b, n_boot=200, seed=0),
           "b_a": compare_runs(db, b, a, n_boot=0)}
    for level, coef, n_boot, seed in CASES:
        out[f"agreement {level} {coef}"] = compare_runs(
            db, a, b, level=level, coef=coef, n_boot=n_boot, seed=seed)["agreement"]
    return out


def test_compare_output_is_pinned(db):
    got = json.loads(json.dumps(outputs(db)))  # as the CLI's --json prints it
    if os.environ.get("CHECKEVAL_PIN_COMPARE"):
        PINNED.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(PINNED.read_text(encoding="utf-8"))
    same_pinned(got, want)
    # what the fixture is there to exercise
    a_b = want["a_b"]
    assert max(len(q["items"]) for q in a_b["flipped"]) == 20
    assert a_b["n_questions_shared"] == 6 and a_b["agreement"]["reason"] is None
    assert any(r["human"] is None for r in a_b["items"])
