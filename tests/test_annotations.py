"""Human answers: atomic import with clear errors, export, agreement (hand-computed)."""

import json

import pytest

from checkeval_core.annotation.agreement_report import agreement_report
from checkeval_core.annotation.files import (
    AnnotationFileError,
    export_annotations,
    import_annotations,
)
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path
from tests.helpers import load_demo_copy, run_cli


def qtext(db, i):
    return db.execute("SELECT text FROM question WHERE task_id = 1 ORDER BY id LIMIT 1 OFFSET ?",
                      [i]).fetchone()[0]


def test_import_errors_are_atomic(db, tmp_path):
    load_demo_copy(db)
    q0 = qtext(db, 0)
    bad = tmp_path / "a.csv"
    bad.write_text("annotator,item_id,question,answer\n"
                   f'ann,8764fb95bfad-M11,"{q0}",yes\n'
                   f'ann,nope,"{q0}",yes\n'
                   "ann,8764fb95bfad-M11,Is this unknown?,no\n"
                   f'ann,8764fb95bfad-M11,"{q0}",maybe\n')
    with pytest.raises(AnnotationFileError) as e:
        import_annotations(db, "summeval-demo", bad)
    msg = str(e.value)
    assert "a.csv, line 3, field 'item_id'" in msg
    assert "a.csv, line 4, field 'question'" in msg
    assert "a.csv, line 5, field 'answer'" in msg
    assert db.execute("SELECT COUNT(*) FROM annotation").fetchone()[0] == 0


def test_agreement_hand_computed(db, tmp_path):
    load_demo_copy(db)
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", limit=2)
    execute_run(db_path(db), rid)
    verdicts = {(r[0], r[1]): r[2] for r in db.execute(
        "SELECT i.item_id, a.question_id, a.verdict FROM answer a JOIN item i ON i.id = "
        "a.item_id WHERE run_id = ?", [rid])}
    items = sorted({k[0] for k in verdicts})
    qids = [db.execute("SELECT id FROM question WHERE task_id = 1 ORDER BY id LIMIT 1 OFFSET ?",
                       [i]).fetchone()[0] for i in range(4)]
    lines = []
    # alice copies the judge; bob copies it except on the first two units; carol says unsure
    units = [(it, q) for it in items for q in qids]
    for k, (it, q) in enumerate(units):
        v = verdicts[(it, q)]
        flip = {"yes": "no", "no": "yes"}[v]
        lines.append({"annotator": "alice", "item_id": it, "question": str(q), "answer": v})
        lines.append({"annotator": "bob", "item_id": it, "question": str(q),
                      "answer": flip if k < 2 else v})
        lines.append({"annotator": "carol", "item_id": it, "question": str(q),
                      "answer": "unsure"})
    f = tmp_path / "a.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert import_annotations(db, "summeval-demo", f)["n_annotations"] == 3 * len(units)
    rep = agreement_report(db, "summeval-demo", [rid])
    assert rep["human_human"]["n_units"] == 8  # unsure excluded
    hj = rep["human_judge"]["fake"]
    # majority of (alice, bob): ties on the two flipped units are left out
    assert hj["n_units"] == 6
    # what each figure rests on: 2 summaries of one document, by 2 systems
    for block in (rep["human_human"], hj):
        assert (block["n_items"], block["n_groups"], block["n_systems"]) == (2, 1, 2)
    assert rows_equal_kappa(hj["cohen_kappa"])
    pq = {d["question_id"]: d["percent_agreement"] for d in rep["per_question"]}
    assert [pq[q] for q in qids] == [0.5, 0.5, 1.0, 1.0]  # the two flipped units
    assert all(v["n"] == 2 for v in rep["likert"].values())  # 2 annotated items per dimension
    out = export_annotations(db, "summeval-demo")
    assert len(out) == 3 * len(units) and {"created_at", "updated_at"} <= set(out[0])


def rows_equal_kappa(k):
    import math

    return math.isnan(k) or k == pytest.approx(1.0)  # humans agree with the judge everywhere


def test_cli_agreement_json(tmp_path):
    dbf = tmp_path / "c.db"
    base = ["--db", str(dbf)]
    run_cli([*base, "demo"], check=True)
    r = run_cli([*base, "agreement", "--task", "summeval-demo", "--json"], check=True)
    out = json.loads(r.stdout)
    from checkeval_core.stats.bootstrap import MIN_GROUPS as m

    no_ci = (f"no interval: needs ≥ {m} groups (documents / contexts / queries) (n=0)",
             f"no interval: too few units (0 on 0 group(s); needs ≥ {m} groups — documents / "
             "contexts / queries)")
    assert out == {"human_human": {"krippendorff_alpha": None, "fleiss_kappa": None,
                                   "n_units": 0, "n_items": 0, "n_groups": 0, "n_systems": 0,
                                   "ci": {"krippendorff_alpha": [None, None],
                                          "fleiss_kappa": [None, None]},
                                   "ci_reasons": {"krippendorff_alpha": no_ci[0],
                                                  "fleiss_kappa": no_ci[1]}},
                   "human_judge": {}}


def test_an_import_never_replaces_a_stored_answer(db, tmp_path):
    """A second file (or a file naming a team member) overwrote a person's stored answer in
    place, with no trace: the same answer again is a duplicate, another one refuses the file
    with its line, and nothing of that file is stored."""
    from checkeval_core.annotation import jobs as J

    load_demo_copy(db)
    ITEM = "8764fb95bfad-M11"
    first = tmp_path / "first.csv"
    first.write_text(f"annotator,item_id,question,answer\nann,{ITEM},\"{qtext(db, 0)}\",yes\n")
    assert import_annotations(db, "summeval-demo", first)["n_annotations"] == 1
    again = tmp_path / "again.csv"
    again.write_text("annotator,item_id,question,answer\n"
                     f"ann,{ITEM},\"{qtext(db, 0)}\",yes\nann,{ITEM},\"{qtext(db, 1)}\",no\n")
    r = import_annotations(db, "summeval-demo", again)
    assert (r["n_annotations"], r["n_duplicates"]) == (1, 1)
    other = tmp_path / "other.csv"
    other.write_text("annotator,item_id,question,answer\n"
                     f"ann,{ITEM},\"{qtext(db, 2)}\",yes\nann,{ITEM},\"{qtext(db, 0)}\",no\n")
    before = db.execute("SELECT annotator, item_id, question_id, value, updated_at FROM "
                        "annotation ORDER BY id").fetchall()
    with pytest.raises(AnnotationFileError, match="other.csv, line 3, field 'answer': 'no' "
                                                  "conflicts with 'yes' already stored"):
        import_annotations(db, "summeval-demo", other)
    assert db.execute("SELECT annotator, item_id, question_id, value, updated_at FROM "
                      "annotation ORDER BY id").fetchall() == before
    # an answer given in a job is a stored answer too
    jid = J.create_job(db, "summeval-demo", ["bea"], 1, n_items=1)
    pk = J.queue(db, jid, "bea")[0]["item_pk"]
    q = J.job_questions(db, jid, pk)[0]
    J.save_answer(db, jid, "bea", pk, q["id"], "no")
    iid = db.execute("SELECT item_id FROM item WHERE id = ?", [pk]).fetchone()[0]
    mine = tmp_path / "mine.csv"
    mine.write_text(f"annotator,item_id,question,answer\nbea,{iid},\"{q['text']}\",yes\n")
    with pytest.raises(AnnotationFileError, match="mine.csv, line 2.*already stored for 'bea'"):
        import_annotations(db, "summeval-demo", mine)
