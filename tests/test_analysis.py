"""Analysis of runs: the CLI's JSON shape, agreement across judges, diagnostics, review."""

import json
import math

import pytest

from checkeval_core.analysis.diagnostics import MIN_FLAG_GROUPS, question_diagnostics
from checkeval_core.analysis.report import analyze_runs
from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.review import decide, send_to_review, undo_send_to_review
from tests.helpers import fake_demo_runs, run_cli

LEVEL_KEYS = {"spearman", "kendall", "pearson", "n"}


@pytest.fixture
def two_runs(db):
    return fake_demo_runs(db, 32)


def test_analyze_runs_shape_and_agreement(db, two_runs):
    rep = analyze_runs(db, two_runs, n_boot=20)
    assert set(rep) == {"runs", "agreement", "stability", "split", "coverage"}
    assert rep["split"]["which"] == "all" and rep["split"]["defined"] is False
    r = rep["runs"][str(two_runs[0])]
    assert set(r["dimensions"]) == {"coherence", "consistency", "fluency", "relevance"}
    for level in ("sample_level", "dataset_level", "system_level"):
        assert LEVEL_KEYS <= set(r["dimensions"]["coherence"][level])
        assert LEVEL_KEYS <= set(r["average"][level])
    assert r["dimensions"]["coherence"]["sample_level"]["n"] == 2  # two documents
    assert r["dimensions"]["coherence"]["dataset_level"]["n"] == 32
    ag = rep["agreement"]
    assert ag["n_units"] == 32 * 122 and -1 <= ag["fleiss_kappa"] <= 1
    assert str(two_runs[0]) + "-" + str(two_runs[1]) in ag["pairwise_cohen"]
    assert set(rep["stability"]) == {"rocketeval", "checkeval"}
    one = analyze_runs(db, two_runs[:1], n_boot=0)["agreement"]
    assert math.isnan(one["krippendorff_alpha"])  # one judge: documented NaN, no exception


def test_no_flag_from_fewer_groups_than_the_minimum(db, two_runs):
    # 32 items = 2 documents: the signs are listed, never raised as flags
    diag = question_diagnostics(db, two_runs)
    assert len(diag) == 122
    d = diag[0]
    assert {"yes_rate", "discrimination", "judge_agreement", "invalid_rate", "flags", "n_items",
            "n_groups"} <= set(d)
    assert {x["n_groups"] for x in diag} == {2} and {x["n_items"] for x in diag} == {32}
    assert not [x for x in diag if x["flags"]]
    weak = [x for x in diag if x["weak_signs"]]
    assert weak  # the fake judge never says yes to some questions
    assert weak[0]["flag_note"] == (f"not flagged: answers on 2 group(s), fewer than the "
                                    f"{MIN_FLAG_GROUPS} a flag needs")


def test_send_to_review_is_one_transaction_and_can_be_undone(db):
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.store import db_path

    ids = fake_demo_runs(db, 16 * MIN_FLAG_GROUPS)  # exactly the minimum of documents
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=16)
    execute_run(db_path(db), rid)
    flagged = [x["question_id"] for x in question_diagnostics(db, ids) if x["flags"]]
    assert len(flagged) >= 3
    before = {q["id"]: (q["status"], q["reason"]) for q in questions(db, "summeval-demo")}
    # a question a reviewer rejected is not resurrected; a missing id is reported, not fatal
    decide(db, [flagged[2]], "rev", "reject", "vague")
    res = send_to_review(db, [flagged[0], flagged[1], flagged[2], 999999], "test")
    assert res["moved"] == flagged[:2]
    assert set(res["skipped"]) == {flagged[2], 999999}
    st = {q["id"]: q for q in questions(db, "summeval-demo")}
    assert all(st[q]["status"] == "proposed" for q in flagged[:2])
    assert st[flagged[0]]["reason"] == "diagnostics: test"
    # pressing twice moves nothing more
    assert send_to_review(db, flagged[:2], "test")["moved"] == []
    # undo restores status and reason, except where a reviewer decided since
    decide(db, [flagged[1]], "rev", "keep")
    undo = undo_send_to_review(db, res)
    assert undo == {"restored": [flagged[0]], "kept_decision": [flagged[1]]}
    st = {q["id"]: q for q in questions(db, "summeval-demo")}
    assert (st[flagged[0]]["status"], st[flagged[0]]["reason"]) == before[flagged[0]]
    assert st[flagged[1]]["status"] == "kept"
    assert undo_send_to_review(db, res)["restored"] == []  # twice: harmless
    # one transaction: a failure half-way leaves every question as it was
    db.execute("CREATE TRIGGER boom BEFORE UPDATE OF status ON question WHEN NEW.id = "
               f"{flagged[1]} BEGIN SELECT RAISE(ABORT, 'boom'); END")
    with pytest.raises(Exception, match="boom"):
        send_to_review(db, [flagged[0], flagged[1]], "test")
    assert {q["id"]: q["status"] for q in questions(db, "summeval-demo")}[flagged[0]] == "kept"


def test_cli_analyze_json(tmp_path):
    dbf = tmp_path / "c.db"
    base = ["--db", str(dbf)]
    run_cli([*base, "demo"], check=True)
    r = run_cli([*base, "run", "--task", "topical-chat-demo", "--judge", "fake",
                 "--method", "geval", "--json", "--quiet"])
    rid = json.loads(r.stdout)["run"]
    out = json.loads(run_cli([*base, "analyze", "--run", str(rid), "--bootstrap", "10",
                              "--json"],
                             check=True).stdout)
    dims = out["runs"][str(rid)]["dimensions"]
    assert set(dims) == {"coherence", "engagingness", "groundedness", "naturalness"}
    assert dims["coherence"]["support"] == {"n_items": 72, "n_groups": 12, "n_systems": 6}
    assert out["coverage"]["runs"][str(rid)]["n_items"] == 72
    assert dims["coherence"]["dataset_level"]["n"] == 72
    metric = tmp_path / "m.csv"
    metric.write_text("item_id,coherence\n" + "".join(f"tc-{i:03d},{i % 5}\n" for i in range(72)))
    r = run_cli([*base, "analyze", "--task", "topical-chat-demo", "--metric-file",
                 str(metric), "--bootstrap", "0", "--json"])
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert set(m) == {"dimensions", "average", "support"}
    assert m["support"] == {"n_items": 72, "n_groups": 12, "n_systems": 6}
    assert LEVEL_KEYS <= set(m["dimensions"]["coherence"]["sample_level"])
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,coherence\nnope,1\n")
    r = run_cli([*base, "analyze", "--task", "topical-chat-demo", "--metric-file",
                 str(bad), "--json"])
    assert r.returncode == 2 and "bad.csv, line 2, field 'item_id'" in r.stderr


@pytest.mark.usefixtures("few_groups_allowed")
def test_reasons_sit_next_to_every_nan():
    import pandas as pd

    from checkeval_core.analysis.frames import correlation_report
    from checkeval_core.analysis.notes import (
        correlation_chart_note,
        format_ci,
        stability_note,
    )
    from checkeval_core.analysis.report import stability
    from checkeval_core.stats.significance import wilcoxon_bh

    # one document of four items: a sample-level value, but no interval
    one_doc = pd.DataFrame({"group": ["d"] * 4, "system": list("abcd"), "dimension": "x",
                            "metric": [0.1, 0.4, 0.2, 0.9], "human": [1, 3, 2, 4]})
    rep = correlation_report(one_doc, n_boot=20)
    e = rep["dimensions"]["x"]["sample_level"]
    assert e["spearman"] == 1.0 and e["reasons"]["spearman"] is None
    assert format_ci(e, "spearman") == ("no interval: needs ≥ 2 groups (documents / contexts / "
                                        "queries) (n=1)")
    # a judge that gives every item the same score: no value, and it says so
    flat = one_doc.assign(metric=0.5, group=["d", "d", "e", "e"])
    d = correlation_report(flat, n_boot=20)["dimensions"]["x"]
    assert d["dataset_level"]["reasons"]["kendall"].startswith(
        "the judge gave every item the same score (0.5)")
    assert d["sample_level"]["reasons"]["spearman"] == (
        "within every document the judge or the human scores are constant (2 of 2 "
        "document(s) skipped)")
    per_run = {"1": {"method": "m", "label": "#1", **correlation_report(flat, n_boot=0)}}
    note = correlation_chart_note(per_run, "dataset_level", "spearman")
    assert note.startswith("No spearman correlation to draw at dataset level (n = 4 items): x: "
                           "the judge gave every item the same score")
    assert correlation_chart_note({"1": {"method": "m", **rep}}, "sample_level",
                                  "spearman") is None
    # stability and significance: one run of a method, one judge
    st = stability({"1": {"method": "m", **rep}})
    assert math.isnan(st["m"]["variance"]) and "needs ≥ 2 runs" in st["m"]["reason"]
    assert "(selected: m ×1)" in stability_note({"1": {"method": "m", **rep}})
    sig = wilcoxon_bh({"a vs b": ([0.1], [0.2])})
    assert sig["a vs b"]["reason"] == "needs ≥ 2 judges run with both methods (n=1)"


def test_agreement_with_a_constant_judge(db, two_runs):
    a, b = two_runs
    db.execute("UPDATE answer SET verdict = 'yes' WHERE run_id = ?", [b])
    ag = analyze_runs(db, two_runs, n_boot=0)["agreement"]
    pair = ag["pairwise"][f"{a}-{b}"]
    yes_a = db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ? AND verdict = 'yes'",
                       [a]).fetchone()[0]
    assert math.isnan(pair["kappa"]) and pair["agree"] == yes_a and pair["n"] == ag["n_units"]
    assert pair["reason"].startswith(f"a judge answered the same everywhere (#{b} always "
                                     "'yes'): κ undefined (it would be 0")
    assert "pulled towards 0" in ag["reasons"]["krippendorff_alpha"]
    one = analyze_runs(db, [a], n_boot=0)["agreement"]
    assert one["reasons"]["fleiss_kappa"].startswith("needs ≥ 2 runs (judges); 1 selected")


def test_analyze_runs_on_shared_items(db, db_path):
    from checkeval_core.demo import load_demo
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.store import db_path as path_of

    load_demo(db)
    ids = []
    for limit in (16, 3):
        ids.append(create_run(db, "summeval-demo", "fake", "rocketeval", limit=limit))
        execute_run(path_of(db), ids[-1])
    own = analyze_runs(db, ids, n_boot=0)
    assert own["runs"][str(ids[0])]["support"]["n_items"] == 16
    assert "the values are not comparable" in own["coverage"]["note"]
    r = run_cli(["--db", str(db_path), "analyze", "--run", str(ids[0]), "--run", str(ids[1]),
                 "--shared-items", "--bootstrap", "0", "--json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {out["runs"][str(i)]["support"]["n_items"] for i in ids} == {3}
    assert out["coverage"]["shared"] and out["coverage"]["n_shared_items"] == 3
    assert out["agreement"]["support"]["n_items"] == 3
