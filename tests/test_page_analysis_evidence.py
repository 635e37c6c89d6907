"""AppTests of what the Analysis page rests on: items, groups and systems beside every
agreement number, runs compared on the items they share, hollow bars without an interval,
stability only across distinct judges, a legend on the diagnostics, and sending flagged
questions to review with evidence, choice, confirmation and undo."""

from __future__ import annotations

import json

import pytest

from checkeval_core.analysis.diagnostics import MIN_FLAG_GROUPS
from checkeval_core.checklists.editing import questions
from checkeval_core.demo import load_demo
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path
from tests.helpers import analysis_page


def _run(db, limit: int, method: str = "rocketeval") -> int:
    rid = create_run(db, "summeval-demo", "fake", method, limit=limit)
    execute_run(db_path(db), rid)
    return rid


def _figures(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("info", "caption", "markdown", "warning",
                                                "error") for e in getattr(at, kind))


def test_runs_over_different_items_are_compared_on_the_shared_ones(db):
    load_demo(db)
    big, small = _run(db, 16), _run(db, 3, "checkeval")  # 16 summaries vs 3 of them
    at = analysis_page()
    # the page opens on the run covering most items, never cut down to a 3-item run's items
    assert at.multiselect(key="an_runs").value == [big]
    at.multiselect(key="an_runs").set_value([small, big]).run()
    warn = " ".join(w.value for w in at.warning)
    assert "The selected runs cover different items (" in warn
    assert f"#{big}: 16 items over 1 group(s)" in warn
    assert f"#{small}: 3 items over 1 group(s)" in warn
    assert ("every value below is computed on the 3 items over 1 group(s) that all of them "
            "share.") in warn
    corr = at.dataframe[0].value
    assert set(corr["items"]) == {3} and set(corr["groups"]) == {1}
    assert {"items", "groups", "systems"} <= set(corr.columns)
    # the items behind a bar are the shared ones the bar was computed on
    assert len(next(d.value for d in at.dataframe if "gap" in d.value.columns)) == 3
    # unticked: each run on its own items, and the page says they are not comparable
    at.checkbox(key="an_shared").uncheck().run()
    assert not at.exception, at.exception
    corr = at.dataframe[0].value
    assert set(corr[corr["run"].str.startswith(f"#{big} ")]["items"]) == {16}
    assert "so the values are not comparable" in " ".join(e.value for e in at.error)


def test_a_bar_without_interval_is_hollow(db):
    load_demo(db)
    _run(db, 16)  # one document: no interval anywhere
    at = analysis_page()
    bars = next(f for f in _figures(at) if f["data"][0].get("type") == "bar")
    run = bars["data"][0]
    assert run["marker"]["pattern"]["shape"] == ["/"] * 4
    assert all(c.endswith(", 0.3)") for c in run["marker"]["color"])
    assert any(t["name"] == "hatched, pale: no interval" for t in bars["data"])


@pytest.mark.usefixtures("few_groups_allowed")
def test_agreement_says_what_it_rests_on_and_its_interval(db):
    load_demo(db)
    _run(db, 32), _run(db, 32, "checkeval")
    at = analysis_page()
    text = _texts(at)
    assert ("units answered Yes/No by at least two runs, over 32 items · 2 groups (documents "
            "/ contexts / queries) · 16 systems, 2 runs") in text
    assert "95% CI [" in text  # Krippendorff α over 2 documents has a group interval
    assert "no interval: computed for Krippendorff α (Yes/No) only" in text


def test_stability_needs_distinct_judges_and_stops_at_one(db):
    load_demo(db)
    _, b = _run(db, 32), _run(db, 32)
    db.execute("UPDATE run SET judge_spec = 'openai:other-judge' WHERE id = ?", [b])
    at = analysis_page()
    violin = next(f for f in _figures(at) if f["data"] and f["data"][0].get("type") == "violin")
    assert violin["layout"]["yaxis"]["range"] == [-1.05, 1.05]
    assert violin["data"][0]["spanmode"] == "hard"
    assert len(violin["data"][0]["y"]) == 8  # 2 judges × 4 dimensions
    diag = next(f for f in _figures(at)
                if f["layout"].get("xaxis", {}).get("title", {}).get("text") == "yes-rate")
    assert diag["layout"]["showlegend"] is True
    assert all(t["name"] for t in diag["data"])
    assert diag["layout"]["yaxis"]["range"] == [-1.05, 1.05]


def test_send_flagged_to_review_with_evidence_confirm_and_undo(db):
    load_demo(db)
    _run(db, 16 * MIN_FLAG_GROUPS)
    _run(db, 16 * MIN_FLAG_GROUPS, "checkeval")
    at = analysis_page()
    cands = next(d.value for d in at.dataframe if "groups" in d.value.columns
                 and "answers" in d.value.columns)
    assert len(cands) and set(cands["groups"]) == {MIN_FLAG_GROUPS}
    assert set(cands["items"]) == {16 * MIN_FLAG_GROUPS}
    send = next(b for b in at.button if b.key == "an_send")
    assert send.disabled  # nothing picked yet: nothing moves
    pick = [int(q) for q in cands["question_id"][:2]]
    at.multiselect(key="an_send_pick").set_value(pick).run()
    next(b for b in at.button if b.key == "an_send").click().run()
    assert any("Move 2 questions from kept back to proposed?" in w.value for w in at.warning)
    status = {q["id"]: q["status"] for q in questions(db, "summeval-demo")}
    assert {status[q] for q in pick} == {"kept"}  # asked, not done
    next(b for b in at.button if b.key == "an_send_confirm").click().run()
    assert not at.exception, at.exception
    assert any("2 questions are back in the review queue" in s.value for s in at.success)
    status = {q["id"]: q["status"] for q in questions(db, "summeval-demo")}
    assert {status[q] for q in pick} == {"proposed"}
    assert sum(s == "proposed" for s in status.values()) == 2  # only the picked ones
    next(b for b in at.button if b.key == "an_send_undo").click().run()
    assert any("Undone: 2 questions restored." in s.value for s in at.success)
    status = {q["id"]: q["status"] for q in questions(db, "summeval-demo")}
    assert {status[q] for q in pick} == {"kept"}
