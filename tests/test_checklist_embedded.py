"""Augmentation once with the real embedded model on one seed question."""

import pytest

from checkeval_core.checklists.augment import augment
from checkeval_core.checklists.editing import add_question, ensure_dimension, ensure_sub, questions
from checkeval_core.datasets import import_file


@pytest.mark.embedded
def test_embedded_elaboration_returns_yes_no_questions(db, tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("id,output\n1,x\n", encoding="utf-8")
    import_file(db, p, "t", kind="summarization")
    dim = ensure_dimension(db, 1, "fluency", "grammar, spelling, word choice and sentence "
                                             "structure of the summary")
    sub = ensure_sub(db, dim, "Grammar")
    add_question(db, 1, dim, sub, "Is the summary free of grammatical errors?", status="kept")
    res = augment(db, "t", "fluency", "elaborate", "embedded", n=3)
    assert res["added"], res["problems"]
    new = [q for q in questions(db, "t") if q["origin"] == "elaboration"]
    assert new and all(q["model"] == "embedded" for q in new)
    assert any(q["text"].endswith("?") and "not_yes_no" not in q["flags"] for q in new)
