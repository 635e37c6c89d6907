"""Escalating runs: judge A answers everything, B what A is unsure of.

Two judges with known p(Yes): each item's output carries, per question tag, the p(Yes) that A
(``pa``) and B (``pb``) give — backends declared in the test suite only, deterministic like the
fake judge. The threshold fit is checked by hand on a tiny case; a run checks which answers
went to B, that each answer records its judge, that a crash mid-escalation resumes by asking
only what is missing, the CLI's flags and their refusals, and an API judge (an
OpenAI-compatible server on 127.0.0.1) as B.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

import numpy as np
import pytest

from checkeval_core.judges.base import BinaryResult, Capabilities, GenerateResult
from checkeval_core.judges.spec import Backend, register_backend
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.escalation.estimate import estimate_calls
from checkeval_core.runs.escalation.options import escalation_params
from checkeval_core.runs.escalation.units import run_units
from checkeval_core.runs.jobs import get_run, prepare_resume
from checkeval_core.stats import escalation as E
from checkeval_core.store import db_path as path_of
from checkeval_core.task_split import set_explicit_split
from tests.helpers import ScriptedServer, cli, make_runs_task, second_fake


# -- the fitting, by hand ------------------------------------------------------------------------
def test_fit_threshold_by_hand():
    # target 0.8, δ 0.2: fewer than ⌈log 0.2 / log 0.8⌉ = 8 kept units can never pass
    assert E.min_kept(0.8, 0.2) == 8
    conf = [0.5, 0.45, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05]
    agree = [True] * 8 + [False, False]
    f = E.fit_threshold(conf, agree, 0.8, 0.2)
    # λ = 0.15 keeps 8 with 0 disagreements: p = 0.8⁸ = 0.168 ≤ 0.2 (passes);
    # λ = 0.10 keeps 9 with 1: p = 0.8⁹ + 9·0.2·0.8⁸ = 0.436 > 0.2 (stops)
    assert f.threshold == 0.15 and f.n_kept == 8 and f.k_disagree == 0
    assert f.coverage_dev == pytest.approx(0.8)
    assert [s["threshold"] for s in f.steps] == [0.15, 0.1]
    assert f.steps[0]["pvalue"] == pytest.approx(0.8 ** 8)
    assert f.steps[1]["pvalue"] == pytest.approx(0.8 ** 9 + 9 * 0.2 * 0.8 ** 8)
    # one more agreement: λ = 0.10 passes (0.8⁹ = 0.134), λ = 0.05 fails (0.376)
    f2 = E.fit_threshold(conf, [True] * 9 + [False], 0.8, 0.2)
    assert f2.threshold == 0.1 and f2.n_kept == 9
    # a disagreement at the top: nothing passes, everything escalates, with the reason
    f3 = E.fit_threshold(conf, [False] + [True] * 9, 0.8, 0.2)
    assert math.isinf(f3.threshold) and f3.n_kept == 0 and "no threshold" in f3.reason
    assert f3.to_dict()["threshold"] is None


def test_binomial_pvalue_and_checks():
    assert E.binomial_pvalue(0, 3, 0.5) == pytest.approx(0.125)
    assert E.binomial_pvalue(1, 3, 0.5) == pytest.approx(0.5)
    assert E.binomial_pvalue(0, 0, 0.9) == 1.0
    for bad in (0.3, 1.0, float("nan"), True):
        with pytest.raises(ValueError, match="--target-agreement"):
            E.check_target(bad)
    with pytest.raises(ValueError, match="--delta"):
        E.check_delta(0)


def test_cascade_outcome_and_curve_by_hand():
    conf = np.array([0.4, 0.3, 0.1, 0.0])
    a = np.array([1, 1, 0, 0], float)
    b = np.array([np.nan, 0, 1, 1], float)
    o = E.cascade_outcome(conf, a, 0.2, agree_b=b)
    assert o["coverage"] == 0.5 and o["agreement"] == 1.0 and o["decided"] == 1.0
    # threshold 0.35: the second unit needs B, whose answer is 0 → 3 of 4
    assert E.cascade_outcome(conf, a, 0.35, agree_b=b)["agreement"] == 0.75
    # B alone on every unit: unit 1 has no B answer → undefined, and says why
    o = E.cascade_outcome(conf, a, math.inf, agree_b=b)
    assert math.isnan(o["agreement"]) and o["missing_b"] == 1
    # abstention: B's confidence below 0.2 on unit 3 → not decided
    o = E.cascade_outcome(conf, a, 0.2, np.array([np.nan, np.nan, 0.3, 0.1]), b, 0.2)
    assert o["decided"] == 0.75 and o["agreement"] == 1.0
    pts = E.curve(conf, a, b, 1.0, 4.0, ["g1", "g1", "g2", "g2"], thresholds=[0.0, 0.2],
                  n_boot=50)
    assert [p["coverage"] for p in pts] == [1.0, 0.5]
    assert [p["agreement"] for p in pts] == [0.5, 1.0]
    assert [p["cost"] for p in pts] == [1.0, 3.0]  # 1 + (1 − coverage) · 4


def test_median_direction_labels():
    scores = {(1, "q"): 4.0, (2, "q"): 2.0, (3, "q"): 3.0, (4, "q"): 1.0, (5, "q"): 1.0}
    groups = {1: "d1", 2: "d1", 3: "d1", 4: "d2", 5: "d2"}
    # d1 median 3: above yes, below no, at the median no label; d2: all at the median
    assert E.median_direction(scores, groups) == {(1, "q"): "yes", (2, "q"): "no"}
    assert E.majority(["yes", "no"]) is None and E.majority(["no", "no", "yes"]) == "no"


# -- two judges with known p(Yes) ------------------------------------------------------------------
CALLS: dict[str, list[str]] = {"pa": [], "pb": []}
CRASH = {"pb": None}  # raise after this many more calls of pb


class KnownJudge:
    """p(Yes) of question "… tagged qN?" read from ``qN a=P b=P`` in the item's text."""

    side = "a"

    def __init__(self, parsed, **params) -> None:
        self.spec = parsed.spec
        self.params = params
        self.capabilities = Capabilities(logprobs=True, local=True, model=f"known-{self.side}")

    def binary(self, requests: Sequence) -> list[BinaryResult]:
        out = []
        for r in requests:
            if self.spec == "pb" and CRASH["pb"] is not None:
                if CRASH["pb"] == 0:
                    raise RuntimeError("killed")
                CRASH["pb"] -= 1
            tag = re.search(r"tagged (q\d)", r.question).group(1)
            m = re.search(rf"{tag} a=([\d.]+) b=([\d.]+)", r.prefix)
            p = float(m.group(1 if self.side == "a" else 2))
            CALLS[self.spec].append(f"{tag}|{r.prefix[-60:]}")
            v = "yes" if p >= 0.5 else "no"
            out.append(BinaryResult(verdict=v, p_yes=p, raw=v, mode="logprob", tokens_in=5,
                                    tokens_out=1, latency_ms=10.0 if self.side == "a" else 40.0))
        return out

    def generate(self, requests: Sequence) -> list[GenerateResult]:
        return [GenerateResult(text="") for _ in requests]


class KnownB(KnownJudge):
    side = "b"


@pytest.fixture(autouse=True)
def known_judges():
    register_backend(Backend("pa", KnownJudge, title="test A"))
    register_backend(Backend("pb", KnownB, title="test B"))
    for v in CALLS.values():
        v.clear()
    CRASH["pb"] = None
    yield
    from checkeval_core.judges.spec import BACKENDS

    BACKENDS.pop("pa", None)
    BACKENDS.pop("pb", None)


# A's p(Yes) per (group, system, question); the human label is yes for s0 (score 4), no for s1
# (score 2): the group median sits between them. Dev = d0, d1 (8 answers), held out = d2, d3.
P_A = {("d0", 0): (0.95, 0.91), ("d0", 1): (0.13, 0.74),   # q2 of d0-s1: wrong, conf 0.24
       ("d1", 0): (0.84, 0.21), ("d1", 1): (0.31, 0.42),   # q2 of d1-s0: wrong, conf 0.29
       ("d2", 0): (0.55, 0.95), ("d2", 1): (0.45, 0.10),
       ("d3", 0): (0.60, 0.05), ("d3", 1): (0.52, 0.97)}
P_B = 0.9  # B is right and sure everywhere: 0.9 on "yes" items, 0.1 on "no" items


def _rows():
    rows = []
    for (g, s), (q1, q2) in P_A.items():
        pb = P_B if s == 0 else 1 - P_B
        rows.append({"id": f"{g}-s{s}", "group_id": g, "system_id": f"s{s}",
                     "source": f"Source of {g}.",
                     "output": f"q1 a={q1} b={pb} q2 a={q2} b={pb}",
                     "scores": {"quality": 4.0 if s == 0 else 2.0}})
    return rows


CHECKLIST = {"quality": {"definition": "tags", "sub_dimensions": {
    "Tags": {"seed": ["Is it tagged q1?", "Is it tagged q2?"]}}}}


@pytest.fixture
def known_task(db, tmp_path):
    make_runs_task(db, tmp_path, rows=_rows(), checklist=CHECKLIST)
    set_explicit_split(db, "t", ["d2", "d3"])
    return "t"


def _answers(db, rid):
    return {(r[0], r[1]): r[2:] for r in db.execute(
        "SELECT i.item_id, q.text, a.judge, a.verdict, a.p_yes, a.a_verdict, a.a_p_yes "
        "FROM answer a JOIN item i ON i.id = a.item_id JOIN question q ON q.id = a.question_id "
        "WHERE a.run_id = ?", [rid])}


def test_margin_sends_the_unsure_answers_to_b_and_records_each_judge(db, known_task):
    rid = create_run(db, known_task, "pa", "rocketeval",
                     params=escalation_params("pb", margin=0.3))
    run = execute_run(path_of(db), rid)
    assert run["status"] == "completed", run["error"]
    ans = _answers(db, rid)
    assert len(ans) == 16
    unsure = {(f"{g}-s{s}", f"Is it tagged q{k + 1}?") for (g, s), ps in P_A.items()
              for k, p in enumerate(ps) if abs(p - 0.5) < 0.3}
    assert len(unsure) == 8
    for key, (judge, _verdict, p, a_verdict, a_p) in ans.items():
        g, s = key[0].split("-s")
        pa = P_A[(g, int(s))][int(key[1][-2]) - 1]
        if key in unsure:  # B's answer, A's kept beside it
            assert judge == "pb" and a_p == pa and p == pytest.approx(P_B if s == "0" else 0.1)
            assert a_verdict == ("yes" if pa >= 0.5 else "no")
        else:
            assert judge == "pa" and p == pa and a_p is None and a_verdict is None
    assert len(CALLS["pa"]) == 16 and len(CALLS["pb"]) == 8  # B asked only the unsure ones
    esc = get_run(db, rid)["params"]["escalation"]
    assert esc["threshold"] == 0.3 and esc["coverage"] == 0.5 and esc["n_escalated"] == 8
    assert esc["unit"] == "answer" and esc["label_source"] == "expert scores vs group median"
    # held out (d2, d3): A alone agrees on 5 of 8 (wrong: d3-s0 q2 0.05, d3-s1 q1 0.52 and
    # q2 0.97); the cascade gives the unsure d3-s1 q1 to B, who is right: 6 of 8
    assert esc["heldout"]["agreement_a"] == 0.625
    assert esc["heldout"]["agreement"] == pytest.approx(0.75)
    # scores come from the final answers: item d3-s1's mean p(Yes) mixes B's 0.1 and A's 0.97
    v = db.execute("SELECT s.value FROM score s JOIN item i ON i.id = s.item_id WHERE "
                   "s.run_id = ? AND i.item_id = 'd3-s1' AND s.aggregation = 'mean_p_yes'",
                   [rid]).fetchone()[0]
    assert v == pytest.approx((0.1 + 0.97) / 2)


def test_target_agreement_fits_on_dev_by_the_fixed_sequence_test(db, known_task):
    # dev answers (d0, d1), conf and agreement with the experts:
    #   0.45 ✓  0.41 ✓  0.37 ✓  0.34 ✓  0.29 ✗  0.24 ✗  0.19 ✓  0.08 ✓
    # target 0.6, δ 0.2: ⌈log 0.2 / log 0.6⌉ = 4; λ = 0.34 keeps 4, k = 0: 0.6⁴ = 0.13 passes;
    # λ = 0.29 keeps 5, k = 1: 0.6⁵ + 5·0.4·0.6⁴ = 0.34 > 0.2 stops → threshold 0.34
    rid = create_run(db, known_task, "pa", "rocketeval", params=escalation_params(
        "pb", target_agreement=0.6, delta=0.2))
    run = execute_run(path_of(db), rid)
    assert run["status"] == "completed", run["error"]
    esc = run["params"]["escalation"]
    assert esc["fitted"] and esc["threshold"] == pytest.approx(0.34)
    assert esc["fit"]["n_dev"] == 8 and esc["fit"]["n_kept"] == 4
    assert esc["fit"]["steps"][-1]["pvalue"] == pytest.approx(0.6 ** 5 + 5 * 0.4 * 0.6 ** 4)
    conf = [abs(p - 0.5) for ps in P_A.values() for p in ps]
    assert esc["n_escalated"] == sum(c < 0.34 - 1e-9 for c in conf) == len(CALLS["pb"]) == 8


def test_abstention_reports_the_share_decided(db, known_task):
    rid = create_run(db, known_task, "pa", "rocketeval",
                     params=escalation_params("pb", margin=0.45, abstain=True))
    run = execute_run(path_of(db), rid)
    esc = run["params"]["escalation"]
    # B answers with confidence 0.4 < 0.45 everywhere: what went to B is not decidable
    assert esc["b_threshold"] == 0.45
    assert esc["decided"] == pytest.approx(esc["coverage"])


def test_resume_after_a_crash_asks_only_what_is_missing(db, known_task):
    rid = create_run(db, known_task, "pa", "rocketeval",
                     params=escalation_params("pb", margin=0.3))
    CRASH["pb"] = 3  # B dies on its 4th request
    with pytest.raises(RuntimeError, match="killed"):
        execute_run(path_of(db), rid)
    assert get_run(db, rid)["status"] == "failed"
    n_b_before = db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ? AND judge = 'pb'",
                            [rid]).fetchone()[0]
    assert 0 < n_b_before < 8
    asked_a, asked_b = len(CALLS["pa"]), len(CALLS["pb"])
    assert asked_a == 16 and asked_b == 3
    CRASH["pb"] = None
    prepare_resume(db, rid)
    run = execute_run(path_of(db), rid)
    assert run["status"] == "completed", run["error"]
    assert len(CALLS["pa"]) == asked_a  # A asked nothing again
    assert len(CALLS["pb"]) == 8  # B: the 5 it had not answered (its cache served the rest)
    assert len(set(CALLS["pb"])) == 8
    assert db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ? AND judge = 'pb'",
                      [rid]).fetchone()[0] == 8


def test_cli_flags_and_refusals(db_path, db, known_task):
    r = cli(db_path, "run", "--task", "t", "--judge", "pa", "--escalate-to", "pb", "--margin",
            "0.3", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["escalation"]["coverage"] == 0.5 and out["status"] == "completed"
    n_runs = db.execute("SELECT COUNT(*) FROM run").fetchone()[0]
    for args, msg in (
            (["--margin", "0.3"], "need --escalate-to"),
            (["--escalate-to", "pb"], "one of --target-agreement"),
            (["--escalate-to", "pb", "--margin", "0.3", "--target-agreement", "0.8"],
             "one of --target-agreement"),
            (["--escalate-to", "pa", "--margin", "0.3"], "must differ"),
            (["--escalate-to", "pb", "--target-agreement", "1.5"], "--target-agreement"),
            (["--escalate-to", "pb", "--margin", "-1"], "--margin"),
            (["--escalate-to", "nope", "--margin", "0.3"], "unknown judge"),
            (["--escalate-to", "pb", "--margin", "0.3", "--method", "geval"],
             "no Yes/No answers")):
        r = cli(db_path, "run", "--task", "t", "--judge", "pa", *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert msg in r.stderr + r.stdout, (args, r.stderr)
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == n_runs  # nothing written


def test_target_needs_a_split(db, tmp_path):
    make_runs_task(db, tmp_path, rows=_rows(), checklist=CHECKLIST)
    with pytest.raises(ValueError, match="no dev / held-out split"):
        create_run(db, "t", "pa", "rocketeval",
                   params=escalation_params("pb", target_agreement=0.8))


def test_units_and_estimate(db, known_task):
    rid = create_run(db, known_task, "pa", "rocketeval",
                     params=escalation_params("pb", margin=0.3))
    execute_run(path_of(db), rid)
    u = run_units(db, get_run(db, rid))
    arr = u.arrays()
    assert len(u.keys) == 16 and np.isnan(arr["conf_b"]).sum() == 8
    assert estimate_calls(16, 0.5) == {"a_calls": 16, "b_calls": 8, "coverage": 0.5,
                                       "b_calls_upper_bound": False}
    assert estimate_calls(16, None)["b_calls"] == 16


def test_an_api_judge_as_b(db, known_task):
    srv = ScriptedServer()  # answers Yes with p(Yes) 0.7
    try:
        rid = create_run(db, known_task, "pa", "rocketeval",
                         params=escalation_params(srv.spec, margin=0.3))
        run = execute_run(path_of(db), rid)
        assert run["status"] == "completed", run["error"]
        rows = db.execute("SELECT judge, p_yes, a_p_yes FROM answer WHERE run_id = ? AND "
                          "a_p_yes IS NOT NULL", [rid]).fetchall()
        assert len(rows) == 8 and all(j == srv.spec and p == pytest.approx(0.7)
                                      for j, p, _ in rows)
        assert len(srv.requests) == 8
        # a second identical run: B's answers come from its cache, the server is not asked
        rid2 = create_run(db, known_task, "pa", "rocketeval",
                          params=escalation_params(srv.spec, margin=0.3))
        execute_run(path_of(db), rid2)
        assert len(srv.requests) == 8
        assert db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ? AND judge = ? AND "
                          "cached = 1", [rid2, srv.spec]).fetchone()[0] == 8
    finally:
        srv.close()


# -- the coverage–agreement curve and the pages ------------------------------------------------
def _runs_for_curve(db, task):
    rid = create_run(db, task, "pa", "rocketeval", params=escalation_params("pb", margin=0.3))
    execute_run(path_of(db), rid)
    b_alone = create_run(db, task, "pb", "rocketeval")
    execute_run(path_of(db), b_alone)
    return rid, b_alone


def test_curve_on_heldout_beside_a_alone_and_b_alone(db, known_task):
    from checkeval_core.analysis.escalation_view import curve_page, escalation_curve

    rid, b_alone = _runs_for_curve(db, known_task)
    v = escalation_curve(db, rid, "heldout", n_boot=50)
    assert v["b_run"] == b_alone and v["n_units"] == 8 and v["n_groups"] == 2
    assert v["a_alone"]["coverage"] == 1.0 and v["a_alone"]["agreement"] == 0.625
    assert v["b_alone"]["coverage"] == 0.0 and v["b_alone"]["agreement"] == 1.0
    assert v["run_point"]["coverage"] == 0.5 and v["run_point"]["agreement"] == 0.75
    # judge time per decision: A 10 ms on every unit, B 40 ms on what it answers
    assert v["a_alone"]["cost"] == pytest.approx(0.010)
    assert v["b_alone"]["cost"] == pytest.approx(0.050)
    assert v["run_point"]["cost"] == pytest.approx(0.030)
    assert all(p["missing_b"] == 0 for p in v["points"]) and v["reason"] == ""
    page = curve_page(db, rid, n_boot=20)
    assert page["figure"] is not None and page["note"] == ""
    assert page["caption"].startswith("8 labelled answers in 2 held-out groups")
    # without B alone, the points that need B's answers on kept units are undefined
    db.execute("DELETE FROM run WHERE id = ?", [b_alone])
    v = escalation_curve(db, rid, "heldout", n_boot=0)
    assert math.isnan(v["b_alone"]["agreement"])
    assert "has not answered" in v["reason"]
    assert v["run_point"]["agreement"] == 0.75


def test_versions_page_shows_the_curve(db, known_task):
    from tests.conftest import open_app_page

    rid, _ = _runs_for_curve(db, known_task)
    at = open_app_page("app_pages/versions.py")
    assert not at.exception, at.exception
    assert any("Escalation" in s.value for s in at.subheader)
    assert any("escalation: threshold 0.3" in t.value for t in at.text)
    assert len(at.get("plotly_chart")) == 2  # the version history and the curve
    assert any("8 labelled answers in 2 held-out groups" in c.value for c in at.caption)


def test_run_page_starts_an_escalating_run(db, known_task, launched):
    from checkeval_core.runs import list_runs
    from tests.conftest import run_page

    started = launched
    at = run_page(known_task, "pa", ["rocketeval"])
    at.text_input(key="run_escalate_to").input("pb").run()
    assert any("asked again of pb" in c.value for c in at.caption)  # the expected calls
    at.number_input(key="run_esc_target").set_value(0.6)
    at.checkbox(key="run_esc_calibrate").check()
    at.button(key="run_start").click().run()
    assert not at.exception, at.exception
    p = get_run(db, started[0])["params"]
    assert p["escalate_to"] == "pb" and p["target_agreement"] == 0.6 and p["delta"] == 0.1
    assert p["calibrate_judges"] is True
    # a margin instead, with the same second judge as the first: refused, nothing started
    at.radio(key="run_esc_how").set_value("margin")
    at.text_input(key="run_escalate_to").input("pa")
    at.button(key="run_start").click().run()
    assert any("must differ" in e.value for e in at.error)
    assert len(list_runs(db, known_task)) == 1 and len(started) == 1


# -- the benchmark command, with deterministic judges on the fixture subset -----------------------
# one mark per request the second judge executes
OtherFake = second_fake("fake-2", lambda reqs: CALLS["pb"].extend("x" * len(reqs)))


def test_bench_escalate_rows_are_consistent_and_resumable(tmp_path):
    from checkeval_core.bench.escalate import bench_escalate, format_escalate
    from tests.helpers import bench_source

    register_backend(Backend("fake2", OtherFake, title="second fake"))
    src = bench_source()
    kw = {"queries": 12, "db_file": tmp_path / "e.db", "n_boot": 30, "target": 0.6,
          "margins": (0.0, 1.0)}
    res = bench_escalate("mtbench_pairs", src, "fake", "fake2", **kw)
    rows = {r["name"]: r for r in res["rows"]}
    assert list(rows) == ["A alone: fake", "cascade, fitted threshold",
                          "cascade, fitted, with abstention", "cascade, margin 0",
                          "cascade, margin 1", "B alone: fake2", "ensemble A + B (mean p(Yes))"]
    assert res["unit"] == "pair" and res["dev_groups"] + res["heldout_groups"] >= 4
    # margin 0 keeps every pair with A (= A alone); margin 1 sends every pair to B (= B alone)
    assert rows["cascade, margin 0"]["agreement"] == rows["A alone: fake"]["agreement"]
    assert rows["cascade, margin 0"]["coverage_heldout"] == 1.0
    assert rows["cascade, margin 1"]["agreement"] == rows["B alone: fake2"]["agreement"]
    assert rows["cascade, margin 1"]["coverage_heldout"] == 0.0
    assert rows["cascade, margin 0"]["judge_s"] == rows["A alone: fake"]["judge_s"]
    assert rows["cascade, margin 1"]["judge_s"] == pytest.approx(
        rows["A alone: fake"]["judge_s"] + rows["B alone: fake2"]["judge_s"])
    assert rows["ensemble A + B (mean p(Yes))"]["judge_s"] == pytest.approx(
        rows["cascade, margin 1"]["judge_s"])
    n = rows["A alone: fake"]["n_units"]
    assert n > 0 and all(r["n_units"] == n for r in res["rows"])
    assert 0 <= rows["cascade, fitted, with abstention"]["share_resamples_at_target"] <= 1
    assert "| cascade, margin 1 |" in format_escalate(res)
    calls = len(CALLS["pb"])
    again = bench_escalate("mtbench_pairs", src, "fake", "fake2", **kw)
    assert len(CALLS["pb"]) == calls  # every answer and every cascade run reused
    assert [r["agreement"] for r in again["rows"]] == [r["agreement"] for r in res["rows"]]
    from checkeval_core.judges.spec import BACKENDS

    BACKENDS.pop("fake2", None)


def test_bench_escalate_cli_refuses_bad_input_before_any_run(tmp_path):
    from tests.helpers import run_cli

    for args, msg in ((["--benchmark", "nope"], "mtbench_pairs, summeval"),
                      (["--benchmark", "mtbench_pairs", "--target-agreement", "2"],
                       "--target-agreement"),
                      (["--benchmark", "mtbench_pairs", "--margin", "-1"], "--margin"),
                      (["--benchmark", "mtbench_pairs", "--queries", "2"], "--queries"),
                      (["--benchmark", "mtbench_pairs", "--escalate-to", "fake"], "must differ"),
                      ):
        r = run_cli(["bench", "escalate", "--judge", "fake", "--escalate-to", "embedded",
                     *args, "--db", str(tmp_path / "x.db")])
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)
        assert not (tmp_path / "x.db").exists()


def test_analysis_page_shows_the_curve_of_a_selected_escalating_run(db, known_task):
    from tests.helpers import analysis_page

    rid, b_alone = _runs_for_curve(db, known_task)
    at = analysis_page(known_task)
    at.multiselect(key="an_runs").set_value([rid]).run()
    assert not at.exception, at.exception
    assert any("Escalation" in s.value for s in at.subheader)
    assert any(f"the second judge alone from run {b_alone}" in c.value for c in at.caption)
    at.multiselect(key="an_runs").set_value([b_alone]).run()  # not escalating: no section
    assert not any("Escalation" in s.value for s in at.subheader)


@pytest.mark.browser
@pytest.mark.slow
def test_versions_page_curve_in_a_browser_at_1440(app_server, screen, tmp_path):
    from checkeval_core.store import open_db

    db = open_db(app_server.db_path)
    make_runs_task(db, tmp_path, rows=_rows(), checklist=CHECKLIST)
    set_explicit_split(db, "t", ["d2", "d3"])
    _runs_for_curve(db, "t")
    db.close()
    screen.goto(app_server.url + "/versions")
    screen.get_by_text("Escalation: coverage vs agreement", exact=True).wait_for()
    screen.wait_for_load_state("networkidle")
    screen.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")
    chart = screen.locator(".js-plotly-plot").nth(1)
    for label in ("this run's threshold", "A alone: pa", "B alone: pb"):
        chart.locator(".legendtext", has_text=label).first.wait_for()
    chart.locator("text", has_text="agreement with people").first.wait_for()
    chart.scroll_into_view_if_needed()
    screen.wait_for_timeout(500)
    screen.screenshot(path="/tmp/escalation-versions-1440.png")


def test_bench_escalate_first_only_asks_no_second_judge(tmp_path):
    from checkeval_core.bench.escalate import bench_escalate, format_escalate
    from tests.helpers import bench_source

    src = bench_source()
    res = bench_escalate("mtbench_pairs", src, "fake", "embedded:quality", queries=12,
                         db_file=tmp_path / "f.db", n_boot=20, target=0.6,
                         margins=(0.0, 1.0), first_only=True)
    rows = {r["name"]: r for r in res["rows"]}
    assert res["runs"]["b"] is None and res["judge_b"] is None
    # margin 0 keeps every held-out pair: A alone; margin 1 keeps none: no agreement
    assert rows["A kept at margin 0"]["agreement"] == rows["A alone"]["agreement"]
    assert rows["A kept at margin 1"]["n_units"] == 0
    assert math.isnan(rows["A kept at margin 1"]["agreement"])
    assert res["fit"]["n_dev"] > 0 and "first judge only" in format_escalate(res)


@pytest.mark.slow  # 4 documents × 16 summaries × the published checklist, 6 runs: minutes
def test_bench_escalate_summeval_answers_labelled_by_expert_direction(tmp_path):
    from checkeval_core.bench.escalate import bench_escalate
    from checkeval_core.config import data_dir

    src = tmp_path / "bench"
    (src / "checklists").mkdir(parents=True)
    rows = [json.loads(x) for x in (data_dir() / "summeval_demo.jsonl").read_text()
            .splitlines()]
    docs = list(dict.fromkeys(r["group_id"] for r in rows))[:4]
    (src / "summeval.jsonl").write_text("".join(json.dumps(
        {"doc_id": r["group_id"], "system_id": r["system_id"], "source": r["source"],
         "references": [r["reference"]], "output": r["output"], "scores": r["scores"]}) + "\n"
        for r in rows if r["group_id"] in docs))
    (src / "checklists" / "summeval.json").write_text(
        (data_dir() / "checklists" / "summeval.json").read_text())
    register_backend(Backend("fake2", OtherFake, title="second fake"))
    try:
        res = bench_escalate("summeval", src, "fake", "fake2", docs=4, db_file=tmp_path / "s.db",
                             n_boot=20, target=0.6, margins=(0.0, 1.0))
    finally:
        from checkeval_core.judges.spec import BACKENDS

        BACKENDS.pop("fake2", None)
    rows_ = {r["name"]: r for r in res["rows"]}
    assert res["unit"] == "answer" and res["label_source"] == "expert scores vs group median"
    assert res["dev_groups"] == 2 and res["heldout_groups"] == 2
    assert rows_["cascade, margin 0"]["agreement"] == rows_["A alone: fake"]["agreement"]
    assert rows_["cascade, margin 1"]["agreement"] == rows_["B alone: fake2"]["agreement"]
    assert rows_["A alone: fake"]["n_groups"] == 2 and rows_["A alone: fake"]["n_units"] > 50


def test_bench_estimates_count_every_call_the_judges_then_receive(tmp_path, monkeypatch):
    """``--estimate`` on bench escalate (both judges; the cascade rows add nothing), bench
    heldout and bench quality on pairs: the counted calls are the calls the judges then get,
    and estimating asks no judge."""
    from checkeval_core.bench.escalate import bench_escalate
    from checkeval_core.bench.heldout import bench_heldout
    from checkeval_core.bench.quality import bench_rankings
    from checkeval_core.judges.spec import BACKENDS
    from tests.helpers import bench_source

    log = tmp_path / "fake.log"
    monkeypatch.setenv("CHECKEVAL_FAKE_LOG", str(log))
    register_backend(Backend("fake2", OtherFake, title="second fake"))
    src = bench_source()
    kw = {"queries": 8, "db_file": tmp_path / "e.db", "n_boot": 20, "target": 0.6,
          "margins": (0.0, 1.0)}
    try:
        CALLS["pb"].clear()
        est = bench_escalate("mtbench_pairs", src, "fake", "fake2", estimate=True, **kw)
        assert not log.exists() and not CALLS["pb"]  # nobody was asked
        assert est["calls"] > 0 and est["cached"] == 0 and est["task"].startswith("mtbench")
        assert any("cascade" in n for n in est["notes"])
        bench_escalate("mtbench_pairs", src, "fake", "fake2", **kw)
        asked = len(log.read_text().splitlines()) + len(CALLS["pb"])
        assert asked == est["calls"]  # A's and B's runs, and no call for the cascade rows
        again = bench_escalate("mtbench_pairs", src, "fake", "fake2", estimate=True, **kw)
        assert again["calls"] == 0 and again["cached"] == 0  # every run is finished
    finally:
        BACKENDS.pop("fake2", None)
    # bench heldout on pairs: the judge's run (here: finished above, so nothing left)
    held = bench_heldout("mtbench_pairs", src, "fake", queries=8, db_file=tmp_path / "e.db",
                         estimate=True)
    assert held["calls"] == 0
    # bench quality on pairs (a fresh database): counted, then asked
    log.unlink()
    q = bench_rankings("mtbench_pairs", src, ["fake"], queries=6, checklist="fixed",
                       db_file=tmp_path / "q.db", estimate=True)
    assert not log.exists() and q["calls"] > 0
    bench_rankings("mtbench_pairs", src, ["fake"], queries=6, checklist="fixed",
                   db_file=tmp_path / "q.db")
    assert len(log.read_text().splitlines()) == q["calls"]
    with pytest.raises(ValueError, match="written by"):
        bench_rankings("mtbench_pairs", src, ["fake"], queries=6, checklist="generated",
                       checklist_judge="fake", db_file=tmp_path / "q.db", estimate=True)


def test_bench_estimate_cli_prints_the_contract_keys(tmp_path):
    from tests.helpers import bench_source

    r = cli(tmp_path / "unused.db", "bench", "heldout", "--benchmark", "mtbench_pairs",
            "--data", str(bench_source()), "--judge", "fake", "--queries", "6",
            "--db", str(tmp_path / "h.db"), "--estimate", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"calls", "cached", "prompt_tokens", "completion_tokens", "seconds", "usd",
            "notes", "task"} <= set(out) and out["calls"] > 0
    r = cli(tmp_path / "unused.db", "bench", "escalate", "--benchmark", "mtbench_pairs",
            "--data", str(bench_source()), "--judge", "fake", "--escalate-to", "fake",
            "--estimate")
    assert r.returncode == 2 and "must differ" in r.stderr


# -- calibrating each judge's p(Yes) before the scores mix them -----------------------------------
def test_platt_fit_equals_statsmodels_and_needs_both_labels():
    import statsmodels.api as sm

    rng = np.random.default_rng(0)
    p = rng.uniform(0.6, 0.95, 200)  # a judge that says Yes to everything, in order
    y = rng.uniform(size=200) < (p - 0.5)
    f = E.platt_fit(p, y)
    ref = sm.Logit(y.astype(float), sm.add_constant(np.log(p / (1 - p)))).fit(disp=0).params
    assert (f["intercept"], f["slope"]) == pytest.approx(tuple(ref), abs=1e-5)
    assert (f["n"], f["n_yes"]) == (200, int(y.sum()))
    q = E.platt_apply(f, [0.6, 0.95, math.nan])
    z = f["slope"] * math.log(0.6 / 0.4) + f["intercept"]
    assert q[0] == pytest.approx(1 / (1 + math.exp(-z))) and math.isnan(q[2])
    assert q[0] < q[1] < 0.6  # same order, and read as the chance people say Yes
    few = E.platt_fit([0.9] * 20 + [0.8] * 4, [True] * 20 + [False] * 4)
    assert "slope" not in few and "has 20 Yes, 4 No" in few["reason"]
    assert list(E.platt_apply(few, [0.3, 0.9])) == [0.3, 0.9]  # no fit: unchanged


# Twelve documents (dev d0–d5, held out d6–d11), two systems: s0 is the better (label Yes), s1
# the worse. A is right on its own scale (Yes items 0.56 / 0.75, No items 0.44 / 0.45); B says
# Yes to everything, higher on Yes items (0.9) than on No items (0.85). Margin 0.15 sends to B
# every answer but A's 0.75: a Yes item mixes B's 0.9 with A's 0.75, a No item is B's 0.85
# twice, so raw p(Yes) ranks the No item first. Dev holds a few errors so no fit is perfect:
# B 0.85 on d3's Yes item, 0.9 on d1's No item; A 0.75 (kept) on d4's No item's q2.
def _cal_rows():
    rows = []
    for d in range(12):
        for s in (0, 1):
            qa = [0.56, 0.75] if s == 0 else [0.44, 0.75 if d == 4 else 0.45]
            pb = (0.85 if d == 3 else 0.9) if s == 0 else (0.9 if d == 1 else 0.85)
            rows.append({"id": f"d{d}-s{s}", "group_id": f"d{d}", "system_id": f"s{s}",
                         "source": f"Source of d{d}.",
                         "output": f"q1 a={qa[0]} b={pb} q2 a={qa[1]} b={pb}",
                         "scores": {"quality": 4.0 if s == 0 else 2.0}})
    return rows


def test_calibrated_judges_mix_on_one_scale(db, tmp_path):
    make_runs_task(db, tmp_path, rows=_cal_rows(), checklist=CHECKLIST)
    set_explicit_split(db, "t", [f"d{d}" for d in range(6, 12)])
    plain = execute_run(path_of(db), create_run(db, "t", "pa", "rocketeval",
                                                params=escalation_params("pb", margin=0.15)))
    # calibrated, A's confidence is the chance people agree with its verdict, less 0.5: 0.08
    # for its Yes at 0.56, 0.34–0.36 for its No at 0.44–0.45, 0.48 for its Yes at 0.75, so
    # margin 0.4 escalates the same answers as margin 0.15 on raw p(Yes)
    rid = create_run(db, "t", "pa", "rocketeval",
                     params=escalation_params("pb", margin=0.4, calibrate_judges=True))
    run = execute_run(path_of(db), rid)
    assert run["status"] == "completed", run["error"]
    esc = run["params"]["escalation"]
    cal = esc["calibration"]
    assert cal["label_source"] == "expert scores vs group median"
    # with a fixed margin the confidence is calibrated on every dev group: A's fit for scores
    assert esc["confidence_calibration"]["fit"] == cal["a"]
    assert esc["confidence_calibration"]["groups"] == [f"d{d}" for d in range(6)]
    assert esc["n_escalated"] == plain["params"]["escalation"]["n_escalated"] == 35
    # by hand: the dev answers each judge gave, labelled yes for s0 and no for s1
    ans = _answers(db, rid)
    dev = [(k, v) for k, v in ans.items() if int(k[0][1:k[0].index("-")]) < 6]
    a_p = [v[4] if v[0] == "pb" else v[2] for _, v in dev]
    a_y = [k[0].endswith("s0") for k, _ in dev]
    b_p = [v[2] for _, v in dev if v[0] == "pb"]
    b_y = [k[0].endswith("s0") for k, v in dev if v[0] == "pb"]
    assert cal["a"] == E.platt_fit(a_p, a_y) and cal["b"] == E.platt_fit(b_p, b_y)
    assert (cal["a"]["n"], cal["a"]["n_yes"]) == (24, 12)
    assert (cal["b"]["n"], cal["b"]["n_yes"]) == (17, 6) and cal["b"]["slope"] > 0  # d4 q2 kept
    # each answer keeps its judge's own p(Yes); the score averages the calibrated ones
    item = "d7-s0"
    ps = [(v[0], v[2]) for k, v in ans.items() if k[0] == item]
    assert sorted(ps) == [("pa", 0.75), ("pb", 0.9)]
    want = np.mean([float(E.platt_apply(cal["b" if j == "pb" else "a"], p)) for j, p in ps])
    score = """SELECT s.value FROM score s JOIN item i ON i.id = s.item_id WHERE s.run_id = ?
               AND i.item_id = ? AND s.aggregation = 'mean_p_yes'"""
    assert db.execute(score, [rid, item]).fetchone()[0] == pytest.approx(want)
    assert db.execute(score, [plain["id"], item]).fetchone()[0] == pytest.approx(0.825)
    # held out: raw p(Yes) puts every document's No item first (0.85 > 0.825); calibrated,
    # its Yes item first
    for d in range(6, 12):
        raw, fit = ([db.execute(score, [r, f"d{d}-s{x}"]).fetchone()[0] for x in (0, 1)]
                    for r in (plain["id"], rid))
        assert raw[0] < raw[1] and fit[0] > fit[1], (d, raw, fit)
    assert "p(Yes) calibrated on dev" in E_summary(run)


def test_confidence_through_a_calibration_by_hand():
    f = {"slope": 2.0, "intercept": -0.5}
    q = 1 / (1 + math.exp(-(2.0 * math.log(0.7 / 0.3) - 0.5)))  # 0.7 → 0.817
    assert E.confidence(0.7, "yes", f) == pytest.approx(q - 0.5)
    assert E.confidence(0.7, "no", f) == 0.0  # people more likely say Yes: always escalated
    q = 1 / (1 + math.exp(-(2.0 * math.log(0.45 / 0.55) - 0.5)))  # 0.45 → 0.269
    assert E.confidence(0.45, "no", f) == pytest.approx(0.5 - q)
    assert E.confidence(0.45, "yes", f) == 0.0
    assert E.confidence(0.7, "yes") == E.confidence(0.7, "invalid", f) == pytest.approx(0.2)
    assert E.confidence(0.7, "yes", {"reason": "too few"}) == pytest.approx(0.2)
    assert E.confidence(None, "yes", f) == 0.0


def test_fitted_threshold_never_tested_on_the_groups_its_confidence_was_fitted_to(db, tmp_path):
    rows = _cal_rows()
    for r in rows:  # A wrong on d1, d3, d5's No item's q1, unsure: Yes at 0.56
        if r["group_id"] in ("d1", "d3", "d5") and r["system_id"] == "s1":
            r["output"] = r["output"].replace("q1 a=0.44", "q1 a=0.56")
    make_runs_task(db, tmp_path, rows=rows, checklist=CHECKLIST)
    set_explicit_split(db, "t", [f"d{d}" for d in range(6, 12)])
    rid = create_run(db, "t", "pa", "rocketeval", params=escalation_params(
        "pb", target_agreement=0.6, calibrate_judges=True))
    run = execute_run(path_of(db), rid)
    assert run["status"] == "completed", run["error"]
    esc = run["params"]["escalation"]
    cc = esc["confidence_calibration"]
    assert cc["groups"] == ["d0", "d2", "d4"]  # every other dev group, sorted by name
    ans = _answers(db, rid)
    on = [(v[4] if v[0] == "pb" else v[2], k[0].endswith("s0")) for k, v in ans.items()
          if k[0].split("-")[0] in cc["groups"]]
    assert cc["fit"] == E.platt_fit([p for p, _ in on], [y for _, y in on])
    assert esc["fit"]["n_dev"] == 12  # the 12 labelled answers of d1, d3 and d5 only
    # calibrated on d0/d2/d4, a Yes at 0.56 reads 0.08, a No at 0.45 0.34: the test passes at
    # 0.34 (6 kept, none wrong: 0.6⁶ = 0.047 ≤ 0.1) and stops at 0.08 (12 kept, 3 wrong)
    assert esc["threshold"] == pytest.approx(E.confidence(0.45, "no", cc["fit"]))
    assert esc["n_escalated"] == 15  # every answer at 0.56: 12 Yes items, 3 No items
    # what went to B is what the calibrated confidence puts below the threshold
    u = run_units(db, run)
    t = esc["threshold"] if esc["threshold"] is not None else math.inf
    for key, conf in zip(u.keys, u.conf_a):
        row = db.execute("SELECT judge, COALESCE(a_verdict, verdict), COALESCE(a_p_yes, p_yes) "
                         "FROM answer WHERE run_id = ? AND item_id = ? AND question_id = ? "
                         "AND unit = ?", [rid, *key]).fetchone()
        assert conf == pytest.approx(E.confidence(row[2], row[1], cc["fit"]))
        assert (row[0] == "pb") == (conf < t), (key, conf, t)
    assert "confidence calibrated on 3 dev groups" in E_summary(run)
    assert "threshold fitted on the other dev groups" in E_summary(run)


def E_summary(run):
    from checkeval_core.runs.escalation.cascade import summary_text

    return summary_text(run["params"]["escalation"])


def test_calibrate_judges_refusals(db, db_path, tmp_path):
    make_runs_task(db, tmp_path, rows=_cal_rows(), checklist=CHECKLIST)
    with pytest.raises(ValueError, match="--calibrate-judges: task 't' has no dev"):
        create_run(db, "t", "pa", "rocketeval",
                   params=escalation_params("pb", margin=0.1, calibrate_judges=True))
    with pytest.raises(ValueError, match="need --escalate-to"):
        escalation_params(None, calibrate_judges=True)
    r = cli(db_path, "run", "--task", "t", "--judge", "pa", "--calibrate-judges")
    assert r.returncode == 2 and "need --escalate-to" in r.stderr + r.stdout
    from tests.helpers import RANKING_TASK, build_ranking_task

    build_ranking_task(db)
    set_explicit_split(db, RANKING_TASK, ["g3", "g4"])
    with pytest.raises(ValueError, match="voted on pairs"):
        create_run(db, RANKING_TASK, "fake", "rocketeval", params=escalation_params(
            "pb", margin=0.1, calibrate_judges=True))
    assert db.execute("SELECT COUNT(*) FROM run WHERE params LIKE '%calibrate%'").fetchone()[0] \
        == 0


def test_run_estimate_counts_the_second_judges_expected_calls(db, db_path, known_task):
    def estimate(*extra):
        r = cli(db_path, "run", "--task", known_task, "--judge", "pa", "--method", "rocketeval",
                *extra, "--estimate", "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    a = estimate()
    assert a["calls"] == 16 and not CALLS["pa"]  # 8 items × 2 questions, nothing asked
    # no earlier run of A: B's share is unknown, so all of A's requests (an upper bound)
    assert estimate("--escalate-to", "pb", "--margin", "0.3")["calls"] == 32
    execute_run(path_of(db), create_run(db, known_task, "pa", "rocketeval"))
    ps = [p for (p,) in db.execute("SELECT p_yes FROM answer")]
    kept = sum(abs(p - 0.5) >= 0.3 for p in ps)  # A's stored answers at or above the margin
    both = estimate("--escalate-to", "pb", "--margin", "0.3")
    assert both["calls"] == round(16 * (1 - kept / 16)) and both["cached"] == 16  # A's cached
    r = cli(db_path, "run", "--task", known_task, "--judge", "pa", "--escalate-to", "pa",
            "--margin", "0.3", "--estimate")
    assert r.returncode == 2 and "must differ" in r.stderr  # checked as a real start
    text = cli(db_path, "run", "--task", known_task, "--judge", "pa", "--escalate-to", "pb",
               "--margin", "0.3", "--estimate").stdout
    assert f"pb asked {1 - kept / 16:.0%} of pa's requests (as many as run" in text
    assert "with confidence below 0.3" in text  # the number beside it is below, not ≥


def test_expected_coverage_reads_a_stored_calibration(db, tmp_path):
    from checkeval_core.runs.escalation.estimate import expected_coverage

    make_runs_task(db, tmp_path, rows=_cal_rows(), checklist=CHECKLIST)
    set_explicit_split(db, "t", [f"d{d}" for d in range(6, 12)])
    cov, why = expected_coverage(db, "t", "pa", 0.4, calibrate=True)
    assert cov is None and why == "no earlier run of this judge on the task"
    run = execute_run(path_of(db), create_run(db, "t", "pa", "rocketeval", params=(
        escalation_params("pb", margin=0.4, calibrate_judges=True))))
    fit = run["params"]["escalation"]["confidence_calibration"]["fit"]
    got = db.execute("SELECT COALESCE(a_p_yes, p_yes), COALESCE(a_verdict, verdict) "
                     "FROM answer WHERE run_id = ?", [run["id"]]).fetchall()
    cov, why = expected_coverage(db, "t", "pa", 0.4, calibrate=True)
    assert cov == pytest.approx(np.mean([E.confidence(p, v, fit) >= 0.4 for p, v in got]))
    assert cov == pytest.approx(13 / 48)  # A's 0.75 answers, as the run kept them
    assert f"read through run {run['id']}'s calibration" in why
    raw, why = expected_coverage(db, "t", "pa", 0.4)
    assert raw == 0.0 and "calibration" not in why  # no raw |p − 0.5| reaches 0.4


def test_expected_coverage_says_which_earlier_run_is_missing(db, known_task):
    from checkeval_core.runs.escalation.estimate import expected_coverage

    assert expected_coverage(db, known_task, "pa", None) == (
        None, "no earlier run of this judge on the task")
    execute_run(path_of(db), create_run(db, known_task, "pa", "rocketeval"))
    assert expected_coverage(db, known_task, "pa", None) == (
        None, "no earlier escalating run of this judge on the task")


def test_a_tour_sized_run_says_what_to_run_for_a_curve(db, known_task):
    """Four items are the two dev documents only: no held-out unit has a label, so no curve.
    The page says how many first items reach the labelled held-out groups and the command."""
    from checkeval_core.analysis.escalation_view import curve_page
    from tests.conftest import open_app_page

    rid = create_run(db, known_task, "pa", "rocketeval", limit=4,
                     params=escalation_params("pb", margin=0.3))
    execute_run(path_of(db), rid)
    page = curve_page(db, rid, n_boot=0)
    assert page["figure"] is None and page["reason"].startswith("no heldout")
    assert "The first 7 items reach 2 of them (an interval needs ≥ 6)" in page["how_to"]
    assert "*Items (first N)* = 7" in page["how_to"]
    assert (f"checkeval run --task {known_task} --judge pa --method rocketeval --checklist 1 "
            "--escalate-to pb --margin 0.3 --limit 7") in page["how_to"]
    at = open_app_page("app_pages/versions.py")
    assert not at.exception, at.exception
    assert any("--limit 7" in i.value for i in at.info)
