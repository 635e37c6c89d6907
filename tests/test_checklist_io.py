"""Importing the published checklists: unique counts, merged origins, YAML = JSON, CLI freeze."""

import json

import pytest

from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.io import (
    ChecklistError,
    export_checklist,
    import_checklist,
    split_questions,
)
from checkeval_core.checklists.versions import freeze
from tests.helpers import CK, new_task, run_cli

SUMMEVAL = {"coherence": 23, "consistency": 29, "fluency": 39, "relevance": 31}
TOPICAL = {"coherence": 21, "engagingness": 32, "groundedness": 26, "naturalness": 29}




def test_split_after_question_marks():
    assert split_questions("Is A ok? Does B  hold?\n Are C fine?") == \
        ["Is A ok?", "Does B hold?", "Are C fine?"]


@pytest.mark.parametrize("src,counts", [("summeval.json", SUMMEVAL),
                                        ("raw/summeval_questions", SUMMEVAL),
                                        ("topical_chat.json", TOPICAL),
                                        ("raw/topical_chat_questions", TOPICAL)])
def test_published_counts(db, tmp_path, src, counts):
    t = new_task(db, tmp_path)
    res = import_checklist(db, t, CK / src)
    assert res["dimensions"] == counts
    qs = questions(db, t)
    assert all(q["status"] == "kept" for q in qs)
    # the elaboration files repeat their seeds: one question recording both origins
    assert any(set(q["origins"]) >= {"seed", "elaboration"} for q in qs)
    assert import_checklist(db, t, CK / src)["n_questions"] == 0  # re-import adds nothing


def test_yaml_and_json_give_the_same_version_hash(db, tmp_path):
    a, b = new_task(db, tmp_path, "a"), new_task(db, tmp_path, "b")
    import_checklist(db, a, CK / "summeval.json")
    import_checklist(db, b, CK / "raw" / "summeval_questions")
    assert freeze(db, a)["hash"] == freeze(db, b)["hash"]


def test_own_format_round_trip(db, tmp_path):
    a = new_task(db, tmp_path, "a")
    import_checklist(db, a, CK / "topical_chat.json")
    out = tmp_path / "x.json"
    out.write_text(json.dumps(export_checklist(db, a)))
    b = new_task(db, tmp_path, "b")
    assert import_checklist(db, b, out)["dimensions"] == TOPICAL
    assert freeze(db, a)["hash"] == freeze(db, b)["hash"]


def test_bad_files(db, tmp_path):
    t = new_task(db, tmp_path)
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ChecklistError, match="x.json"):
        import_checklist(db, t, bad)
    y = tmp_path / "coherence_seed.yaml"
    y.write_text("definition: x\n")
    with pytest.raises(ChecklistError, match="sub_aspect"):
        import_checklist(db, t, y)


def test_cli_freeze_json_counts(tmp_path):
    dbp = tmp_path / "c.db"
    data = tmp_path / "d.csv"
    data.write_text("id,output\n1,x\n", encoding="utf-8")

    def cli(*a):
        return run_cli(list(a), db=dbp)

    assert cli("import", str(data), "--task", "only").returncode == 0
    r = cli("checklist", "import", str(CK / "raw" / "summeval_questions"), "--task", "only")
    assert r.returncode == 0, r.stderr
    r = cli("checklist", "freeze", "--task", "only", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n_questions"] == 122
    r = cli("checklist", "import", str(tmp_path / "missing.yaml"), "--task", "only")
    assert r.returncode == 2 and "no such file" in r.stderr
