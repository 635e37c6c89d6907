"""The Checklist review page's view-model (checkeval_core.checklists.review_view), without
Streamlit: filter choices, filtering, the table's columns, near-duplicates, the summaries and
the per-query sources."""

from __future__ import annotations

import json

import pytest

from checkeval_core.checklists import review_view as RV
from checkeval_core.checklists.editing import questions
from checkeval_core.datasets import import_file


def q(id_, status="kept", origin="seed", text=None, dimension="Fluency", sub=None, **kw):
    base = {"id": id_, "status": status, "origin": origin, "origins": [origin],
            "text": text or f"question {id_}?", "dimension": dimension, "sub_dimension": sub,
            "parent_id": None, "flags": [], "filter_verdict": None, "filter_criterion": None,
            "filter_reason": None, "reason": None, "item_id": None, "group_id": None}
    return base | kw


def test_filters_open_on_pending_work_and_flagged_questions() -> None:
    qs = [q(1, "kept"), q(2, "proposed", "diversification", sub="Grammar"),
          q(3, "kept", filter_verdict="remove")]  # a seed the filter would remove
    f = RV.review_filters(qs)
    assert f["flagged"] == {3}
    assert f["statuses"] == ["proposed", "filtered", "flagged"]
    assert f["warning"].startswith("1 question(s) a person wrote are flagged")
    assert f["origins"] == ["diversification", "seed"]
    assert f["sub_dimensions"] == ["", "Grammar"]
    only_kept = RV.review_filters([q(1, "kept")])
    assert only_kept["statuses"] == ["kept"] and only_kept["warning"] is None


def test_shown_questions_filters_and_flagged_passes_whatever_its_status() -> None:
    qs = [q(1, "kept"), q(2, "proposed"), q(3, "kept", dimension="Coherence")]
    assert [x["id"] for x in RV.shown_questions(qs, set())] == [1, 2, 3]
    assert [x["id"] for x in RV.shown_questions(qs, {1}, ["proposed", "flagged"])] == [1, 2]
    assert [x["id"] for x in RV.shown_questions(qs, set(), ["kept"], dimensions=["Coherence"])
            ] == [3]
    assert RV.shown_questions(qs, set(), origins=["instance"]) == []


def test_review_table_drops_columns_empty_for_every_row() -> None:
    t = RV.review_table([q(1, filter_verdict="remove"), q(2, reason="")], {1})
    assert list(t.columns) == ["id", "status", "dimension", "question", "origin", "filter"]
    assert t["status"].tolist() == ["kept ⚑", "kept"]
    empty = RV.review_table([q(1, dimension=None, origin="", origins=[])], set())
    assert list(empty.columns) == ["id", "status", "question"]


def test_labels_near_duplicates_and_summaries() -> None:
    assert RV.question_labels([q(7, "proposed", text="Is it fluent?")]) == {
        7: "#7 [proposed] Is it fluent?"}
    qs = [q(1, text="Is the summary fluent and clear?"),
          q(2, "proposed", text="Is the summary fluent and clear enough?"),
          q(3, "rejected", text="Is the summary fluent and clear?"),  # not in the pool
          q(4, text="Is the summary fluent and clear?", group_id="g1")]  # per-query
    pairs = RV.near_duplicates(qs)
    assert [(p["a"], p["b"]) for p in pairs] == [(1, 2)] and pairs[0]["similarity"] >= 0.75
    assert RV.agreement_line({"n_questions": 0}) is None
    line = RV.agreement_line({"n_questions": 4, "annotators": ["a", "b"], "fleiss_kappa": 0.5,
                              "fleiss_units": 4, "krippendorff_alpha": 0.25})
    assert line.startswith("2 reviewers, 4 questions") and "κ = 0.500" in line
    line, rows = RV.diff_view({"added": [{"dimension": "F", "text": "new?"}], "removed": [],
                               "edited": [{"dimension": "F", "before": "a?", "after": "b?"}]})
    assert line == "1 added, 0 removed, 1 edited"
    assert rows == [{"change": "added", "dimension": "F", "question": "new?"},
                    {"change": "edited", "dimension": "F", "question": "a? → b?"}]
    v = {"version": 3, "n_questions": 9, "hash": "abcdef0123456789", "new": False}
    assert RV.freeze_message(v) == ("Version 3: 9 questions, hash abcdef012345 "
                                    "(identical to an existing one)")
    assert RV.freeze_message(v, "instance") == "Instance version 3: 9 questions"
    assert RV.DECISION_FLASH["reject"].format(n=2) == "Rejected 2 question(s)"


def test_per_query_checklists_from_each_source(db, tmp_path) -> None:
    recs = [{"id": f"{g}:s{k}", "group_id": g, "system_id": f"s{k}", "input": f"query {g}",
             "output": f"answer {k}"} for g in ("q1", "q2") for k in range(2)]
    p = tmp_path / "t.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    import_file(db, p, "t", kind="instruction")
    with pytest.raises(ValueError, match="source 'web'"):
        RV.per_query_checklists(db, "t", "web")
    r = RV.per_query_checklists(db, "t", "file", filename="mine.jsonl",
                                data=b'{"group_id": "q1", "questions": ["Is it short?"]}\n')
    assert r == {"message": "Imported 1 questions for 1 queries from mine.jsonl",
                 "problems": []}
    r = RV.per_query_checklists(db, "t", "fixed")
    assert r["message"] == "Fixed checklist given to 2 queries"
    n_fixed = len([x for x in questions(db, "t", instance=None) if x["status"] == "kept"])
    assert n_fixed >= 2
    r = RV.per_query_checklists(db, "t", "generate", judge="fake", fresh=True, mode="list")
    assert r["message"].endswith("tick *Rewrite* to ask afresh)")
    assert " for 2 queries (0 skipped; " in r["message"], r
