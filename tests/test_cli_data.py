"""The data CLI as a user runs it: exit codes, stdout/stderr, --db."""

import json

from tests.helpers import run_cli


def cli(db, *args):
    return run_cli(list(args), db=db)


def test_demo_tasks_import_export(tmp_path):
    db = tmp_path / "c.db"
    r = cli(db, "demo")
    assert r.returncode == 0, r.stderr
    assert "summeval-demo: 192 items" in r.stdout
    assert cli(db, "demo").stdout.count("already loaded") == 2  # idempotent
    tasks = json.loads(cli(db, "tasks", "--json").stdout)
    by = {t["name"]: t for t in tasks}
    assert by["summeval-demo"]["n_items"] == 192
    assert by["summeval-demo"]["dimensions"] == ["coherence", "consistency", "fluency",
                                                 "relevance"]
    assert by["topical-chat-demo"]["kind"] == "dialogue"

    src = tmp_path / "in.csv"
    src.write_text("doc,output,human_q\nA,=cmd(),3\n", encoding="utf-8")
    r = cli(db, "import", str(src), "--task", "mine", "--kind", "custom", "--map", "id=doc")
    assert r.returncode == 0, r.stderr
    assert "imported 1 items and 1 human scores" in r.stdout
    out = tmp_path / "out.csv"
    r = cli(db, "export", "--task", "mine", "--what", "items", "--format", "csv", "--out",
            str(out))
    assert r.returncode == 0, r.stderr
    assert "'=cmd()" in out.read_text()


def test_invalid_input_exit_2_with_message(tmp_path):
    db = tmp_path / "c.db"
    bad = tmp_path / "bad.csv"
    bad.write_text("id,output,human_q\n1,a,x\n", encoding="utf-8")
    r = cli(db, "import", str(bad), "--task", "t")
    assert r.returncode == 2
    assert "bad.csv, line 2, field 'human_q'" in r.stderr
    assert json.loads(cli(db, "tasks", "--json").stdout) == []
    r = cli(db, "import", str(bad), "--task", "t", "--map", "nonsense")
    assert r.returncode == 2 and "FIELD=COLUMN" in r.stderr
    r = cli(db, "export", "--task", "nope", "--what", "items", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "no task named 'nope'" in r.stderr
