"""``compare_runs`` output pinned on a small random fixture (tests/fixtures/compare_pinned.json),
so a rewrite for speed cannot change a number: every level and coefficient, both directions,
SEAL units, invalid answers, Likert answers (question 0), items and answers only one run has,
a question with more flips than the listed 20, missing and constant human scores.

The pinned file was written by the implementation it guards. To rewrite it on purpose (a
deliberate change of output, said in the commit): ``CHECKEVAL_PIN_COMPARE=1 pytest
tests/test_compare_pinned.py``. Integers, strings and None must match exactly; floats to
1e-12 (so an upgrade of numpy/pandas that moves the last bit does not fail it)."""

from __future__ import annotations

import json
import math
import os
import random

import pytest

from checkeval_core.analysis.compare import compare_runs
from tests.helpers import FIXTURES

PINNED = FIXTURES / "compare_pinned.json"
NOW = "2026-01-01T00:00:00"
DIMS = ("coh", "flu")
# (level, coef, n_boot, seed): the agreement of each is pinned
CASES = [("sample_level", "spearman", 200, 0), ("sample_level", "kendall", 100, 3),
         ("sample_level", "pearson", 100, 1), ("dataset_level", "spearman", 60, 0),
         ("system_level", "pearson", 60, 2), ("system_level", "kendall", 40, 0)]


def build(db) -> tuple[int, int]:
    """Task ``t``: 8 groups × 5 systems, dimensions coh/flu with 3 questions each; runs A and
    B (share_yes) with random scores and answers."""
    rng = random.Random(7)
    c = db.conn
    c.execute("INSERT INTO task (name, kind, created_at) VALUES ('t', 'summarization', ?)", [NOW])
    for d in DIMS:
        c.execute("INSERT INTO dimension (task_id, name) VALUES (1, ?)", [d])
    for q in range(6):
        c.execute("INSERT INTO question (task_id, dimension_id, text, created_at) VALUES "
                  "(1, ?, ?, ?)", [q // 3 + 1, f"Question {q + 1}?", NOW])
    items = [(g, s) for g in range(8) for s in range(5)]
    for pos, (g, s) in enumerate(items):
        c.execute("INSERT INTO item (task_id, item_id, group_id, system_id, output, position) "
                  "VALUES (1, ?, ?, ?, 'x', ?)", [f"g{g}-s{s}", f"g{g}", f"s{s}", pos])
    for pk, (g, _s) in enumerate(items, 1):
        for d in DIMS:
            if pk % 7 == 3:
                continue  # no human score
            h = 3.0 if (g == 7 and d == "coh") else float(rng.randint(1, 5))
            c.execute("INSERT INTO human_score (item_id, dimension, value) VALUES (?, ?, ?)",
                      [pk, d, h])
    runs = []
    for r in range(2):
        c.execute("INSERT INTO run (task_id, judge_spec, method, params, status, created_at) "
                  "VALUES (1, ?, 'checkeval', '{\"aggregation\": \"share_yes\"}', 'completed', ?)",
                  [f"judge-{r}", NOW])
        runs.append(c.execute("SELECT max(id) FROM run").fetchone()[0])
    a, b = runs
    for pk in range(1, len(items) + 1):
        for d in DIMS:
            for rid in runs:
                if rid == b and pk in (1, 2):
                    continue  # items only run A scored
                v = None if (pk % 11 == 5 and rid == b) else rng.randint(0, 4) / 4
                c.execute("INSERT INTO score (run_id, item_id, dimension, aggregation, value) "
                          "VALUES (?, ?, ?, 'share_yes', ?)", [rid, pk, d, v])
    ans = []
    for rid in runs:
        for pk in range(1, len(items) + 1):
            ans.append((rid, pk, 0, "", "coh", rng.choice(["yes", "no"])))  # Likert: no decision
            for q in range(1, 7):
                if rid == b and q == 6 and pk <= 10:
                    continue  # answered by A only
                units = ["u1", "u2"] if q == 3 else [""]
                for u in units:
                    v = rng.choices(["yes", "no", "invalid"], [0.45, 0.45, 0.1])[0]
                    ans.append((rid, pk, q, u, DIMS[(q - 1) // 3], v))
    # question 2: B mostly contradicts A (more flips than MAX_FLIPPED_ITEMS)
    first = {(pk, q, u): v for rid, pk, q, u, _, v in ans if rid == a}
    ans = [(rid, pk, q, u, d, ({"yes": "no", "no": "yes"}.get(first[(pk, q, u)], v)
                               if rid == b and q == 2 and pk % 9 else v))
           for rid, pk, q, u, d, v in ans]
    c.executemany("INSERT INTO answer (run_id, item_id, question_id, unit, dimension, verdict, "
                  "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", [(*x, NOW) for x in ans])
    c.commit()
    return a, b


def outputs(db) -> dict:
    a, b = build(db)
    out = {"a_b": compare_runs(db, a, b, n_boot=200, seed=0),
           "b_a": compare_runs(db, b, a, n_boot=0)}
    for level, coef, n_boot, seed in CASES:
        out[f"agreement {level} {coef}"] = compare_runs(
            db, a, b, level=level, coef=coef, n_boot=n_boot, seed=seed)["agreement"]
    return out


def same(got, want, where: str = "") -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for k in want:
            same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{where}[{i}]")
    elif isinstance(want, float) and not isinstance(got, bool) and isinstance(got, int | float):
        if math.isnan(want):
            assert isinstance(got, float) and math.isnan(got), where
        else:
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12), where
    else:
        assert type(got) is type(want) and got == want, where


def test_compare_output_is_pinned(db):
    got = json.loads(json.dumps(outputs(db)))  # as the CLI's --json prints it
    if os.environ.get("CHECKEVAL_PIN_COMPARE"):
        PINNED.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(PINNED.read_text(encoding="utf-8"))
    same(got, want)
    # what the fixture is there to exercise
    a_b = want["a_b"]
    assert max(len(q["items"]) for q in a_b["flipped"]) == 20
    assert a_b["n_questions_shared"] == 6 and a_b["agreement"]["reason"] is None
    assert any(r["human"] is None for r in a_b["items"])
