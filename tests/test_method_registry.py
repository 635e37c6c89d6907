"""The method registry binds a name to code: a new method is one entry (planner + prompt) and
runs end to end; unknown names fail with the available ones; the run table no longer limits
method names (migration m0009), and an old database upgrades keeping every row."""

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from checkeval_core import migrations
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.judges.base import BinaryRequest
from checkeval_core.judges.fake import fake_p_yes
from checkeval_core.runs import create_run, execute_run, get_run
from checkeval_core.runs import registry as R
from checkeval_core.runs.methods import Work
from checkeval_core.runs.score_read import run_scores
from checkeval_core.runs.scorers import score_yes_no
from checkeval_core.store import db_path, open_db
from tests.helpers import give_old_database_todays_answer_columns, make_runs_task

ROWS = [{"id": f"d{g}-s{s}", "group_id": f"d{g}", "system_id": f"s{s}",
         "source": f"Town {g} approved a new park; work starts in May.",
         "output": ["The council approved a park in May.", "Cats like parks.",
                    "The town approved a new park and work begins in May."][s],
         "scores": {"fluency": float(s + 1)}} for g in range(2) for s in range(3)]
CHECKLIST = {"fluency": {"definition": "wording", "sub_dimensions": {"Grammar": {"seed": [
    "Is the park summary grammatical?", "Does the summary mention the council approving?"]}}}}

# -- the toy method: its prompt and its planner; the scorer is an existing one ---------------
TOY_SYSTEM = "You check one rule against a text. Answer Yes or No."


def toy_context(item):
    return (f"Text to check:\n{item['output']}\n\n",)


def plan_toy(item, ctx):
    out = []
    for q in ctx["content"]["questions"]:
        req = BinaryRequest(system=TOY_SYSTEM, context=toy_context(item),
                            question=f"Rule: {q['text']}")

        def parse(res, q=q):
            return [{"question_id": q["id"], "unit": "", "dimension": q["dimension"],
                     "verdict": res.verdict, "p_yes": res.p_yes, "value": None,
                     "mode": res.mode, "raw": res.raw, "error": res.error}]

        out.append(Work(item["id"], "binary", req, [(q["id"], "", q["dimension"])], parse))
    return out


TOY = R.Method("toy", "Toy", "this test", "one Yes/No per rule, the text first",
               ("share_yes", "mean_p_yes"), binary=True, per_question=True, plan=plan_toy,
               score=score_yes_no)


@pytest.fixture
def toy():
    R.register_method(TOY)
    yield TOY
    R.unregister_method("toy")


@pytest.fixture
def task(db, tmp_path):
    return make_runs_task(db, tmp_path, ROWS, CHECKLIST)


def test_a_new_method_is_one_registry_entry(db, task, toy):
    rid = create_run(db, task, "fake", "toy", limit=4)
    run = execute_run(db_path(db), rid)
    assert run["status"] == "completed", run["error"]
    assert run["params"]["aggregation"] == "share_yes"  # its entry's primary
    assert R.primary_aggregation(run) == "share_yes"
    # scores recomputed from the fake judge's documented rule on the toy's own prompt
    got = {r["item_id"]: r["value"] for r in run_scores(db, rid)}
    questions = [q for sub in CHECKLIST["fluency"]["sub_dimensions"].values() for q in sub["seed"]]
    for row in ROWS[:4]:
        text = toy_context(row)[0]
        yes = [fake_p_yes(f"Rule: {q}", text) >= 0.5 for q in questions]
        assert got[row["id"]] == pytest.approx(sum(yes) / len(yes))
    assert {r["aggregation"] for r in run_scores(db, rid, "all")} == {"share_yes", "mean_p_yes"}
    # the CLI accepts it (help and validation read the registry) with no other change
    from checkeval_core.cli import app

    res = CliRunner().invoke(app, ["run", "--task", task, "--judge", "fake", "--method", "toy",
                                   "--limit", "2", "--json", "--quiet"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.strip().splitlines()[-1])["status"] == "completed"
    assert "toy" in R.per_question_methods()
    # the annotation page compares a person with every per-question method, the toy included
    from checkeval_core.annotation import jobs as J
    from checkeval_core.checklists.versions import get_version

    jid = J.create_job(db, task, ["ann"], 1, n_items=4)
    run_items = set(get_run(db, rid)["item_ids"])
    item = next(r["item_pk"] for r in J.queue(db, jid, "ann") if r["item_pk"] in run_items)
    qs = get_version(db, task)["content"]["questions"]
    # blind until the person submitted the item: answer it, submit, then compare
    for q in J.job_questions(db, jid, item):
        J.save_answer(db, jid, "ann", item, q["id"], "yes")
    J.submit_item(db, jid, "ann", item)
    table, labels = J.judge_comparison(db, jid, "ann", item, qs)
    assert f"#{rid} fake toy" in labels
    assert {row[f"#{rid} fake toy"] for row in table} <= {"yes", "no"}


def test_unknown_method_names_the_available_ones(db, task):
    with pytest.raises(ValueError, match=r"Unknown method 'tick'\. Available: checkeval, "
                                         r"rocketeval, seal, geval"):
        R.method("tick")
    with pytest.raises(ValueError, match="--method: Unknown method 'tick'"):
        create_run(db, task, "fake", "tick")
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 0


def test_registry_refuses_bad_entries(toy):
    with pytest.raises(ValueError, match="already registered"):
        R.register_method(TOY)
    bad = R.Method("bad", "Bad", "", "", ("nope",), binary=True, per_question=False,
                   plan=plan_toy, score=score_yes_no)
    with pytest.raises(ValueError, match="unknown aggregation"):
        R.register_method(bad)


def test_a_scorer_cannot_write_an_undeclared_aggregation(db, task):
    """The entry's aggregation list is the truth the pages and CLI offer: a scorer that
    writes another one fails instead of storing scores nobody can select."""
    narrow = R.Method("narrow", "Narrow", "", "", ("mean_p_yes",), binary=True,
                      per_question=True, plan=plan_toy, score=score_yes_no)
    R.register_method(narrow)
    try:
        rid = create_run(db, task, "fake", "narrow", limit=1)
        with pytest.raises(ValueError, match="share_yes"):
            execute_run(db_path(db), rid)
    finally:
        R.unregister_method("narrow")


def test_primary_aggregation_falls_back_to_the_methods_own():
    assert R.primary_aggregation({"method": "seal", "params": "{}"}) == "weighted"
    assert R.primary_aggregation({"method": "geval", "params": {}}) == "likert"
    assert R.primary_aggregation({"method": "rocketeval", "params": '{"aggregation": '
                                                                    '"share_yes"}'}) == "share_yes"
    for name, m in R.METHODS.items():
        assert R.primary_aggregation({"method": name, "params": None}) == m.aggregations[0]


def _old_database(path, monkeypatch, task_rows):
    """A database written by the code before m0009 (migrations up to m0008 only)."""
    names = [n for n in migrations.migration_names() if n < "m0009"]
    monkeypatch.setattr(migrations, "migration_names", lambda: names)
    db = open_db(path)
    import_file(db, task_rows, "t", kind="summarization")
    return db


def test_old_database_upgrades_and_keeps_its_rows(tmp_path, monkeypatch):
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    c = tmp_path / "c.json"
    c.write_text(json.dumps(CHECKLIST))
    path = tmp_path / "old.db"
    with monkeypatch.context() as m:
        db = _old_database(path, m, p)
        import_checklist(db, "t", c)
        freeze(db, "t")
        give_old_database_todays_answer_columns(db)
        runs = [create_run(db, "t", "fake", meth, limit=3) for meth in ("rocketeval", "seal")]
        for rid in runs:
            assert execute_run(path, rid)["status"] == "completed"
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):  # the old schema's limit
            db.execute("UPDATE run SET method = 'toy' WHERE id = ?", [runs[0]])
        # a view and an index on run must survive the rebuild (a view would break the rename)
        db.execute("CREATE VIEW run_methods AS SELECT id, method FROM run")
        db.execute("CREATE INDEX run_by_status ON run (status)")
        tables = ("run", "answer", "score", "seal_unit")
        # the columns the old schema had (later migrations may add more, empty on old rows)
        cols = {t: ", ".join(r[1] for r in db.execute(f"PRAGMA table_info({t})"))
                for t in tables}
        before = {t: db.execute(f"SELECT {cols[t]} FROM {t} ORDER BY 1").fetchall()
                  for t in tables}
        assert all(before[t] for t in tables)
        db.conn.close()
    db = open_db(path)  # the upgrade happens on open
    assert "m0009_method_free" in {r[0] for r in db.execute("SELECT name FROM _migrations")}
    for t in tables:
        assert db.execute(f"SELECT {cols[t]} FROM {t} ORDER BY 1").fetchall() == before[t], t
    schema = db.execute("SELECT sql FROM sqlite_master WHERE name = 'run'").fetchone()[0]
    assert "method IN" not in schema and "progress_at" in schema
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("SELECT COUNT(*) FROM run_methods").fetchone()[0] == len(runs)
    assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'run_by_status'").fetchone()
    db.execute("UPDATE run SET method = 'toy' WHERE id = ?", [runs[0]])  # now allowed
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):  # the status CHECK stays
        db.execute("UPDATE run SET status = 'bogus' WHERE id = ?", [runs[0]])
    assert get_run(db, runs[1])["n_answers"] == len([a for a in before["answer"]
                                                     if a[1] == runs[1]])
    # foreign keys still point at the rebuilt table: deleting a run cascades to its rows
    db.execute("DELETE FROM run WHERE id = ?", [runs[0]])
    assert db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?", [runs[0]]).fetchone()[0] == 0
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    assert open_db(path).execute("SELECT COUNT(*) FROM run").fetchone()[0] == 1  # reopen: no-op


DISPATCHERS = ["checkeval_core/runs/jobs.py", "checkeval_core/runs/score_write.py",
               "checkeval_core/runs/scorers.py", "checkeval_core/runs/start.py",
               "checkeval_core/runs/options.py", "checkeval_core/runs/defaults.py",
               "checkeval_core/cli/run_cmds.py", "checkeval_core/annotation/jobs.py",
               "app_pages/run.py"]


def test_no_if_chain_on_method_names():
    """Dispatch stays in the registry: these modules never compare a value with a method's
    name (``== "seal"``, ``in ("checkeval", …)``), index a table by one
    (``AGGREGATIONS["rocketeval"]``) nor list method names in SQL."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    names = set(R.METHODS)
    for rel in DISPATCHERS:
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                consts = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant)}
                assert not consts & names, f"{rel}:{node.lineno} compares with a method name"
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                assert node.slice.value not in names, f"{rel}:{node.lineno} indexes by a name"
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert not ("method IN" in node.value and names & set(
                    node.value.replace("'", " ").split())), f"{rel}:{node.lineno} SQL"
