"""Questions written from examples with the fake judge: contrastive (dev pairs people scored
furthest apart, held-out groups never read) and inductive (people's notes), each proposal with
its provenance, every copy reported with what it copied, the cost before the click, the CLI."""

from __future__ import annotations

import json

import pytest

from checkeval_core.checklists.editing import provenance_of, questions
from checkeval_core.checklists.grounded import (
    SUB_NAME,
    contrast_pairs,
    generate,
    people_notes,
)
from checkeval_core.checklists.review import decide
from checkeval_core.checklists.review_view import review_table
from checkeval_core.judges.fake import FakeJudge
from checkeval_core.runs.estimate import estimate_generate
from tests.helpers import cli, evidence_task


def test_contrast_pairs_are_dev_groups_furthest_apart(db):
    evidence_task(db)
    pairs = contrast_pairs(db, "ev", "coherence", 20)
    assert [p["group"] for p in pairs] == [f"g{i}" for i in range(6)]  # g6, g7 held out
    for p in pairs:
        assert (p["better_score"], p["worse_score"]) == (4, 1)
        assert p["better_item"].startswith(p["group"]) and p["worse_item"].startswith(p["group"])
    assert len(contrast_pairs(db, "ev", "coherence", 2)) == 2


def test_contrastive_proposals_carry_their_pair_and_copies_are_reported(db):
    evidence_task(db)
    j = FakeJudge()
    res = generate(db, "ev", "coherence", "contrastive", "fake", n=2, judge_obj=j)
    assert res["requests"] == 2 and j.calls == 2 and res["added"]
    for a in res["added"]:
        assert a["sub_dimension"] == SUB_NAME and a["provenance"]["strategy"] == "contrastive"
        (p,) = a["provenance"]["pairs"]
        assert p["group"] in ("g0", "g1") and p["better_score"] > p["worse_score"]
    stored = {q["id"]: q for q in questions(db, "ev")}
    first = stored[res["added"][0]["id"]]
    assert first["status"] == "proposed" and first["origin"] == "contrastive"
    assert provenance_of(db, [first["id"]]) == {first["id"]: res["added"][0]["provenance"]}
    table = review_table([first], set(), provenance=provenance_of(db, [first["id"]]))
    p = res["added"][0]["provenance"]["pairs"][0]
    assert table.loc[0, "provenance"] == (f"{p['better_item']} (people 4) over "
                                          f"{p['worse_item']} (1) on {p['group']}")
    # asked again: every answer copies a question now there — none added, each reported
    again = generate(db, "ev", "coherence", "contrastive", "fake", n=2, judge_obj=FakeJudge())
    assert not again["added"] and again["copies"]
    assert {a["id"] for a in res["added"]} <= {c["copied_id"] for c in again["copies"]}
    assert all(c["copied_text"] and c["provenance"]["pairs"] for c in again["copies"])
    assert all("copies question #" in p for p in again["problems"])


def test_contrastive_single_mode_and_cost_before_the_click(db):
    evidence_task(db)
    est = estimate_generate(db, "ev", "coherence", "contrastive", "fake", n=3, mode="single")
    assert est.calls == 3
    assert not [q for q in questions(db, "ev") if q["origin"] == "contrastive"]  # nothing stored
    res = generate(db, "ev", "coherence", "contrastive", "fake", n=3, mode="single",
                   judge_obj=FakeJudge())
    assert res["mode"] == "single" and res["requests"] == 3
    assert len(res["added"]) + len(res["copies"]) == 3


def test_inductive_reads_peoples_notes_and_refuses_without_them(db):
    q = evidence_task(db)
    with pytest.raises(ValueError, match="no people's notes"):
        generate(db, "ev", "coherence", "inductive", "fake", judge_obj=FakeJudge())
    decide(db, [q["constant"]], "ann", "reject", "vague: what makes a summary good?")
    notes = people_notes(db, "ev", "coherence")
    assert notes == [{"kind": "reviewer's reason", "where": f"question #{q['constant']}",
                      "text": "vague: what makes a summary good?"}]
    res = generate(db, "ev", "coherence", "inductive", "fake", n=2, judge_obj=FakeJudge())
    assert res["requests"] == 1 and res["added"]
    assert all(a["provenance"] == {"strategy": "inductive", "notes": notes}
               for a in res["added"])
    assert {q_["origin"] for q_ in questions(db, "ev") if q_["id"] in
            {a["id"] for a in res["added"]}} == {"inductive"}


def test_cli_augment_contrastive_json_and_refusals(db_path):
    from checkeval_core.store import open_db

    db = open_db(db_path)
    evidence_task(db)
    db.close()
    r = cli(db_path, "checklist", "augment", "--task", "ev", "--dimension", "coherence",
            "--strategy", "contrastive", "--judge", "fake", "--n", "1", "--json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["added"] and out["added"][0]["provenance"]["pairs"][0]["group"] == "g0"
    bad = cli(db_path, "checklist", "augment", "--task", "ev", "--dimension", "coherence",
              "--strategy", "deductive", "--judge", "fake")
    assert bad.exit_code == 2 and "contrastive" in (bad.stdout + bad.stderr)
    none = cli(db_path, "checklist", "augment", "--task", "ev", "--dimension", "coherence",
               "--strategy", "inductive", "--judge", "fake")
    assert none.exit_code == 2 and "no people's notes" in (none.stdout + none.stderr)


def test_diversify_reports_an_exact_copy_instead_of_skipping_it(db):
    evidence_task(db)
    first = generate(db, "ev", "coherence", "diversify", "fake", n=2, judge_obj=FakeJudge())
    assert first["added"]
    again = generate(db, "ev", "coherence", "diversify", "fake", n=2, judge_obj=FakeJudge())
    assert not again["added"]
    said = [p for p in again["problems"] if "copies an existing question, not added" in p]
    assert {a["text"] for a in first["added"]} <= {p.rsplit(": ", 1)[1] for p in said}


@pytest.mark.embedded
@pytest.mark.slow
def test_embedded_contrastive_question_from_one_pair(db):
    """The real 0.5B model writes one question from the dev pair people scored furthest apart
    (single mode, under the question grammar), with that pair as its provenance."""
    evidence_task(db)
    res = generate(db, "ev", "coherence", "contrastive", "embedded", n=1)
    assert res["mode"] == "single" and res["requests"] == 1
    got = res["added"] + res["copies"]
    assert len(got) == 1 and got[0]["text"].endswith("?"), res["problems"]
    assert got[0]["provenance"]["pairs"][0]["group"] == "g0"
