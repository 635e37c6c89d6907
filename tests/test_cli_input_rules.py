"""Command-line values that used to crash or be accepted without meaning: each is refused with
exit 2 and a message naming the option (and the valid choices), in-process through typer.

Files with a lone surrogate, a duplicate key or over a shared limit are in the malformed-input
matrix (tests/test_malformed_inputs.py); this file covers the options and the messages.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from checkeval_core.cli import app
from tests.helpers import bench_source, copy_db, counts  # noqa: F401 - fixture

# the benchmarks beside the repository when a checkout has them, else the bundled fixtures
SHARED = bench_source()


def cli(db: Path, *args: str) -> Any:
    res = CliRunner().invoke(app, ["--db", str(db), *args])
    assert isinstance(res.exception, SystemExit) or res.exception is None, \
        f"crashed: {res.exception!r}"
    return res


def refused(res: Any, *fragments: str) -> None:
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert "Traceback" not in res.stderr
    for frag in fragments:
        assert frag in res.stderr, f"{frag!r} not in {res.stderr!r}"


@pytest.fixture
def dbf(base, tmp_path, monkeypatch) -> Path:  # noqa: F811 - the matrix's prepared database
    p = tmp_path / "c.db"
    copy_db(base["path"], p)
    monkeypatch.setenv("CHECKEVAL_DB", str(p))
    return p


# -- run: --limit and --param ------------------------------------------------------------------
def test_run_limit_too_large_exits_2(dbf):
    before = counts(dbf)
    refused(cli(dbf, "run", "--task", "t", "--judge", "fake", "--limit",
                "99999999999999999999"), "--limit 99999999999999999999", "at most 1,000,000")
    assert counts(dbf) == before


def test_run_param_deep_nesting_exits_2(dbf):
    deep = "[" * 50_000 + "]" * 50_000
    refused(cli(dbf, "run", "--task", "t", "--judge", "fake", "--method", "seal", "--param",
                f"seal_units={deep}"), "--param seal_units", "nested more than 64")


@pytest.mark.parametrize("value,fragments", [
    ('{"clarity": "bogus"}', ['"bogus"', "valid: sentence, pair, fact, whole"]),
    ('{"clarity": "sentence", "clarity": "pair"}', ["--param seal_units", "given twice"]),
    ('{"clarity": sentence}', ["--param seal_units", "not valid JSON"]),
    ('["sentence"]', ["--param seal_units", "expected dict"]),
])
def test_run_param_seal_units_must_be_units(dbf, value, fragments):
    before = counts(dbf)
    refused(cli(dbf, "run", "--task", "t", "--judge", "fake", "--method", "seal", "--param",
                f"seal_units={value}"), *fragments)
    assert counts(dbf) == before  # no run created


def test_run_param_aggregation_lists_the_valid_ones(dbf):
    refused(cli(dbf, "run", "--task", "t", "--judge", "fake", "--param", "aggregation=bogus"),
            "aggregation=bogus", "mean_p_yes")


def test_run_param_good_values_still_run(dbf):
    res = cli(dbf, "run", "--task", "t", "--judge", "fake", "--method", "seal", "--limit", "1",
              "--quiet", "--param", 'seal_units={"clarity": "whole"}', "--param",
              "seal_uniform_weights=true")
    assert res.exit_code == 0, res.output


# -- analyze: --aggregation, --bootstrap, --tie-margin ---------------------------------------
@pytest.mark.parametrize("args,fragments", [
    (["--aggregation", "bogus"], ["--aggregation 'bogus'", "share_yes, mean_p_yes"]),
    (["--aggregation", "weighted"], ["'weighted'", "method 'checkeval'"]),
    (["--bootstrap", "-5"], ["--bootstrap -5", "0 (no intervals)"]),
    (["--tie-margin", "nan"], ["--tie-margin nan", "finite"]),
    (["--tie-margin", "-1"], ["--tie-margin -1", "≥ 0"]),
    (["--rankings", "--bootstrap", "-5"], ["--bootstrap -5"]),
    (["--pairs", "--tie-margin", "inf"], ["--tie-margin inf"]),
])
def test_analyze_refuses_meaningless_values(dbf, args, fragments):
    refused(cli(dbf, "analyze", "--run", "1", *args), *fragments)


def test_analyze_valid_aggregation_still_works(dbf):
    res = cli(dbf, "analyze", "--run", "1", "--aggregation", "mean_p_yes", "--bootstrap", "0",
              "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["runs"]["1"]["aggregation"] == "mean_p_yes"


def test_bench_quality_bootstrap_negative(tmp_path):
    refused(cli(tmp_path / "x.db", "bench", "quality", "--benchmark", "summeval", "--judge",
                "fake", "--bootstrap", "-5", "--db", str(tmp_path / "b.db")), "--bootstrap -5")
    assert not (tmp_path / "b.db").exists()


# -- names: one rule for every importer and the app ------------------------------------------
@pytest.mark.parametrize("name,fragments", [
    ("t" * 10_000, ["--task", "10,000 characters is more than the 200"]),
    ("a\x1b[2Jb", ["--task", "U+001B"]),
    ("two\nlines", ["--task", "U+000A"]),
])
def test_import_task_name_follows_the_name_rule(dbf, tmp_path, name, fragments):
    f = tmp_path / "d.csv"
    f.write_text("id,output\n1,x\n", encoding="utf-8")
    before = counts(dbf)
    refused(cli(dbf, "import", str(f), "--task", name), *fragments)
    refused(cli(dbf, "preferences", "import", str(f), "--task", name), *fragments)
    assert counts(dbf) == before


def test_ratings_source_follows_the_name_rule(dbf, tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("system_id,rating\na,1\n", encoding="utf-8")
    before = counts(dbf)
    refused(cli(dbf, "ratings", "import", str(f), "--task", "t", "--source", "elo\r\nx"),
            "--source", "U+000D")
    assert counts(dbf) == before


def test_preferences_annotator_option_follows_the_name_rule(dbf, tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"input": "q", "output_1": "a", "output_2": "b", "label": 1}) + "\n",
                 encoding="utf-8")
    refused(cli(dbf, "preferences", "import", str(f), "--task", "p", "--annotator", "a\tb"),
            "--annotator", "U+0009")


# -- per-query checklist file names: the base name only --------------------------------------
def test_per_query_import_keeps_only_the_base_name(dbf):
    from checkeval_core.checklists.instance import import_group_checklists
    from checkeval_core.store import open_db

    db = open_db(dbf)
    row = json.dumps({"group_id": "1", "questions": ["Is it clear?"]}).encode()
    import_group_checklists(db, "t", data=row, filename="first.jsonl")
    for hostile in ("../../../etc/x.jsonl", "C:\\Users\\me\\x.jsonl", "/srv/data/x.jsonl"):
        res = import_group_checklists(db, "t", data=row, filename=hostile)
        assert res["file"] == "x.jsonl"
    got = db.execute("SELECT DISTINCT prompt_version FROM question WHERE group_id = '1'")
    assert {r[0] for r in got} == {"import:first.jsonl", "import:x.jsonl"}
    reasons = {r[0] for r in db.execute("SELECT reason FROM question WHERE group_id = '1' "
                                        "AND status = 'rejected'")}
    assert reasons == {"replaced by import of x.jsonl"}


def test_checklist_page_per_query_upload_keeps_only_the_base_name(db, tmp_path, monkeypatch):
    from checkeval_core.datasets import import_file
    from tests.conftest import open_app_page
    from tests.helpers import FakeUpload, use_upload

    src = tmp_path / "d.csv"
    src.write_text("id,group_id,output\n1,g1,x\n2,g1,y\n", encoding="utf-8")
    import_file(db, src, "t", kind="instruction")
    use_upload(monkeypatch, "pq_file", FakeUpload(
        "../../../home/me/x.jsonl", b'{"group_id": "g1", "questions": ["Is it right?"]}\n'))
    at = open_app_page("app_pages/checklist.py")
    at.button(key="pq_imp").click().run()
    assert not at.exception, at.exception
    shown = "\n".join(str(getattr(e, "value", "")) for kind in ("success", "markdown", "info")
                      for e in getattr(at, kind))
    assert "x.jsonl" in shown and "../" not in shown and "home/me" not in shown
    (pv,) = {r[0] for r in db.execute("SELECT prompt_version FROM question WHERE "
                                      "group_id = 'g1'")}
    assert pv == "import:x.jsonl"


# -- messages name the right thing -------------------------------------------------------------
def summeval_dir(tmp_path: Path, content: bytes | None = None) -> Path:
    d = tmp_path / "bench"
    (d / "checklists").mkdir(parents=True)
    rows = [{"id": f"d{g}-s{s}", "doc_id": f"d{g}", "system_id": f"s{s}", "source": "A text.",
             "output": f"Summary {s}.", "scores": {"coherence": s}} for g in (1, 2)
            for s in (1, 2, 3)]
    (d / "summeval.jsonl").write_bytes(content if content is not None else "".join(
        json.dumps(r) + "\n" for r in rows).encode())
    (d / "checklists" / "summeval.json").write_text(json.dumps({"coherence": {
        "definition": "d", "sub_dimensions": {"s": {"seed": ["Is it coherent?"]}}}}))
    return d


@pytest.mark.parametrize("docs", ["-1", "0"])
def test_bench_quality_docs_below_one(tmp_path, docs):
    refused(cli(tmp_path / "x.db", "bench", "quality", "--benchmark", "summeval", "--data",
                str(summeval_dir(tmp_path)), "--judge", "fake", "--docs", docs, "--db",
                str(tmp_path / "b.db")), f"--docs {docs}: give 1 or more")


@pytest.mark.parametrize("content,fragments", [
    (b'{"id": "a", "doc_id": "d1"}\n\xff\xfe\n', ["summeval.jsonl, line 2", "UTF-8"]),
    (b'{"id": "a", "doc_id": "d1", "system_id": "s"}\n', ["summeval.jsonl, line 1",
                                                          "'output'"]),
    (b'{"doc_id": "d1",\n', ["summeval.jsonl, line 1", "not valid JSON"]),
])
def test_bench_quality_corrupt_file_is_named(tmp_path, content, fragments):
    refused(cli(tmp_path / "x.db", "bench", "quality", "--benchmark", "summeval", "--data",
                str(summeval_dir(tmp_path, content)), "--judge", "fake", "--db",
                str(tmp_path / "b.db")), *fragments)


def test_bench_alpacaeval_fixed_checklist_needs_no_author_file(tmp_path):
    d = tmp_path / "bench" / "alpacaeval"
    d.mkdir(parents=True)
    for f in ("instructions.jsonl", "responses.jsonl", "models.json"):
        shutil.copy(SHARED / "alpacaeval" / f, d / f)
    res = cli(tmp_path / "x.db", "bench", "quality", "--benchmark", "alpacaeval", "--data",
              str(tmp_path / "bench"), "--judge", "fake", "--queries", "1", "--checklist",
              "fixed", "--db", str(tmp_path / "b.db"), "--json")
    assert res.exit_code == 0, res.output
    refused(cli(tmp_path / "x.db", "bench", "quality", "--benchmark", "alpacaeval", "--data",
                str(tmp_path / "bench"), "--judge", "fake", "--queries", "1", "--db",
                str(tmp_path / "b2.db")), "checklists_author.jsonl: not found")


def test_checklist_import_of_a_per_query_file_points_to_instance_import(dbf, tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text(json.dumps({"group_id": "1", "questions": ["Is it?"]}) + "\n", encoding="utf-8")
    refused(cli(dbf, "checklist", "import", str(f), "--task", "t"),
            "x.jsonl", "checklist instance-import")


@pytest.mark.parametrize("argv,fragment", [
    (["analyze", "--run", "99999999999999999999"], "--run 99999999999999999999"),
    (["run", "--resume=99999999999999999999"], "--resume 99999999999999999999"),
    (["bundle", "export", "--run", "-99999999999999999999", "--out", "x.json"], "--run"),
])
def test_huge_ids_exit_2_without_traceback(dbf, monkeypatch, capsys, argv, fragment):
    """An id beyond SQLite's integers ends in a message, not an OverflowError traceback."""
    import sys

    from checkeval_core.cli import main

    monkeypatch.setattr(sys, "argv", ["checkeval", "--db", str(dbf), *argv])
    with pytest.raises(SystemExit) as e:
        main()
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert fragment in err and "too large" in err and "Traceback" not in err


# -- the newer commands: one rule per kind of option ------------------------------------------
@pytest.fixture
def two_tasks(dbf) -> Path:
    """The matrix's database plus task ``u`` (4 items, one group per item) with run 2."""
    from checkeval_core.checklists.io import import_checklist
    from checkeval_core.checklists.versions import freeze
    from checkeval_core.datasets import import_file
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.store import open_db
    from tests.helpers import Q1, Q2, authors

    db = open_db(dbf)
    src, ck = dbf.parent / "u.csv", dbf.parent / "ck.json"
    src.write_text("id,output,human_clarity\n1,a,1\n2,b,2\n3,c,0\n4,d,1\n", encoding="utf-8")
    import_file(db, src, "u")
    ck.write_text(authors({"s": {"seed": [Q1, Q2]}}), encoding="utf-8")
    import_checklist(db, "u", ck)
    freeze(db, "u")
    execute_run(dbf, create_run(db, "u", "fake", "checkeval"))
    db.close()
    return dbf


HUGE = "99999999999"  # fits an int, asks for GiBs of resamples


@pytest.mark.parametrize("argv,fragments", [
    # --bootstrap: 0 … 100,000 everywhere (a huge one asked 3–75 GiB)
    (["versions", "--task", "t", "--bootstrap", HUGE], [f"--bootstrap {HUGE}", "100,000"]),
    (["versions", "--task", "t", "--bootstrap", "-1"], ["--bootstrap -1"]),
    (["compare", "--run", "1", "--run", "1", "--bootstrap", HUGE], [f"--bootstrap {HUGE}"]),
    (["compare", "--run", "1", "--run", "1", "--bootstrap", "-3"], ["--bootstrap -3"]),
    (["checklist", "propose", "--run", "1", "--bootstrap", HUGE], [f"--bootstrap {HUGE}"]),
    (["checklist", "propose", "--run", "1", "--bootstrap", "-1"], ["--bootstrap -1"]),
    # --tie-margin: finite, ≥ 0
    (["versions", "--task", "t", "--tie-margin", "nan"], ["--tie-margin nan", "finite"]),
    (["versions", "--task", "t", "--tie-margin", "-0.5"], ["--tie-margin -0.5", "≥ 0"]),
    (["checklist", "propose", "--run", "1", "--tie-margin", "nan"], ["--tie-margin nan"]),
    (["checklist", "propose", "--run", "1", "--tie-margin", "-1"], ["--tie-margin -1"]),
    (["checklist", "propose", "--run", "1", "--tie-margin", "inf"], ["--tie-margin inf"]),
    # --epsilon: finite, 0 … 1 (nan or -1 silently dropped questions that do not lower
    # agreement, and --to-review would have queued them)
    (["checklist", "propose", "--run", "1", "--epsilon", "nan"], ["--epsilon nan", "0 to 1"]),
    (["checklist", "propose", "--run", "1", "--epsilon", "-1", "--to-review"],
     ["--epsilon -1.0", "0 to 1"]),
    (["checklist", "propose", "--run", "1", "--epsilon", "inf"], ["--epsilon inf"]),
    (["checklist", "propose", "--run", "1", "--epsilon", "1e300"], ["--epsilon 1e+300"]),
    (["checklist", "propose", "--run", "1", "--new-questions", "-2"], ["--new-questions -2"]),
    # --seed: 0 … 2**32 - 1 (-1 is how a split named group by group is stored)
    (["split", "--task", "t", "--seed", "-1"], ["--seed -1", "from 0"]),
    (["split", "--task", "t", "--seed", HUGE], [f"--seed {HUGE}"]),
    (["compare", "--run", "1", "--run", "1", "--seed", "-1"], ["--seed -1"]),
    (["compare", "--run", "1", "--run", "1", "--top", "-1"], ["--top -1"]),
    # wrong types are typer's: the flag is named
    (["versions", "--task", "t", "--bootstrap", "many"], ["--bootstrap"]),
    (["split", "--task", "t", "--seed", "1.5"], ["--seed"]),
    # raw bytes (argv decoded with surrogateescape) and lone surrogates in a text option
    (["split", "--task", "t\udcff"], ["--task", "not valid UTF-8", "0xFF"]),
    (["analyze", "--task", "t\udcfe", "--across-judges"], ["--task", "not valid UTF-8"]),
    (["versions", "--task", "\ud800"], ["--task", "not valid UTF-8"]),
    (["split", "--task=t\udcff"], ["--task", "not valid UTF-8"]),
    # empty
    (["split", "--task", ""], ["''"]),
])
def test_new_commands_refuse_meaningless_options(dbf, argv, fragments):
    before = counts(dbf)
    refused(cli(dbf, *argv), *fragments)
    assert counts(dbf) == before


def test_split_of_a_task_with_one_group_is_refused(dbf, tmp_path):
    f = tmp_path / "one.csv"
    f.write_text("id,group_id,output\n1,g,a\n2,g,b\n", encoding="utf-8")
    assert cli(dbf, "import", str(f), "--task", "one").exit_code == 0
    before = counts(dbf)
    refused(cli(dbf, "split", "--task", "one"), "1 group", "≥ 2 groups")
    assert counts(dbf) == before


def test_split_with_a_valid_seed_is_reported_by_its_seed(dbf, tmp_path):
    f = tmp_path / "g.csv"
    f.write_text("id,group_id,output\n1,g1,a\n2,g2,b\n3,g3,c\n", encoding="utf-8")
    assert cli(dbf, "import", str(f), "--task", "g").exit_code == 0
    res = cli(dbf, "split", "--task", "g", "--seed", "7")
    assert res.exit_code == 0, res.output
    assert "seed 7" in res.stdout and "named group by group" not in res.stdout


def test_raw_byte_in_task_through_the_console_script(dbf):
    """The shell hands a non-UTF-8 byte over as is; the real entry point names the flag."""
    import os
    import subprocess
    import sys

    before = counts(dbf)
    for argv in ([b"split", b"--task", b"t\xff"], [b"analyze", b"--task", b"\xc3", b"--across-judges"]):
        p = subprocess.run([sys.executable.encode(), b"-m", b"checkeval_core", b"--db",
                            os.fsencode(dbf), *argv], capture_output=True, timeout=120)
        err = p.stderr.decode("utf-8", "replace")
        assert p.returncode == 2, err
        assert "--task" in err and "not valid UTF-8" in err and "Traceback" not in err
    assert counts(dbf) == before


def test_runs_of_different_tasks_are_not_compared(two_tasks):
    before = counts(two_tasks)
    refused(cli(two_tasks, "compare", "--run", "1", "--run", "2"), "different tasks")
    refused(cli(two_tasks, "checklist", "propose", "--run", "1", "--run", "2"), "one task")
    refused(cli(two_tasks, "analyze", "--run", "1", "--run", "2", "--shared-items"),
            "--shared-items", "task 't'", "task 'u'")
    refused(cli(two_tasks, "analyze", "--run", "1", "--run", "2", "--ensemble"),
            "--ensemble", "task 't'", "task 'u'")
    assert counts(two_tasks) == before


def test_ids_of_another_task_are_refused(two_tasks):
    """Task u's questions are not task t's: excluding one from t's version is refused (it
    used to be ignored silently, freezing every question)."""
    from checkeval_core.store import open_db

    db = open_db(two_tasks)
    u_question = db.execute("SELECT q.id FROM question q JOIN task t ON t.id = q.task_id "
                            "WHERE t.name = 'u' LIMIT 1").fetchone()[0]
    db.close()
    before = counts(two_tasks)
    refused(cli(two_tasks, "checklist", "freeze", "--task", "t", "--exclude", str(u_question)),
            f"--exclude {u_question}", "task 't' has no question")
    assert counts(two_tasks) == before
    refused(cli(two_tasks, "versions", "--task", "t", "--diff", "1", "7"), "7")
    refused(cli(two_tasks, "checklist", "propose", "--run", "99"), "99")


# -- a database path that is not a database ----------------------------------------------------
def _truncated(src: Path, dst: Path) -> Path:
    copy_db(src, dst)
    data = dst.read_bytes()
    dst.write_bytes(data[:len(data) // 2])
    return dst


@pytest.mark.parametrize("kind", ["garbage", "directory", "truncated", "short"])
@pytest.mark.parametrize("argv", [["split", "--task", "t", "--show"], ["analyze", "--run", "1"],
                                  ["versions", "--task", "t"]])
def test_a_database_that_is_not_one_is_named(base, tmp_path, kind, argv):
    p = tmp_path / "bad.db"
    if kind == "garbage":
        p.write_bytes(b"this is not a database\n" * 200)
    elif kind == "directory":
        p.mkdir()
    elif kind == "truncated":
        _truncated(base["path"], p)
    else:
        p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 20)
    snapshot = sorted(x.name for x in tmp_path.iterdir())
    content = p.read_bytes() if p.is_file() else None
    refused(cli(p, *argv), f"not a CheckEval database: {p}")
    assert sorted(x.name for x in tmp_path.iterdir()) == snapshot  # no -wal, no -shm
    if content is not None:
        assert p.read_bytes() == content


def test_open_db_names_a_truncated_database(base, tmp_path):
    from checkeval_core.store import NotADatabase, open_db

    p = _truncated(base["path"], tmp_path / "half.db")
    with pytest.raises(NotADatabase, match="not a CheckEval database: .*half.db"):
        open_db(p)


def test_bench_db_that_is_not_a_database_exits_2(tmp_path, monkeypatch, capsys):
    import sys

    from checkeval_core.cli import main

    bad = tmp_path / "b.db"
    bad.write_bytes(b"\x00garbage" * 100)
    monkeypatch.setattr(sys, "argv", ["checkeval", "bench", "quality", "--benchmark",
                                      "summeval", "--data", str(summeval_dir(tmp_path)),
                                      "--judge", "fake", "--db", str(bad)])
    with pytest.raises(SystemExit) as e:
        main()
    assert e.value.code == 2
    assert f"not a CheckEval database: {bad}" in capsys.readouterr().err


# -- bench heldout: every option and the benchmark files before any judge call ----------------
@pytest.mark.parametrize("args,fragments", [
    (["--tie-margin", "nan"], ["--tie-margin nan", "finite"]),
    (["--tie-margin", "-1"], ["--tie-margin -1.0"]),
    (["--docs", "100000000000000000000"], ["--docs 100000000000000000000", "at most"]),
    (["--docs", "5000000"], ["--docs 5000000", "at most 1,000,000"]),
    (["--docs", "7"], ["--docs 7", "summeval.jsonl has 2 documents"]),
    (["--queries", "-4"], ["--queries -4"]),
    (["--bootstrap", HUGE], [f"--bootstrap {HUGE}"]),
])
def test_bench_heldout_refuses_before_running(tmp_path, monkeypatch, capsys, args, fragments):
    import sys

    from checkeval_core.cli import main

    monkeypatch.setattr(sys, "argv", ["checkeval", "bench", "heldout", "--benchmark",
                                      "summeval", "--data", str(summeval_dir(tmp_path)),
                                      "--judge", "fake", "--db", str(tmp_path / "b.db"),
                                      *args])
    with pytest.raises(SystemExit) as e:
        main()
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert "Traceback" not in err
    for frag in fragments:
        assert frag in err, (frag, err)
    assert not (tmp_path / "b.db").exists()  # no run, no cache written


@pytest.mark.parametrize("how", ["missing", "text", "null", "duplicate"])
def test_bench_heldout_alpacaeval_needs_the_lc_win_rate_before_any_judge_call(tmp_path, how):
    d = tmp_path / "bench" / "alpacaeval"
    d.mkdir(parents=True)
    for f in ("instructions.jsonl", "responses.jsonl", "checklists_author.jsonl"):
        if (SHARED / "alpacaeval" / f).exists():
            shutil.copy(SHARED / "alpacaeval" / f, d / f)
    models = json.loads((SHARED / "alpacaeval" / "models.json").read_text(encoding="utf-8"))
    if how == "missing":
        del models[2]["alpacaeval2_lc_winrate"]
    elif how != "duplicate":
        models[2]["alpacaeval2_lc_winrate"] = "n/a" if how == "text" else None
    text = json.dumps(models)
    if how == "duplicate":  # the parsers would keep one of the two values silently
        text = text.replace('"alpacaeval2_lc_winrate": ', '"alpacaeval2_lc_winrate": 1, '
                            '"alpacaeval2_lc_winrate": ', 1)
    (d / "models.json").write_text(text, encoding="utf-8")
    res = cli(tmp_path / "x.db", "bench", "heldout", "--benchmark", "alpacaeval", "--data",
              str(tmp_path / "bench"), "--judge", "fake", "--queries", "2", "--db",
              str(tmp_path / "b.db"))
    if how == "duplicate":
        refused(res, "models.json", "'alpacaeval2_lc_winrate'", "twice")
    else:
        refused(res, "models.json, entry 3", "'alpacaeval2_lc_winrate'")
    assert not (tmp_path / "b.db").exists()


def test_a_missing_model_package_is_a_message_not_a_traceback(tmp_path, monkeypatch, capsys):
    """A command that reaches an embedded variant whose packages are not installed (seen:
    `bench grounded` with the 1.5B on a fresh machine) says what to install, exit 2."""
    import sys

    from checkeval_core.cli import main
    from checkeval_core.config import CACHE_ENV
    from checkeval_core.judges import model_files

    monkeypatch.setattr(model_files, "_package_dir", lambda module: None)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))  # no model assembled before
    monkeypatch.setattr(sys, "argv", ["checkeval", "bench", "quality", "--benchmark",
                                      "summeval", "--data", str(summeval_dir(tmp_path)),
                                      "--judge", "embedded:quality", "--docs", "1", "--db",
                                      str(tmp_path / "b.db")])
    with pytest.raises(SystemExit) as e:
        main()
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "is not installed" in err and "pip install" in err and "Traceback" not in err
