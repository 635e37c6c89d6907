"""One short real run with the embedded judge: 2 items x a 3-question checklist, rocketeval."""

import json

import pytest

from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.runs import create_run, execute_run, get_run
from checkeval_core.runs.score_read import run_scores
from checkeval_core.store import db_path


@pytest.mark.embedded
def test_embedded_rocketeval_run(db, tmp_path):
    p = tmp_path / "t.jsonl"
    src = "The museum reopened on Friday after two years of repairs. Entry is free in June."
    p.write_text("\n".join(json.dumps(r) for r in [
        {"id": "good", "group_id": "g", "source": src,
         "output": "The museum reopened on Friday after repairs; entry is free in June."},
        {"id": "bad", "group_id": "g", "source": src,
         "output": "The museum closed forever on Monday and tickets cost 90 euros."}]) + "\n")
    import_file(db, p, "t", kind="summarization")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"consistency": {"definition": "facts match the article",
                                             "sub_dimensions": {"Facts": {"seed": [
                                                 "Does the summary say the museum reopened?",
                                                 "Is the summary consistent with the article?",
                                                 "Does the summary state the entry price "
                                                 "correctly?"]}}}}))
    import_checklist(db, "t", c)
    freeze(db, "t")
    rid = create_run(db, "t", "embedded", "rocketeval")
    run = execute_run(db_path(db), rid)
    assert run["status"] == "completed" and run["n_answers"] == 6
    assert get_run(db, rid)["scoring_mode"] == "logprob"
    s = {r["item_id"]: r["value"] for r in run_scores(db, rid, "mean_p_yes")}
    assert s["good"] > s["bad"]
