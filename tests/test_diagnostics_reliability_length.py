"""Question diagnostics show each question's stability under rewording (flip rate, p(Yes) SD)
and its bias towards length (length ρ), with the flags "unstable" and "follows length": values
computed by hand on hand-built runs, blanks with their reason, and the Analysis page's columns
and filter."""

from __future__ import annotations

import math

import pytest

from checkeval_core.analysis.analysis_view import evidence_page
from checkeval_core.analysis.diagnostics import (
    FOLLOWS_LENGTH_RHO,
    MIN_FLAG_GROUPS,
    UNSTABLE_FLIP,
    question_diagnostics,
)
from checkeval_core.analysis.notes import diagnostics_notes
from checkeval_core.checklists.versions import get_version
from checkeval_core.runs import create_run
from checkeval_core.runs.score_write import compute_scores
from checkeval_core.store import now_iso
from checkeval_core.tasks import items
from tests.helpers import analysis_page, make_runs_task

# 12 items over 6 documents; item k's output has k + 2 words (lengths 2..13, all different)
N = 12
ROWS = [{"id": f"i{k:02d}", "group_id": f"d{k // 2}", "system_id": f"s{k % 2}",
         "source": "The council of the town approved a new park.",
         "output": " ".join(["park"] * (k + 2)), "scores": {"fluency": float(k % 5)}}
        for k in range(N)]
QL, QF, QS = ("Is the summary detailed?", "Is the summary fluent?", "Is the summary clear?")
CHECKLIST = {"fluency": {"definition": "grammar and wording", "sub_dimensions": {
    "Grammar": {"seed": [QL, QF, QS]}}}}
# QL: Yes exactly on the six longest outputs, in every run
LONG = {k: k >= 6 for k in range(N)}
# QF: Yes on the even items in phrasing 0; phrasing 1 flips items 1, 4 and 9 (documents 0, 2, 4)
FLIPPED = {1, 4, 9}
# QS: the same answers in every run, Yes on items whose lengths' ranks sum to half the total
STABLE = {k: k in (0, 3, 5, 6, 8, 11) for k in range(N)}


@pytest.fixture
def task(db, tmp_path):
    assert MIN_FLAG_GROUPS <= 6  # the flags below rest on all six documents
    return make_runs_task(db, tmp_path, ROWS, CHECKLIST)


def qids(db) -> dict[str, int]:
    return {q["text"]: q["id"] for q in get_version(db, "t")["content"]["questions"]}


def stored_run(db, phrasing: int, only: range = range(N), judge: str = "fake") -> int:
    """A completed rocketeval run asked with ``phrasing`` whose text answers (no p(Yes)) are
    the ones above, on items ``only``."""
    rid = create_run(db, "t", judge, "rocketeval", params={"phrasing": phrasing})
    q, pks = qids(db), [i["id"] for i in items(db, "t")]
    for k in only:
        for text, yes in ((QL, LONG[k]), (QF, (k % 2 == 0) != (phrasing == 1 and k in FLIPPED)),
                          (QS, STABLE[k])):
            db.execute("INSERT INTO answer (run_id, item_id, question_id, unit, dimension, "
                       "verdict, p_yes, mode, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                       [rid, pks[k], q[text], "", "fluency", "yes" if yes else "no", None,
                        "text", now_iso()])
    compute_scores(db, rid)
    db.execute("UPDATE run SET status = 'completed' WHERE id = ?", [rid])
    return rid


def by_question(db, run_ids) -> dict[str, dict]:
    return {d["question"]: d for d in question_diagnostics(db, run_ids)}


def test_flip_rate_and_sd_of_two_phrasings_by_hand(db, task):
    runs = [stored_run(db, 0), stored_run(db, 1)]
    d = by_question(db, runs)
    # QF: 3 of the 12 items change verdict between the two wordings
    assert d[QF]["flip_rate"] == pytest.approx(3 / 12)
    assert d[QF]["flip_n"] == 12
    # each flipped item has values (1, 0): variance 1/2 (ddof 1); the others 0 → sqrt(1.5 / 12)
    assert d[QF]["p_yes_sd"] == pytest.approx(math.sqrt(0.5 * 3 / 12))
    assert 3 / 12 > UNSTABLE_FLIP and "unstable" in d[QF]["flags"]
    for q in (QL, QS):
        assert d[q]["flip_rate"] == 0 and d[q]["p_yes_sd"] == 0
        assert "unstable" not in d[q]["flags"] + d[q]["weak_signs"]
    notes = " ".join(diagnostics_notes(list(d.values()), 2))
    assert "Blank flip rate" not in notes


def test_a_question_whose_yes_follows_length_is_flagged(db, task):
    runs = [stored_run(db, 0), stored_run(db, 1)]
    d = by_question(db, runs)
    # QL: Yes on the six longest of 12 outputs. Ranks: answers 3.5 (×6) and 9.5 (×6), lengths
    # 1..12; Σ(x − x̄)(y − ȳ) = 3·18 + 3·18 = 108, Σ(x − x̄)² = 108, Σ(y − ȳ)² = 143
    assert d[QL]["length_r"] == pytest.approx(math.sqrt(108 / 143))
    assert d[QL]["length_n"] == 12
    assert d[QL]["length_r"] >= FOLLOWS_LENGTH_RHO and "follows length" in d[QL]["flags"]
    # QS: its Yes items' length ranks sum to 39 = half of 78 → ρ = 0
    assert d[QS]["length_r"] == pytest.approx(0, abs=1e-12)
    assert "follows length" not in d[QS]["flags"] + d[QS]["weak_signs"]
    assert "follows length" not in d[QF]["flags"] + d[QF]["weak_signs"]


def test_one_run_leaves_flip_rate_blank_and_says_why(db, task):
    run = stored_run(db, 0)
    diag = question_diagnostics(db, [run])
    assert all(math.isnan(x["flip_rate"]) and math.isnan(x["p_yes_sd"]) for x in diag)
    assert all(x["flip_n"] is None for x in diag)
    notes = diagnostics_notes(diag, 1)
    line = next(n for n in notes if n.startswith("Blank flip rate and p(Yes) SD"))
    assert "needs ≥ 2 selected runs of one checklist version, judge and method" in line
    assert "1 run selected" in line and "phrasing" in line and "Run page" in line
    # the length correlation needs one run only (the same value as with both wordings)
    d = {x["question"]: x for x in diag}
    assert d[QL]["length_r"] == pytest.approx(math.sqrt(108 / 143))
    assert "follows length" in d[QL]["flags"]


def test_runs_asked_with_the_same_wording_are_not_a_reliability_set(db, task):
    runs = [stored_run(db, 0), stored_run(db, 0)]
    diag = question_diagnostics(db, runs)
    assert all(math.isnan(x["flip_rate"]) for x in diag)
    line = next(n for n in diagnostics_notes(diag, 2) if n.startswith("Blank flip rate"))
    assert f"runs #{runs[0]}, #{runs[1]} were asked with the same wording (phrasing=0)" in line
    # another judge is not another wording either
    other = stored_run(db, 1, judge="embedded")
    diag = question_diagnostics(db, [runs[0], other])
    assert all(math.isnan(x["flip_rate"]) for x in diag)


def test_unstable_on_too_few_documents_is_listed_not_flagged(db, task):
    few = range(2 * (MIN_FLAG_GROUPS - 1))  # the items of MIN_FLAG_GROUPS - 1 documents
    runs = [stored_run(db, 0, only=few), stored_run(db, 1, only=few)]
    d = by_question(db, runs)[QF]
    assert d["flip_rate"] > UNSTABLE_FLIP
    assert "unstable" not in d["flags"] and "unstable" in d["weak_signs"]
    assert d["flag_note"] == (f"not flagged: answers on {MIN_FLAG_GROUPS - 1} group(s), fewer "
                              f"than the {MIN_FLAG_GROUPS} a flag needs")


def test_evidence_page_names_the_compared_runs_and_the_filter(db, task):
    runs = [stored_run(db, 0), stored_run(db, 1)]
    ev = evidence_page(db, "t", runs)
    assert any(f"compare runs #{runs[0]}, #{runs[1]}" in n and "phrasings 0, 1" in n
               for n in ev["notes"])
    q = qids(db)
    assert sorted(ev["unstable_or_length"]) == sorted([q[QL], q[QF]])
    row = next(r for r in ev["diagnostics"] if r["question"] == QF)
    assert "unstable" in row["flags"].split(", ") and "flip_reason" not in row


def test_analysis_page_shows_the_new_columns_and_filters(db, task):
    runs = [stored_run(db, 0), stored_run(db, 1)]
    at = analysis_page("t")
    diag = next(d.value for d in at.dataframe if "flip_rate" in d.value.columns)
    assert {"flip_rate", "p_yes_sd", "flip_n", "length_r", "length_n"} <= set(diag.columns)
    by = diag.set_index("question")
    assert by.loc[QF, "flip_rate"] == pytest.approx(0.25)
    assert by.loc[QL, "length_r"] == pytest.approx(math.sqrt(108 / 143))
    assert "follows length" in by.loc[QL, "flags"] and "unstable" in by.loc[QF, "flags"]
    captions = " ".join(c.value for c in at.caption)
    assert f"compare runs #{runs[0]}, #{runs[1]}" in captions
    at.checkbox(key="an_unstable_length").check().run()
    assert not at.exception, at.exception
    diag = next(d.value for d in at.dataframe if "flip_rate" in d.value.columns)
    assert set(diag["question"]) == {QL, QF}
