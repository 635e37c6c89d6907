"""``bench quality --benchmark alpacaeval | mtbench_pairs | llmbar_natural`` on tiny fake cases:
the figures are those of the stored runs, reruns reuse them, bad options touch nothing."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from checkeval_core.bench.quality import (
    EMPTY_ANSWER,
    _alpaca_rows,
    bench_rankings,
    format_rankings,
)
from checkeval_core.store import open_db
from tests.helpers import FIXTURES, SHARED_BENCH

# The benchmark folder when it is on this machine, else a committed subset of it: the first 3
# AlpacaEval queries plus the 2 where gemma-2b-it answered nothing, and 6 LLMBar pairs
# (tests/fixtures/README.md).
SHARED = SHARED_BENCH  # the benchmarks beside the repository (tests/helpers.py)
FULL = (SHARED / "alpacaeval").exists()
SRC = SHARED if FULL else FIXTURES / "benchmarks"
N_QUERIES = 50 if FULL else 5


def test_alpacaeval_list_level_author_checklists(tmp_path):
    f = tmp_path / "b.db"
    res = bench_rankings("alpacaeval", SRC, "fake", queries=3, checklist="author", db_file=f)
    (r,) = res["runs"]
    assert r["n_answers"] > 0 and res["task"] == "alpacaeval-3-author"
    db = open_db(f)
    # one checklist per query, from the author file, shared by the 12 models' answers
    ck = [json.loads(x) for x in (SRC / "alpacaeval" / "checklists_author.jsonl")
          .read_text("utf-8").splitlines()]
    groups = [g for (g,) in db.execute("SELECT DISTINCT group_id FROM item")]
    assert len(groups) == 3
    want = sum(len(c["questions"]) for c in ck if c["instruction_id"] in groups) * 12
    assert r["n_answers"] == want
    # ρ recomputed from the stored scores: system = mean over queries of mean p(Yes)
    models = {m["system_id"]: m["arena_elo"] for m in json.loads(
        (SRC / "alpacaeval" / "models.json").read_text("utf-8")) if m["split"] == "test"}
    per = {}
    for s, v in db.execute("SELECT i.system_id, AVG(a.p_yes) FROM answer a JOIN item i ON "
                           "i.id = a.item_id WHERE a.run_id = ? GROUP BY a.item_id",
                           [r["run"]]):
        per.setdefault(s, []).append(v)
    systems = sorted(models)
    rho = stats.spearmanr([np.mean(per[s]) for s in systems], [models[s] for s in systems])[0]
    assert r["aggregation"] == "mean_p_yes" and r["spearman"] == pytest.approx(rho)
    lc = res["baselines"]["alpacaeval2_lc_winrate (805 queries)"]
    assert lc["spearman"] == pytest.approx(0.979, abs=5e-4)  # the README's figure
    assert "spearman" in format_rankings(res)
    # a rerun reuses the task, the checklist and the finished run
    again = bench_rankings("alpacaeval", SRC, "fake", queries=3, checklist="author", db_file=f)
    assert again["runs"][0]["run"] == r["run"] and again["runs"][0]["spearman"] == r["spearman"]
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 1


def test_alpacaeval_generated_and_fixed_checklists(tmp_path):
    f = tmp_path / "b.db"
    gen = bench_rankings("alpacaeval", SRC, "fake", queries=2, checklist="generated_ref",
                         checklist_judge="fake", db_file=f)
    fixed = bench_rankings("alpacaeval", SRC, "fake", queries=2, checklist="fixed", db_file=f)
    assert gen["task"] == "alpacaeval-2-generated_ref-fake"
    db = open_db(f)
    pv = {r[0] for r in db.execute("SELECT q.prompt_version FROM question q JOIN task t ON "
                                   "t.id = q.task_id WHERE t.name = ?", [gen["task"]])}
    assert pv == {"instance-v2+reference"}
    assert fixed["runs"][0]["n_answers"] == 2 * 12 * 6
    # single mode: its own task (the list-mode one is kept), one question per generation
    one = bench_rankings("alpacaeval", SRC, "fake", queries=2, checklist="generated",
                         checklist_judge="fake", checklist_mode="single", db_file=f)
    assert one["task"] == "alpacaeval-2-generated-fake-single"
    assert one["checklist_mode"] == "single" and gen["checklist_mode"] == "list"
    pv = [r[0] for r in db.execute("SELECT q.prompt_version FROM question q JOIN task t ON "
                                   "t.id = q.task_id WHERE t.name = ?", [one["task"]])]
    assert set(pv) == {"instance-single-v1"} and len(pv) >= 2 * 5


def test_alpacaeval_all_queries_every_answer_judged():
    """All queries (50, or the subset's 5) × 12 test models: the two answers gemma-2b-it left
    empty are judged as an explicit empty answer (the importer refuses an empty output;
    dropping them would rank the model on its other queries only)."""
    items, models, author = _alpaca_rows(SRC, N_QUERIES)
    assert len(models) == 12 and len(author) == N_QUERIES and len(items) == N_QUERIES * 12
    empty = [i["id"] for i in items if i["output"] == EMPTY_ANSWER]
    assert empty == ["ae409:gemma-2b-it", "ae708:gemma-2b-it"]
    assert all(i["output"].strip() for i in items)


def test_pairwise_accuracy_and_length_baseline(tmp_path):
    f = tmp_path / "b.db"
    res = bench_rankings("llmbar_natural", SRC, "fake", queries=6, checklist="generated",
                         checklist_judge="fake", db_file=f)
    (r,) = res["runs"]
    assert r["n_pairs"] == 6
    db = open_db(f)
    score = {pk: v for pk, v in db.execute("SELECT item_id, value FROM score WHERE run_id = ? "
                                           "AND aggregation = 'mean_p_yes'", [r["run"]])}
    right = ties = 0
    for a, b, w in db.execute("SELECT item_a, item_b, winner FROM preference"):
        d = score[a] - score[b]
        ties += abs(d) < 0.1
        right += abs(d) >= 0.1 and (d > 0) == (w == "a")
    assert r["accuracy"] == pytest.approx(right / 6) and r["tie_rate"] == pytest.approx(ties / 6)
    gold = [json.loads(x) for x in (SRC / "pairwise" / "llmbar_natural.jsonl")
            .read_text("utf-8").splitlines()[:6]]
    longer = sum((len(g["output_1"].split()) > len(g["output_2"].split())) == (g["label"] == 1)
                 for g in gold)
    assert res["baselines"]["length (longer wins)"]["accuracy"] == pytest.approx(longer / 6)


@pytest.mark.parametrize("kwargs, msg", [
    ({"benchmark": "mtbench_pairs", "checklist": "author"}, "no author-written"),
    ({"benchmark": "alpacaeval", "checklist": "best"}, "--checklist 'best'"),
    ({"benchmark": "alpacaeval", "queries": 0}, "--queries 0"),
    ({"benchmark": "alpacaeval", "checklist": "generated", "checklist_judge": "fake",
      "checklist_mode": "bulk"}, "--checklist-mode 'bulk'"),
])
def test_bad_options_refused_before_the_database(tmp_path, kwargs, msg):
    f = tmp_path / "b.db"
    with pytest.raises(ValueError, match=msg):
        bench_rankings(kwargs.pop("benchmark"), SRC, "fake", db_file=f, **kwargs)
    assert not f.exists()
