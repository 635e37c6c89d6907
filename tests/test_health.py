"""Judge health (``checkeval_core.analysis.health``): every metric on a tiny hand-built run,
the thresholds' warnings, ``analyze --json``'s ``health``, the Traces filter for
never-varying questions and the warning box on Analysis and Rankings."""

from __future__ import annotations

import json
import math

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.analysis import health as H
from checkeval_core.runs.never_varying import run_never_varying
from checkeval_core.runs.traces import SHOW_FILTERS, decision_rows, item_trace
from tests.conftest import APP
from tests.helpers import COMPARE_ITEMS as ITEMS
from tests.helpers import cli
from tests.helpers import compare_run as make_run
from tests.helpers import compare_task as make_task

# outputs of 1..6 words (g1-s1 … g2-s3)
OUTPUTS = {item: " ".join(["w"] * (k + 1)) for k, item in enumerate(ITEMS)}
SCORES = {"g1": [0.5, 0.5, 0.5], "g2": [0.2, 0.4, 0.9]}
# q1 Yes on all 6 items (never varies); q2 Yes, Yes, Yes, No, No, invalid
ANSWERS = {**{(i, 0): "yes" for i in ITEMS}, **{(i, 1): "yes" for i in ITEMS[:3]},
           ("g2-s1", 1): "no", ("g2-s2", 1): "no", ("g2-s3", 1): "invalid"}


@pytest.fixture
def task(db):
    return db, make_task(db, outputs=OUTPUTS)


def codes(h):
    return {w["code"] for w in h["warnings"]}


@pytest.mark.usefixtures("few_groups_allowed")
def test_answer_metrics_by_hand(task):
    db, tid = task
    h = H.run_health(db, make_run(db, tid, SCORES, ANSWERS), tie_margin=0.1)
    assert h["n_answers"] == 12
    assert h["invalid_share"] == pytest.approx(1 / 12)      # > 5 %: warned
    assert h["yes_share"] == pytest.approx(9 / 11)          # Yes among 11 valid answers
    nv = h["never_varying"]
    assert (nv["n"], nv["n_questions"]) == (1, 2)           # q1 only; q2 varies
    assert nv["questions"][0]["question"] == "Is it q1?" and nv["questions"][0]["verdict"] == "yes"
    assert codes(h) >= {"invalid", "never_varying"} and "yes_share" not in codes(h)
    assert any("8% of 12 answers are invalid" in w["message"] for w in h["warnings"])


@pytest.mark.usefixtures("few_groups_allowed")
def test_spread_length_and_ties_by_hand(task):
    db, tid = task
    h = H.run_health(db, make_run(db, tid, SCORES, ANSWERS), tie_margin=0.1)
    d = h["dimensions"]["d"]
    # g1 is constant (sd 0); g2 = 0.2, 0.4, 0.9: population sd √(0.26/3)
    assert d["within_group_sd"] == pytest.approx(math.sqrt(0.26 / 3) / 2)
    assert (d["constant_groups"], d["n_multi_groups"]) == (1, 2)  # 1 of 2: not > 0.5
    # sorted 0.2 0.4 0.5 0.5 0.5 0.9: Q1 = 0.4 + 0.25·0.1 = 0.425, Q3 = 0.5
    assert d["score_iqr"] == pytest.approx(0.075) and d["score_range"] == pytest.approx(0.7)
    # score ranks 4 4 4 1 2 6 against lengths 1..6: Σ products 0.5 / √(15.5 · 17.5)
    assert d["length_corr"]["spearman"] == pytest.approx(0.5 / math.sqrt(15.5 * 17.5))
    t = h["ties"]
    # g1: 3 matches, all |Δ| = 0 → ties; g2: |Δ| 0.2, 0.7, 0.5 → none at 0.1
    assert (t["n_matches"], t["n_ties"], t["share"]) == (6, 3, 0.5)
    assert t["margin_source"] == "given" and t["derived_margin"] == pytest.approx(0.2 * 0.075)
    assert t["share_at_derived"] == 0.5 and "ties" not in codes(h)  # 50 % is not above 50 %
    wide = H.run_health(db, h["run"], tie_margin=0.25)["ties"]  # g2's 0.2 gap ties too: 4/6
    assert wide["share"] == pytest.approx(4 / 6)
    warn = next(w for w in H.run_health(db, h["run"], tie_margin=0.25)["warnings"]
                if w["code"] == "ties")["message"]
    assert "4 of 6 matches (67%) are ties at the given margin 0.25" in warn
    assert "0.015) gives 50% ties" in warn
    auto = H.run_health(db, h["run"])["ties"]
    assert auto["margin_source"] == "derived" and auto["margin"] == pytest.approx(0.015)


@pytest.mark.usefixtures("few_groups_allowed")
def test_yes_share_length_and_constant_group_warnings(task):
    db, tid = task
    yes = {(i, q): "yes" for i in ITEMS for q in (0, 1)}
    # scores follow length exactly (ρ = 1); humans 1 2 3 1 2 3 give ρ = 8 / √(17.5 · 16)
    rid = make_run(db, tid, {"g1": [0.1, 0.2, 0.3], "g2": [0.4, 0.5, 0.6]}, yes)
    h = H.run_health(db, rid)
    d = h["dimensions"]["d"]
    assert d["length_corr"]["spearman"] == pytest.approx(1.0)
    assert d["human_corr"]["spearman"] == pytest.approx(8 / math.sqrt(17.5 * 16))
    msgs = {w["code"]: w["message"] for w in h["warnings"]}
    assert msgs["yes_share"].startswith("this judge says Yes to 100% of questions (12 answers)")
    assert "ρ = 1.00, n = 6 items" in msgs["length"] and "ρ = 0.48" in msgs["length"]
    flat = H.run_health(db, make_run(db, tid, {"g1": [0.5] * 3, "g2": [0.7] * 3}, yes))
    assert "in 2 of 2 groups every item gets the same score" in {
        w["code"]: w["message"] for w in flat["warnings"]}["constant_groups"]


@pytest.mark.usefixtures("few_groups_allowed")
def test_contexts_pick_their_warnings(task):
    db, tid = task
    rid = make_run(db, tid, SCORES, ANSWERS)
    hs = H.runs_health(db, [rid], tie_margin=0.25)
    an = H.health_warnings(hs, "analysis")
    rk = H.health_warnings(hs, "rankings")
    assert not any("ties at" in m for m in an) and any("ties at" in m for m in rk)
    # most undermining first: ties lead on Rankings, the invalid share on Analysis
    assert "ties at" in rk[0] and "invalid" in an[0] and len(rk) == 3
    with pytest.raises(ValueError):
        H.health_warnings(hs, "elsewhere")


def test_traces_filter_never_varying_questions(task):
    db, tid = task
    rid = make_run(db, tid, SCORES, ANSWERS)
    assert "never-varying questions" in SHOW_FILTERS
    pk = db.execute("SELECT id FROM item WHERE item_id = 'g1-s1'").fetchone()[0]
    trace = item_trace(db, pk, [rid])
    assert [r["question"] for r in decision_rows(trace)] == ["Is it q1?", "Is it q2?"]
    assert [r["question"] for r in decision_rows(trace, "never-varying questions", db=db)] == [
        "Is it q1?"]
    with pytest.raises(ValueError, match="pass db"):
        decision_rows(trace, "never-varying questions")


def test_analyze_json_has_health_per_run(task, db_path):
    db, tid = task
    rid = make_run(db, tid, SCORES, ANSWERS)
    r = cli(db_path, "analyze", "--run", str(rid), "--json", "--bootstrap", "10")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"runs", "agreement", "stability", "health"} <= set(out)
    h = out["health"][str(rid)]
    assert h["invalid_share"] == pytest.approx(1 / 12) and h["ties"]["margin"] == 0.1
    assert {"never_varying", "dimensions", "warnings", "thresholds"} <= set(h)
    r = cli(db_path, "analyze", "--run", str(rid), "--rankings", "--json", "--bootstrap", "10",
            "--tie-margin", "0.25")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["health"][str(rid)]["ties"]["share"] == pytest.approx(4 / 6)
    assert json.loads(r.stdout)["tie_margin_source"] == "given"
    r = cli(db_path, "analyze", "--run", str(rid), "--pairs", "--json", "--tie-margin", "auto")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["tie_margin"] == pytest.approx(0.015) and out["tie_margin_source"] == "derived"
    assert out["health"][str(rid)]["ties"]["margin_source"] == "given"  # health at that margin
    r = cli(db_path, "analyze", "--run", str(rid), "--rankings", "--tie-margin", "auto")
    assert r.returncode == 0 and "tie margin: 0.015 (derived)" in r.stdout
    r = cli(db_path, "analyze", "--run", str(rid), "--json", "--tie-margin", "auto")
    assert json.loads(r.stdout)["health"][str(rid)]["ties"]["margin_source"] == "derived"
    r = cli(db_path, "analyze", "--run", str(rid), "--rankings", "--tie-margin", "wide")
    assert r.returncode == 2 and "neither a number nor 'auto'" in r.stderr


def _page(path: str, key: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["task_name"] = "t"
    at.run()
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.usefixtures("few_groups_allowed")
def test_analysis_page_shows_health_warning(task):
    db, tid = task
    make_run(db, tid, {"g1": [0.1, 0.2, 0.3], "g2": [0.4, 0.5, 0.6]},
             {(i, q): "yes" for i in ITEMS for q in (0, 1)})
    at = _page("app_pages/analysis.py", "an_task")
    box = [w.value.replace("\\", "") for w in at.warning if "Judge health" in w.value]
    assert box and "says Yes to 100% of questions" in box[0]


@pytest.mark.usefixtures("few_groups_allowed")
def test_rankings_page_tie_warning_and_derived_margin(task):
    db, tid = task
    make_run(db, tid, SCORES, ANSWERS)
    at = _page("app_pages/rankings.py", "rk_task")
    at.number_input(key="rk_tie").set_value(0.25).run()
    box = [w.value.replace("\\", "") for w in at.warning if "Judge health" in w.value]
    assert box and "are ties at the given margin 0.25" in box[0]
    assert "invalid" in box[0] and "never" not in box[0]  # 2 in the box, the 3rd folded away
    assert [e.label for e in at.expander if "judge-health" in e.label] == [
        "1 more judge-health finding(s)"]
    assert any("Tie margin used: **0.25** (given" in c.value for c in at.caption)
    at.button(key="rk_tie_derive").click().run()
    assert not at.exception, at.exception
    assert at.number_input(key="rk_tie").value == pytest.approx(0.015)
    assert not any("ties at the given" in w.value for w in at.warning)


def test_traces_page_never_varying_filter(task):
    db, tid = task
    rid = make_run(db, tid, SCORES, ANSWERS)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"runs": str(rid)})
    at.run()
    at.switch_page("app_pages/traces.py").run()
    assert not at.exception, at.exception
    at.radio(key="tr_filter").set_value("never-varying questions").run()
    assert not at.exception, at.exception
    dec = next(d.value for d in at.dataframe if "sub-dimension" in d.value.columns)
    assert list(dec["question"]) == ["Is it q1?"]


def test_never_varying_of_a_run_is_remembered_until_its_state_changes(task):
    db, tid = task
    rid = make_run(db, tid, SCORES, ANSWERS)
    q1 = db.execute("SELECT id FROM question WHERE text = 'Is it q1?'").fetchone()[0]
    assert run_never_varying(db, rid) == {q1: "yes"}
    # an answer changed behind the run's back is not seen until the run's state changes
    db.execute("UPDATE answer SET verdict = 'no' WHERE run_id = ? AND question_id = ? AND "
               "item_id = (SELECT MIN(item_id) FROM answer WHERE run_id = ?)", [rid, q1, rid])
    assert run_never_varying(db, rid) == {q1: "yes"}
    db.execute("UPDATE run SET progress_done = progress_done + 1 WHERE id = ?", [rid])
    assert run_never_varying(db, rid) == {}


@pytest.mark.usefixtures("few_groups_allowed")
def test_strong_systems_span_against_their_standard_error(task):
    import pandas as pd

    # per-group scores: s1 0.9/0.7 (mean 0.8, sd √0.02, se 0.1), s2 0.8/0.6 (0.7, se 0.1),
    # s3 and s4 constant (0.2, 0.1); strong half = s1, s2: span 0.1 < 2 × 0.1
    vals = {"s1": (0.9, 0.7), "s2": (0.8, 0.6), "s3": (0.2, 0.2), "s4": (0.1, 0.1)}
    df = pd.DataFrame([{"group": g, "system": s, "metric": v[k]} for s, v in vals.items()
                       for k, g in enumerate(("g1", "g2"))])
    sysm = H._systems(df)
    assert (sysm["n"], sysm["n_strong"]) == (4, 2)
    assert sysm["span"] == pytest.approx(0.7) and sysm["strong_span"] == pytest.approx(0.1)
    assert sysm["strong_se"] == pytest.approx(0.1)
    db, tid = task
    h = H.run_health(db, make_run(db, tid, SCORES, ANSWERS))
    assert "strong_span" not in codes(h)  # 3 systems: no strong half
    h["systems"] = sysm
    msg = {w["code"]: w["message"] for w in H.warnings_for(h)}["strong_span"]
    assert msg.startswith("scores of the strong systems span 0.100 (2 of 4 systems), less than "
                          "2 × their standard error over groups (0.100)")
    h["systems"] = {**sysm, "strong_se": 0.04}  # span 0.1 ≥ 2 × 0.04: resolved, no warning
    assert "strong_span" not in {w["code"] for w in H.warnings_for(h)}


def test_undefined_numbers_say_why(db):
    from checkeval_core.store import now_iso

    tid = db["task"].insert({"name": "empty", "created_at": now_iso()}).last_pk
    rid = db["run"].insert({"task_id": tid, "judge_spec": "fake", "method": "geval",
                            "created_at": now_iso()}).last_pk
    h = H.run_health(db, rid)
    assert math.isnan(h["yes_share"]) and h["reasons"]["yes_share"] == "the run has no answers yet"
    assert h["reasons"]["strong_span"] == "needs ≥ 4 scored systems (n=0)"
    assert h["ties"]["reason"] == "no group holds answers of ≥ 2 systems: no matches"
    assert h["warnings"] == []


def test_coin_flips_are_counted_and_warned_whatever_the_groups(db, tmp_path):
    """Answers with p(Yes) within 0.05 of 0.5 flip across builds: health counts them and
    warns above 5 % even on a tour-sized run (a fact about the answers, not an estimate)."""
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.store import db_path, transaction
    from tests.helpers import make_runs_task

    task = make_runs_task(db, tmp_path)
    rid = create_run(db, task, "fake", "rocketeval", limit=2)
    execute_run(db_path(db), rid)
    ids = [r[0] for r in db.execute("SELECT id FROM answer WHERE run_id = ? AND verdict IN "
                                    "('yes', 'no') ORDER BY id", [rid])]
    with transaction(db):
        db.execute("UPDATE answer SET p_yes = 0.9, verdict = 'yes' WHERE run_id = ?", [rid])
        for p, v, i in zip((0.52, 0.47, 0.549), ("yes", "no", "yes"), ids):
            db.execute("UPDATE answer SET p_yes = ?, verdict = ? WHERE id = ?", [p, v, i])
    h = H.run_health(db, rid)
    assert h["coin_flips"]["n"] == 3 and h["coin_flips"]["n_with_p"] == len(ids)
    assert h["n_groups"] < 6  # below the floor's minimum: the warning is raised all the same
    msgs = H.health_warnings({str(rid): h}, "analysis")
    assert any(m.startswith(f"3 of {len(ids)} Yes/No answers") and "within 0.05 of 0.5" in m
               for m in msgs), msgs
