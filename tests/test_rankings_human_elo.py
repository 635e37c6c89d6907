"""Human Elo on the Rankings page (and `analyze --rankings/--pairs`): each system's rating
with its interval (queries resampled) or "too few votes"; the votes of an annotator flagged
for position bias can be left out, on the page and with `--exclude-position-biased`."""

from __future__ import annotations

import json

import pytest

from checkeval_core.analysis.rankings import MIN_SYSTEM_VOTES, rankings_report
from checkeval_core.analysis.rankings_view import rankings_page
from tests.helpers import build_ranking_task, open_rankings_page, run_cli
from tests.helpers import vote_fair_and_lefty as _vote_everything


@pytest.fixture
def four_queries_flag(monkeypatch):
    """The ranking task has 4 queries, below the small-sample rule's minimum, where no
    position-bias flag is raised (tested in the stats tests); these tests are about leaving a
    flagged annotator out, so the minimum is lowered for them."""
    import checkeval_core.stats.bootstrap as B

    monkeypatch.setattr(B, "MIN_GROUPS", 4)


def test_human_elo_from_few_votes_says_too_few_votes(db):
    rid = build_ranking_task(db)  # 4 imported votes over 3 systems: ≤ 3 per system
    rep = rankings_report(db, rid, n_boot=50)
    assert all(s["n_votes"] < MIN_SYSTEM_VOTES and s["reason"].startswith("too few votes")
               for s in rep["human_elo"]["systems"])
    rows = rankings_page(db, rid, "mean_p_yes", 0.1, None, n_boot=50)["elo"]["rows"]
    assert all(r["human Elo"] is None and "too few votes" in r["human note"] for r in rows)
    at = open_rankings_page()
    elo = next(d.value for d in at.dataframe if "human Elo" in d.value.columns)
    assert set(elo["human Elo"]) == {"—"}  # never a bare number from 4 votes
    assert elo["human note"].str.startswith("too few votes").all()
    assert not any(c.key == "rk_drop_biased" for c in at.checkbox)  # nobody is flagged


def test_enough_votes_give_an_interval_and_biased_votes_can_be_left_out(db, four_queries_flag):
    rid = build_ranking_task(db)
    _vote_everything(db)
    view = rankings_page(db, rid, "mean_p_yes", 0.1, None, n_boot=100)
    assert view["position_bias"]["biased"] == ["lefty"]
    rows = {r["system"]: r for r in view["elo"]["rows"]}
    for r in rows.values():
        assert r["human votes"] >= MIN_SYSTEM_VOTES and r["human note"] == ""
        assert r["human CI low"] <= r["human Elo"] <= r["human CI high"]
    kept = rankings_page(db, rid, "mean_p_yes", 0.1, None, n_boot=100, drop_biased=True)
    assert kept["position_bias"]["dropped"] == ["lefty"]
    assert kept["position_bias"]["n_dropped"] == 12
    assert kept["pairwise"]["n_pairs"] == view["pairwise"]["n_pairs"] - 12
    assert "votes of lefty left out" in kept["elo"]["human_caption"]
    elo = {r["system"]: r["human Elo"] for r in kept["elo"]["rows"]}
    assert elo["sys-best"] > elo["sys-mid"] > elo["sys-low"]
    assert kept["report"]["human_elo"]["n_matches"] == view["report"]["human_elo"][
        "n_matches"] - 12
    # the page: the choice appears beside the position-bias warning
    at = open_rankings_page()
    box = at.checkbox(key="rk_drop_biased")
    assert "lefty" in box.label
    n_pairs = len(at.dataframe(key="rk_pairs").value)
    box.check().run()
    assert not at.exception, at.exception
    assert len(at.dataframe(key="rk_pairs").value) == n_pairs - 12
    assert any("12 votes left out" in c.value for c in at.caption)
    # the caption names annotators (their own text): shown as text, Markdown escaped
    from checkeval_core.textsafe import md_escape

    assert any(c.value == md_escape(kept["elo"]["human_caption"]) for c in at.caption)


def test_cli_leaves_out_position_biased_votes(db, db_path, four_queries_flag):
    rid = build_ranking_task(db)
    _vote_everything(db)
    r = run_cli(["analyze", "--run", str(rid), "--rankings", "--pairs",
                 "--exclude-position-biased", "--bootstrap", "50", "--json"], db=db_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["human_elo"]["excluded_annotators"] == ["lefty"]
    assert out["instance"]["excluded_annotators"] == ["lefty"]
    assert out["instance"]["n_excluded"] == 12
    assert all(s["n_votes"] >= MIN_SYSTEM_VOTES and s["reason"] is None
               for s in out["human_elo"]["systems"])
    bad = run_cli(["analyze", "--run", str(rid), "--exclude-position-biased"], db=db_path)
    assert bad.returncode == 2 and "--rankings or --pairs" in bad.stderr


def test_no_rho_against_human_elo_when_every_elo_is_hidden(db):
    """4 votes: every human Elo is hidden as too few votes, so no ρ against them is printed
    (it said "ρ = 1.00" from those same ratings)."""
    rid = build_ranking_task(db)
    cap = rankings_page(db, rid, "mean_p_yes", 0.1, None, n_boot=50)["elo"]["human_caption"]
    assert "ρ =" not in cap
    assert f"no ρ — every human Elo above is hidden (no system has ≥ {MIN_SYSTEM_VOTES} votes)" \
        in cap
    _vote_everything(db)
    cap = rankings_page(db, rid, "mean_p_yes", 0.1, None, n_boot=50)["elo"]["human_caption"]
    assert "Judge score vs human Elo ρ = " in cap and "too few votes" not in cap
