"""Frozen versions: hash stability, idempotent freeze, diff; human review and agreement."""

import math

import pytest

from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.review import decide, review_agreement
from checkeval_core.checklists.versions import diff_versions, freeze, get_version
from tests.helpers import import_checklist_seeds, new_task


def test_freeze_hash_and_diff(db, tmp_path):
    t = new_task(db, tmp_path)
    import_checklist_seeds(db, t)
    v1 = freeze(db, t, note="seeds")
    assert v1["new"] and v1["version"] == 1 and v1["n_questions"] == 15
    again = freeze(db, t)
    assert not again["new"] and again["version"] == 1 and again["hash"] == v1["hash"]
    qs = questions(db, t)
    decide(db, [qs[0]["id"]], "ann", "reject", "off topic")
    new_ids = decide(db, [qs[1]["id"]], "ann", "edit", new_text="Is it clearer now?")
    v2 = freeze(db, t, note="reviewed")
    assert v2["version"] == 2 and v2["n_questions"] == 14 and v2["hash"] != v1["hash"]
    d = diff_versions(db, t, 1, 2)
    assert [q["text"] for q in d["removed"]] == [qs[0]["text"]]
    assert d["edited"] == [{"dimension": qs[1]["dimension"], "sub_dimension":
                            qs[1]["sub_dimension"], "before": qs[1]["text"],
                            "after": "Is it clearer now?"}]
    assert d["added"] == []
    content = get_version(db, t, "latest")["content"]
    assert new_ids[0] in [q["id"] for q in content["questions"]]
    assert get_version(db, t, 1)["content"]["questions"][0]["text"] == qs[0]["text"]  # immutable


def test_review_rules_and_agreement(db, tmp_path):
    t = new_task(db, tmp_path)
    import_checklist_seeds(db, t)
    ids = [q["id"] for q in questions(db, t)][:4]
    with pytest.raises(ValueError, match="name"):
        decide(db, ids, " ", "keep")
    with pytest.raises(ValueError, match="reason"):
        decide(db, ids, "a", "reject")
    decide(db, ids, "alice", "keep")
    decide(db, ids[:2], "bob", "keep")
    decide(db, ids[2:], "bob", "reject", "weak")
    ag = review_agreement(db, t)
    assert ag["annotators"] == ["alice", "bob"] and ag["n_questions"] == 4
    # keep/keep on 2, keep/reject on 2: observed 0.5, expected 0.625 -> kappa = -1/3
    assert ag["fleiss_kappa"] == pytest.approx(-1 / 3)
    assert ag["krippendorff_alpha"] == pytest.approx(-0.1666667, abs=1e-6)
    assert sum(p["unanimous"] for p in ag["per_question"]) == 2
    assert questions(db, t)[3]["status"] == "rejected"  # latest decision wins
    decide(db, ids[:1], "carol", "keep")
    assert not math.isnan(review_agreement(db, t)["fleiss_kappa"])
