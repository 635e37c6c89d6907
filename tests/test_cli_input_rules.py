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
from tests.helpers import copy_db, counts  # noqa: F401 - fixture

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"


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


@pytest.mark.skipif(not (SHARED / "alpacaeval").exists(), reason="shared benchmarks absent")
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
