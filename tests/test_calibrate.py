"""The human-calibrated estimate (PPI++): hand-computed values against the ppi-python package,
coverage on synthetic data with a known judge–human correlation, the frame-level rules
(labelled items from dev groups only, the judge mapped onto the human scale, reasons for what
is missing) and the CLI contract on the demo."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from checkeval_core.analysis.calibrate import (
    METHOD,
    calibrated,
    calibrated_summary,
    calibrated_view,
    draw_labelled,
    human_scale,
    ppi_mean,
    ppi_mean_unlabelled,
)
from checkeval_core.bench.calibrate import bench_calibrate, parse_docs

Y = np.array([3.0, 4.0, 5.0, 2.0])
F = np.array([3.2, 3.9, 4.4, 2.5])
FU = np.array([3.0, 4.0, 4.5, 3.3, 2.9])


def test_tiny_case_by_hand_equals_the_package():
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    n, big_n = len(Y), len(FU)
    # λ = Cov(Y, f) / ((1 + n/N) · Var(f over labelled and unlabelled)), clipped to [0, 1]
    cov = np.mean((Y - Y.mean()) * (F - F.mean()))
    var_f = np.var(np.concatenate([F, FU]), ddof=1)
    lam = min(max(cov / ((1 + n / big_n) * var_f), 0.0), 1.0)
    est = lam * FU.mean() + np.mean(Y - lam * F)
    se = math.sqrt(np.var(lam * FU) / big_n + np.var(Y - lam * F) / n)
    hand = [est - 1.959963984540054 * se, est + 1.959963984540054 * se]
    got = ppi_mean(Y, F, FU)
    assert got["lambda"] == pytest.approx(lam)
    assert got["estimate"] == pytest.approx(est)
    assert got["ci"] == pytest.approx(hand)
    # the package's own power tuning (lam=None) gives the same numbers
    assert float(ppi_mean_pointestimate(Y, F, FU)[0]) == pytest.approx(est)
    lo, hi = ppi_mean_ci(Y, F, FU, alpha=0.05)
    assert [float(lo[0]), float(hi[0])] == pytest.approx(hand)
    # humans alone: mean ± z · sd/√n
    h = Y.std() / math.sqrt(n) * 1.959963984540054
    assert got["human_only"] == pytest.approx(3.5)
    assert got["ci_human_only"] == pytest.approx([3.5 - h, 3.5 + h])


def test_unlabelled_mean_by_hand():
    """The estimate of the unlabelled items' own mean: λ = OLS slope on the labelled items,
    variance Var(Y − λf)(1/n + 1/N) with the residual spread over n − 2 (λ was fitted on
    them), Student's t quantiles (n − 2 and n − 1 degrees of freedom)."""
    n, big_n = len(Y), len(FU)
    lam = np.cov(Y, F, ddof=1)[0, 1] / np.var(F, ddof=1)
    est = lam * FU.mean() + np.mean(Y - lam * F)
    k = math.sqrt(1 / n + 1 / big_n)
    got = ppi_mean_unlabelled(Y, F, FU)
    assert got["lambda"] == pytest.approx(lam) and got["estimate"] == pytest.approx(est)
    hw = np.std(Y - lam * F, ddof=2) * k * 4.302652729911275  # t(0.975, n − 2 = 2)
    assert got["ci"] == pytest.approx([est - hw, est + hw])
    hh = np.std(Y, ddof=1) * k * 3.182446305284263  # t(0.975, n − 1 = 3)
    assert got["ci_human_only"] == pytest.approx([3.5 - hh, 3.5 + hh])


def test_unlabelled_mean_covers_the_held_out_mean_and_narrows_by_sqrt_one_minus_rho2():
    rho, n, big_n = 0.6, 30, 30
    rng = np.random.default_rng(11)
    cover, ratios = 0, []
    for _ in range(200):
        z = rng.normal(size=n + big_n)
        y = 3 + rho * z + math.sqrt(1 - rho ** 2) * rng.normal(size=n + big_n)
        r = ppi_mean_unlabelled(y[:n], z[:n], z[n:])
        cover += r["ci"][0] <= y[n:].mean() <= r["ci"][1]  # the held-out items' own mean
        ratios.append((r["ci"][1] - r["ci"][0])
                      / (r["ci_human_only"][1] - r["ci_human_only"][0]))
    assert cover / 200 >= 0.9
    assert abs(float(np.median(ratios)) - math.sqrt(1 - rho ** 2)) < 0.05
    assert max(ratios) <= 1 + 1e-9


def test_bench_calibrate_on_a_synthetic_benchmark():
    rng = np.random.default_rng(5)
    recs = []
    for doc in range(1, 25):
        for s, shift in (("A", 0.0), ("B", 0.5), ("C", 1.0)):
            z = rng.normal()
            recs.append({"item_pk": len(recs), "group": doc, "system": s, "dimension": "d",
                         "human": 3 + shift + 0.8 * z + 0.6 * rng.normal(), "metric": z})
    res = bench_calibrate(pd.DataFrame(recs), parse_docs("1-12"), parse_docs("13-24"),
                          ns=(6, 13), draws=30, seed=1)
    row = res["rows"][0]
    assert row["n"] == 6 and row["n_intervals"] == 3 * 30 and row["no_interval"] == 0
    assert 0 < row["ratio"] <= 1 and 0 < row["ratio_heldout_mean"] <= 1
    assert row["coverage_heldout_mean"] >= 0.8
    assert "only 12 labelled outputs" in res["rows"][1]["skipped"]
    assert parse_docs("1-3,7") == [1, 2, 3, 7]
    with pytest.raises(ValueError, match="both labelled and unlabelled"):
        bench_calibrate(pd.DataFrame(recs), [1, 2], [2, 3])
    with pytest.raises(ValueError, match="document range"):
        parse_docs("5-1")


def test_edge_cases_say_why():
    one = ppi_mean(Y[:1], F[:1], FU)
    assert math.isnan(one["estimate"]) and "≥ 2 labelled" in one["reason"]
    tie = ppi_mean(np.array([5.0, 5.0, 5.0]), F[:3], FU)
    assert tie["estimate"] == 5.0 and math.isnan(tie["ci"][0]) and "all 5" in tie["reason"]
    flat = ppi_mean(Y, np.ones(4), np.ones(5))
    assert flat["lambda"] == 0.0 and flat["ci"] == flat["ci_human_only"]
    assert "same score" in flat["reason"]


def test_coverage_and_narrowing_on_synthetic_data_with_known_rho():
    """ρ = 0.8 between judge and human: 95 % intervals cover the true mean in ≥ 90 % of 200
    draws, and PPI++ is narrower than humans alone by about √(1 − ρ² N/(N + n))."""
    rho, mu, n, big_n = 0.8, 3.0, 40, 400
    rng = np.random.default_rng(7)
    covered, ratios, covered_h = 0, [], 0
    for _ in range(200):
        z = rng.normal(size=n + big_n)
        y = mu + rho * z + math.sqrt(1 - rho ** 2) * rng.normal(size=n + big_n)
        f = 10 + 2 * z  # a judge on another scale: λ must still find its weight
        lo_hi = ppi_mean(y[:n], (f[:n] - 10) / 2, (f[n:] - 10) / 2)
        lo, hi = lo_hi["ci"]
        covered += lo <= mu <= hi
        hlo, hhi = lo_hi["ci_human_only"]
        covered_h += hlo <= mu <= hhi
        ratios.append((hi - lo) / (hhi - hlo))
    assert covered / 200 >= 0.9 and covered_h / 200 >= 0.9
    target = math.sqrt(1 - rho ** 2 * big_n / (big_n + n))
    assert abs(float(np.median(ratios)) - target) < 0.05
    assert max(ratios) <= 1.0 + 1e-9  # never wider than humans alone


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    recs = []
    pk = 0
    for g in range(8):
        for s, bias in (("A", 0.0), ("B", 1.0)):
            z = rng.normal()
            recs.append({"item_pk": pk, "item_id": f"{g}-{s}", "group": f"g{g}", "system": s,
                         "dimension": "coh", "human": 3 + z + bias,
                         "metric": 0.5 + 0.1 * z})
            pk += 1
    return pd.DataFrame(recs)


def test_labelled_items_come_from_dev_groups_only():
    df = _frame()
    dev = ["g0", "g1", "g2", "g3"]
    lab = draw_labelled(df, dev, None)
    assert set(df[df["item_pk"].isin(lab)]["group"]) == set(dev)
    two = draw_labelled(df, dev, 2, seed=1)
    counts = df[df["item_pk"].isin(two)].groupby("system").size().to_dict()
    assert counts == {"A": 2, "B": 2} and two <= lab
    assert draw_labelled(df, dev, 2, seed=1) == two  # seeded


def test_calibrated_recovers_a_bias_the_judge_cannot_see():
    """System B is rated one point higher by people, the judge scores A and B alike: the judge
    alone misses the gap, PPI++ keeps it (from the labelled items) with a valid interval."""
    df = _frame()
    lab = draw_labelled(df, ["g0", "g1", "g2", "g3"], None)
    out = calibrated(df, lab)
    a, b = out["A"]["coh"], out["B"]["coh"]
    assert (a["n_labelled"], a["n_unlabelled"]) == (4, 4)
    assert "only 4 labelled items" in a["reason"]  # said beside an interval on so few
    assert a["method"] == METHOD
    assert b["estimate"] - a["estimate"] > 0.5
    assert abs(b["judge_only"] - a["judge_only"]) < abs(b["estimate"] - a["estimate"])
    for e in (a, b):
        assert e["ci"][0] <= e["estimate"] <= e["ci"][1]
        assert e["ci"][1] - e["ci"][0] <= e["ci_human_only"][1] - e["ci_human_only"][0] + 1e-9
    # the map onto the human scale: the judge's mean and spread matched to the labelled humans'
    a0, b0 = human_scale(df["metric"], df.loc[df["item_pk"].isin(lab), "human"])
    mapped = a0 + b0 * df["metric"]
    assert mapped.std() == pytest.approx(df.loc[df["item_pk"].isin(lab), "human"].std())


def test_cli_calibrated_contract_on_the_demo(demo_db):
    from checkeval_core.cli import app
    from tests.helpers import small_run

    rid = small_run(demo_db)  # 6 of the 12 documents; 6 dev / 6 held-out
    r = CliRunner().invoke(app, ["analyze", "--run", str(rid), "--calibrated", "--labelled",
                                 "3", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)["runs"][str(rid)]
    assert rep["labelled_from"].startswith("dev groups")
    assert len(rep["systems"]) == 16
    for dims in rep["systems"].values():
        assert set(dims) == {"coherence", "consistency", "fluency", "relevance"}
        for e in dims.values():
            assert {"estimate", "ci", "n_labelled", "n_unlabelled", "ci_human_only",
                    "method"} <= set(e)
            assert e["n_labelled"] <= 3
            assert e["n_labelled"] + e["n_unlabelled"] == 6  # 6 documents, one output each
    bad = CliRunner().invoke(app, ["analyze", "--run", str(rid), "--calibrated", "--labelled",
                                   "1"])
    assert bad.exit_code == 2 and "--labelled 1" in bad.output
    assert CliRunner().invoke(app, ["analyze", "--run", str(rid), "--labelled",
                                    "3"]).exit_code == 2


def test_bench_calibrate_cli_on_one_run_and_on_an_ensemble(demo_db):
    """``bench calibrate --db --run`` reads a stored run; ``--run`` repeated reads the runs'
    ensemble (standardised scores averaged); ``--run`` without ``--db`` is refused."""
    from checkeval_core.cli import app
    from checkeval_core.runs.jobs import create_run, execute_run
    from checkeval_core.store import db_path
    from tests.helpers import small_run

    a = small_run(demo_db)  # 6 documents × 16 systems, fake RocketEval
    b = create_run(demo_db, "summeval-demo", "fake", "checkeval", limit=96)
    execute_run(db_path(demo_db), b)
    args = ["bench", "calibrate", "--db", str(db_path(demo_db)), "--labelled-docs", "1-3",
            "--unlabelled-docs", "4-6", "--labelled", "2", "--draws", "3", "--json"]
    one = CliRunner().invoke(app, [*args, "--run", str(a)])
    assert one.exit_code == 0, one.output
    res = json.loads(one.output)
    assert res["judge"].startswith(f"run {a} (fake · rocketeval")
    assert {r["dimension"] for r in res["rows"]} == {"coherence", "consistency", "fluency",
                                                    "relevance"}
    both = CliRunner().invoke(app, [*args, "--run", str(a), "--run", str(b)])
    assert both.exit_code == 0, both.output
    ens = json.loads(both.output)
    assert ens["judge"].startswith(f"ensemble of runs {a} (fake") and f" + {b} (" in ens["judge"]
    assert [r["n_intervals"] + round(r["no_interval"] * 48) for r in ens["rows"]] == [48] * 4
    bad = CliRunner().invoke(app, ["bench", "calibrate", "--run", str(a)])
    assert bad.exit_code == 2 and "--db and --run go together" in bad.output


def test_judge_alone_beyond_the_human_scale_is_explained_and_the_table_summarised():
    """The judge rates C far above A and B: mapped onto the humans' 1–5 by mean and spread,
    C's "judge alone" lands above 5 (the tour showed 5.06); the row says why. The table opens
    with one line: how many intervals the judge narrowed and the median width ratio."""
    judge = {"A": [0.0, 0.0, 0.0, 0.0], "B": [0.1, 0.1, 0.1, 0.1], "C": [1.0, 1.0, 1.0, 1.0]}
    human = {"A": [1, 1, 1, 2], "B": [4, 5, 4, 5], "C": [5, 5, 5, 5]}
    df = pd.DataFrame([{"item_pk": 10 * k + i, "system": s, "dimension": "d", "group": f"g{i}",
                        "metric": judge[s][i], "human": float(human[s][i])}
                       for k, s in enumerate("ABC") for i in range(4)])
    out = calibrated(df, set(df["item_pk"]))
    c = out["C"]["d"]
    assert c["judge_only"] > 5
    assert f"judge alone {c['judge_only']:.2f} lies above the highest labelled human score (5)" \
        in c["reason"]
    assert "lies above" not in (out["B"]["d"]["reason"] or "")
    view = calibrated_view({"systems": out, "n_labelled_per_system": None, "method": METHOD,
                            "labelled_from": "dev groups", "note": None})
    ratios = [r["width vs humans"] for r in view["rows"] if r["width vs humans"] ==
              r["width vs humans"]]
    narrowed = sum(x < 1 - 1e-9 for x in ratios)
    assert view["summary"].startswith(f"The judge narrowed {narrowed} of {len(ratios)} "
                                      "intervals")
    assert f"median width ratio {float(np.median(ratios)):.2f}" in view["summary"]
    rows = [{"width vs humans": 0.8}, {"width vs humans": 1.0}, {"width vs humans": float("nan")}]
    assert calibrated_summary(rows) == (
        "The judge narrowed 1 of 2 intervals (calibrated narrower than humans alone); median "
        "width ratio 0.90 (1.00 = no gain); 1 of 3 rows without one (see *why*).")
