"""``checkeval bench heldout``: a proposal chosen on one fixed half of a benchmark subset and
reported on the other half, with the fake judge on small subsets. The held-out figures are
recomputed by hand; held-out human scores never move what is chosen; a split named group by
group; one question asked of every query (RocketEval's fixed list) is one question."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from checkeval_core import task_split as S
from checkeval_core.analysis import proposal as P
from checkeval_core.analysis.frames import run_frame
from checkeval_core.analysis.proposal.evidence import load_evidence, question_ref, shared_columns
from checkeval_core.analysis.proposal.figures import STATISTIC
from checkeval_core.bench.heldout import bench_heldout
from checkeval_core.checklists.review import to_review
from checkeval_core.config import data_dir
from checkeval_core.store import open_db
from tests.helpers import FIXTURES, SHARED_BENCH, build_proposal_task, run_cli

SHARED = SHARED_BENCH  # the benchmarks beside the repository (tests/helpers.py)
FULL = (SHARED / "alpacaeval").exists()
SRC = SHARED if FULL else FIXTURES / "benchmarks"


@pytest.fixture(scope="module")
def summeval_folder(tmp_path_factory):
    """A SummEval-shaped folder from the bundled demo's 12 documents (with references)."""
    src = tmp_path_factory.mktemp("bench")
    (src / "checklists").mkdir()
    rows = [json.loads(x) for x in (data_dir() / "summeval_demo.jsonl").read_text().splitlines()]
    (src / "summeval.jsonl").write_text("".join(json.dumps(
        {"doc_id": r["group_id"], "system_id": r["system_id"], "source": r["source"],
         "references": [r["reference"]], "output": r["output"], "scores": r["scores"]}) + "\n"
        for r in rows))
    (src / "checklists" / "summeval.json").write_text(
        (data_dir() / "checklists" / "summeval.json").read_text())
    return src


def _by_hand(df, groups) -> float:
    """Sample-level Spearman per (document, dimension), mean over documents, then dimensions."""
    per_dim = []
    for _, d in df[df["group"].isin(groups)].groupby("dimension"):
        vals = []
        for _, g in d.groupby("group"):
            if g["metric"].nunique() > 1 and g["human"].nunique() > 1:
                vals.append(stats.spearmanr(g["metric"], g["human"])[0])
        per_dim.append(np.mean(vals))
    return float(np.mean(per_dim))


@pytest.mark.usefixtures("few_groups_allowed")
def test_summeval_halves_figures_by_hand_and_split_discipline(summeval_folder, tmp_path):
    db_file = tmp_path / "b.db"
    res = bench_heldout("summeval", summeval_folder, "fake", docs=6, db_file=db_file, n_boot=50)
    docs = list(dict.fromkeys(json.loads(x)["doc_id"] for x in
                              (summeval_folder / "summeval.jsonl").read_text().splitlines()))[:6]
    assert [(d["dev_groups"], d["heldout_groups"]) for d in res["directions"]] == [(3, 3), (3, 3)]
    db = open_db(db_file)
    df, _ = run_frame(db, res["run"], "mean_p_yes")
    first, second = res["directions"]
    for d, held in ((first, docs[3:]), (second, docs[:3])):
        rows = {r["name"]: r for r in d["rows"]}
        unrevised = rows["unrevised checklist (mean p(Yes))"]
        # with every question kept, the proposal's score is the run's mean_p_yes
        assert unrevised["value"] == pytest.approx(_by_hand(df, held))
        assert unrevised["n_groups"] == 3 and unrevised["n_items"] == 48
        length = df.assign(metric=df["item_id"].map(
            {json.loads(x)["doc_id"] + "-" + json.loads(x)["system_id"]:
             len(json.loads(x)["output"].split()) for x in
             (summeval_folder / "summeval.jsonl").read_text().splitlines()}))
        assert rows["baseline: answer length (words)"]["value"] == pytest.approx(
            _by_hand(length, held))
        assert rows["baseline: answer length (words)"]["delta"] == pytest.approx(
            rows["baseline: answer length (words)"]["value"] - unrevised["value"])
        assert "baseline: ROUGE-1 F1" in rows
        assert "proposal: selection" in rows and "aggregation: calibrated" in rows
        lo, hi = rows["proposal: selection"]["ci"]
        assert lo <= rows["proposal: selection"]["value"] <= hi
    # the second direction's split is the one left stored: named, not hashed
    sp = S.get_split(db, res["task"])
    assert sp["explicit"] and sorted(sp["heldout"]) == sorted(docs[:3])
    assert sorted(sp["dev"]) == sorted(docs[3:])

    # held-out human scores changed: what is chosen (and every dev figure) stays the same
    held_items = [pk for (pk,) in db.execute(
        "SELECT id FROM item WHERE task_id = (SELECT id FROM task WHERE name = ?) AND group_id "
        "IN (?, ?, ?)", [res["task"], *docs[3:]])]
    db.execute(f"UPDATE human_score SET value = 6 - value WHERE item_id IN "
               f"({','.join('?' * len(held_items))})", held_items)
    db.conn.commit()
    again = bench_heldout("summeval", summeval_folder, "fake", docs=6, db_file=db_file, n_boot=50)
    a, b = res["directions"][0]["proposal"], again["directions"][0]["proposal"]
    for label in a:
        assert a[label]["dropped_questions"] == b[label]["dropped_questions"]
        assert a[label]["weights"] == b[label]["weights"]
        assert a[label]["dev"]["after"] == pytest.approx(b[label]["dev"]["after"])
    before = {r["name"]: r["value"] for r in res["directions"][0]["rows"]}
    after = {r["name"]: r["value"] for r in again["directions"][0]["rows"]}
    assert after["unrevised checklist (mean p(Yes))"] == pytest.approx(
        -before["unrevised checklist (mean p(Yes))"])


@pytest.mark.usefixtures("few_groups_allowed")
def test_alpacaeval_ranking_setting_train_models_fit_test_models_ranked(tmp_path):
    res = bench_heldout("alpacaeval", SRC, "fake", queries=3, db_file=tmp_path / "a.db",
                        n_boot=50)
    models = json.loads((SRC / "alpacaeval" / "models.json").read_text())
    test = sorted(m["system_id"] for m in models if m["split"] == "test")
    (d,) = res["directions"]
    assert sorted(d["heldout_systems"]) == test
    rows = {r["name"]: r for r in d["rows"]}
    assert all(r["n_systems"] == 12 and r["n_groups"] == 3 for r in rows.values())
    # the reference row ranks by each test model's LC win rate: its Spearman, by hand
    lc = {m["system_id"]: m["alpacaeval2_lc_winrate"] for m in models}
    elo = {m["system_id"]: m["arena_elo"] for m in models}
    ref = rows["reference: AlpacaEval 2 LC win rate (all 805 queries)"]
    assert ref["value"] == pytest.approx(stats.spearmanr([lc[s] for s in test],
                                                         [elo[s] for s in test])[0])
    # per-query weights fitted on the train models' answers (labels: their Elo)
    assert "proposal: selection + weights" in rows
    wts = d["proposal"]["proposal: selection + weights"]["weights"]
    assert wts and min(wts.values()) >= 0
    db = open_db(res["db"])
    assert S.get_split(db, res["task"])["systems"]["dev"] == sorted(set(elo) - set(test))


def test_fixed_questions_asked_of_every_query_are_one_question(tmp_path):
    """MT-Bench pairs with RocketEval's six fixed questions: a copy per query, one column per
    question; a choice made on dev queries applies to held-out ones; review queues every
    copy of a dropped question."""
    res = bench_heldout("mtbench_pairs", SRC, "fake", queries=12, db_file=tmp_path / "m.db",
                        n_boot=50)
    first, second = res["directions"]
    assert (first["dev_groups"], first["heldout_groups"]) == (6, 6)
    names = [r["name"] for r in first["rows"]]
    assert names[:5] == ["unrevised checklist (mean p(Yes))", "proposal: selection",
                         "proposal: selection + weights",
                         "unrevised checklist (mean p(Yes)), no tie margin",
                         "proposal: selection, no tie margin"]
    assert "tie_rate" in first
    db = open_db(res["db"])
    ev = load_evidence(db, [res["run"]])
    assert len(ev.questions) == 6
    assert all(len(q["ids"]) == 12 and q["group_id"] == "" for q in ev.questions)
    # every answer sits in its own query's copy: one value per item and question
    assert (ev.answered <= 1).all() and (ev.answered.sum(1) == 6).all()
    dropped = {"task": res["task"], "dropped": [{"question": question_ref(ev, 0), "rule": "test",
                                                 "reason": "test"}]}
    out = to_review(db, dropped)
    assert out["queued"] == 12
    assert db.execute("SELECT COUNT(*) FROM question WHERE status = 'proposed' AND text = ?",
                      [ev.questions[0]["text"]]).fetchone()[0] == 12


def test_shared_columns_keeps_distinct_and_single_query_questions_apart():
    qs = [{"id": 1, "text": "A?", "dimension": "d", "group_id": "g1", "sub": ""},
          {"id": 2, "text": "A?", "dimension": "d", "group_id": "g2", "sub": ""},
          {"id": 3, "text": "A?", "dimension": "e", "group_id": "g1", "sub": ""},
          {"id": 4, "text": "B?", "dimension": "d", "group_id": "g1", "sub": ""},
          {"id": 5, "text": "C?", "dimension": "d", "group_id": "", "sub": ""}]
    cols = shared_columns(qs)
    assert [(c["id"], c["ids"], c["group_id"]) for c in cols] == [
        (1, [1, 2], ""), (3, [3], "g1"), (4, [4], "g1"), (5, [5], "")]


def test_explicit_split_names_its_parts_and_refuses_bad_keys(db):
    build_proposal_task(db)
    groups = [f"g{i}" for i in range(8)]
    sp = S.set_explicit_split(db, "pt", ["g6", "g7"])
    assert sp["explicit"] and sp["heldout"] == ["g6", "g7"] and sp["dev"] == groups[:6]
    assert sp["heldout_share"] == pytest.approx(0.25) and sp["systems"] is None
    with pytest.raises(S.SplitError, match="no group 'g9'"):
        S.set_explicit_split(db, "pt", ["g9"])
    with pytest.raises(S.SplitError, match="each part"):
        S.set_explicit_split(db, "pt", groups)
    with pytest.raises(S.SplitError, match="no system 'zz'"):
        S.set_explicit_split(db, "pt", [], ["zz"])
    assert S.get_split(db, "pt")["heldout"] == ["g6", "g7"]  # a refusal changes nothing
    sp = S.set_explicit_split(db, "pt", [], ["s4"])
    assert sp["systems"]["heldout"] == ["s4"] and sp["heldout"] == []
    # a hashed split afterwards is made afresh
    sp = S.set_split(db, "pt", 0.5, seed=0, by_system=False)
    assert not sp["explicit"] and len(sp["heldout"]) == 4


def test_cli_json_and_refusals(tmp_path):
    r = run_cli(["bench", "heldout", "--benchmark", "mtbench_pairs", "--data", str(SRC),
                 "--judge", "fake", "--queries", "12", "--db", str(tmp_path / "c.db"),
                 "--bootstrap", "20", "--json"])
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["statistic"] == STATISTIC["preferences"] and len(res["directions"]) == 2
    row = res["directions"][0]["rows"][0]
    assert {"value", "ci", "delta", "delta_ci", "n_items", "n_groups", "n_systems"} <= set(row)
    shown = run_cli(["split", "--task", res["task"], "--show", "--db", str(tmp_path / "c.db")])
    assert f"{res['task']}: named group by group, held-out share 0.5" in shown.stdout
    text = run_cli(r.args[:-1])
    assert text.returncode == 0 and "| unrevised checklist (mean p(Yes)) |" in text.stdout
    bad = run_cli(["bench", "heldout", "--benchmark", "nope", "--judge", "fake",
                   "--db", str(tmp_path / "d.db")])
    assert bad.returncode == 2 and "summeval, topical_chat, alpacaeval, mtbench_pairs" in \
        bad.stderr
    few = run_cli(["bench", "heldout", "--benchmark", "summeval", "--docs", "2", "--judge",
                   "fake", "--data", str(SRC), "--db", str(tmp_path / "d.db")])
    assert few.returncode == 2 and "≥ 4 documents" in few.stderr
    assert not (tmp_path / "d.db").exists()
    assert not math.isnan(row["value"])


def test_new_questions_for_a_fixed_list_go_to_their_query(tmp_path):
    """The six fixed questions asked of every AlpacaEval query, a split by model: a new
    question is written for the query whose dev answers the kept ones order wrongly, and
    costs that query's answers only."""
    from checkeval_core.bench.quality import bench_rankings

    res = bench_rankings("alpacaeval", SRC, "fake", queries=3, checklist="fixed",
                         db_file=tmp_path / "f.db", models="all")
    db = open_db(res["db"])
    models = json.loads((SRC / "alpacaeval" / "models.json").read_text())
    S.set_explicit_split(db, res["task"], [], [m["system_id"] for m in models
                                               if m["split"] == "test"])
    rid = res["runs"][0]["run"]
    ev = load_evidence(db, [rid])
    assert len(ev.questions) == 6 and all(len(q["ids"]) == 3 for q in ev.questions)
    out = P.propose(db, [rid], n_boot=0, new_questions=2, judge="fake")
    plan = out["new_questions"]
    assert plan["n"] >= 1 and plan["judge_calls"] == 22 * plan["n"]
    for q, src in zip(plan["questions"], plan["sources"]):
        assert q["group_id"] == src["group"]


def test_text_table_shows_undefined_figures_as_dashes():
    """A figure without a value or interval (NaN, None after JSON) prints as a dash."""
    from checkeval_core.bench.heldout import format_heldout

    row = {"name": "proposal: selection", "value": None, "ci": [None, None], "delta": None,
           "delta_ci": [float("nan"), float("nan")], "n_items": 4, "n_groups": 1,
           "n_systems": 4, "note": "", "ci_reason": "no interval: needs ≥ 2 groups (n=1)"}
    res = {"benchmark": "summeval", "judge": "fake", "run": 1, "statistic": "ρ", "n_boot": 0,
           "directions": [{"name": "d", "rows": [row], "proposal": {}}]}
    text = format_heldout(res)
    assert "| proposal: selection | — | — | 4 · 1 · 4 | no interval: needs ≥ 2 groups (n=1) |" \
        in text
