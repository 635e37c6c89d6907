"""checkeval_core.safeio and the parsers that use it: safe file names, bounded JSON and YAML,
linear question splitting, and ``checklist export --out`` staying inside its folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkeval_core import safeio
from checkeval_core.checklists.editing import add_question, ensure_dimension, ensure_sub
from checkeval_core.checklists.io import ChecklistError, import_checklist, split_questions
from checkeval_core.checklists.parse import parse_questions
from checkeval_core.datasets import import_file
from checkeval_core.jsontext import find_json
from checkeval_core.safeio import (
    InputError,
    load_json_text,
    load_yaml_text,
    safe_filename,
    safe_join,
)
from checkeval_core.store import task_id
from tests.helpers import run_cli

# the classic "billion laughs": 9 levels of 9 aliases, 9**9 strings once expanded
BOMB = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


@pytest.mark.parametrize("name,expected", [
    ("../evil", "evil"), ("/abs", "abs"), ("..", "file"), ("", "file"), ("a/b\\c", "a_b_c"),
    (".hidden", "hidden"), ("CON", "file_CON"), ("nul.txt", "file_nul.txt"),
    ("coherence", "coherence"), ("fluency & style", "fluency _ style"), ("é", "é"),
])
def test_safe_filename(name, expected):
    assert safe_filename(name) == expected
    assert "/" not in safe_filename(name) and not safe_filename(name).startswith(".")


def test_safe_filename_is_bounded():
    assert len(safe_filename("x" * 5000)) == safeio.LIMITS["filename_chars"]


def test_safe_join(tmp_path):
    assert safe_join(tmp_path, "a.yaml") == (tmp_path / "a.yaml").resolve()
    for bad in ("../a.yaml", "/etc/passwd", "sub/a.yaml", ".."):
        with pytest.raises(InputError, match="outside"):
            safe_join(tmp_path, bad)


def test_deep_json_is_a_clear_error():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(InputError, match=r"x.json, line 1: JSON nested more than 64"):
        load_json_text(deep, "x.json")
    assert load_json_text("[" * 64 + "]" * 64, "x.json") is not None
    # brackets inside strings do not count
    assert load_json_text('{"a": "' + "[" * 500 + '"}', "x.json") == {"a": "[" * 500}


def test_json_errors_name_line_and_column():
    with pytest.raises(InputError, match=r"x.json, line 2, column 6: not valid JSON"):
        load_json_text('{"a":\n  1, ]', "x.json")


def test_yaml_alias_bomb_is_refused():
    assert len(BOMB.encode()) < 400
    with pytest.raises(InputError, match="alias expansion is refused"):
        load_yaml_text(BOMB, "bomb.yaml")


def test_yaml_too_many_aliases_and_recursion():
    many = "a: &a x\nb: [" + ",".join(["*a"] * 101) + "]\n"
    with pytest.raises(InputError, match=r"line 2: more than 100 YAML aliases"):
        load_yaml_text(many, "m.yaml")
    assert load_yaml_text("a: &a x\nb: [*a, *a]\n", "ok.yaml") == {"a": "x", "b": ["x", "x"]}
    with pytest.raises(InputError, match="refers to itself"):
        load_yaml_text("a: &a [1, *a]\n", "r.yaml")
    with pytest.raises(InputError, match="nested"):
        load_yaml_text("a: " + "[" * 5000 + "]" * 5000, "d.yaml")


def test_yaml_refuses_python_tags():
    with pytest.raises(InputError, match="not valid YAML"):
        load_yaml_text("a: !!python/object/apply:os.system ['true']\n", "t.yaml")


def test_yaml_bomb_checklist_import_writes_nothing(db, tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("id,output\n1,x\n", encoding="utf-8")
    import_file(db, p, "t")
    bomb = tmp_path / "coherence_seed.yaml"
    bomb.write_text(BOMB + "sub_aspect: {s: *i}\ndefinition: x\n", encoding="utf-8")
    with pytest.raises(ChecklistError, match="coherence_seed.yaml"):
        import_checklist(db, "t", bomb)
    assert db.execute("SELECT COUNT(*) FROM dimension").fetchone()[0] == 0


def test_split_questions_without_question_mark():
    """The linear split gives the authors' result; 1 MB without "?" yields no question."""
    assert split_questions("Is A ok?? Does B hold ? tail") == ["Is A ok?", "Does B hold ?"]
    assert split_questions("word " * 200_000) == []
    big = "Is it fine? " * 50_000
    assert len(split_questions(big)) == 50_000


def test_find_json_and_parse_questions_on_hostile_text():
    assert find_json("[" * 200_000) is None
    assert find_json("x " + "[" * 100_000 + "]" * 100_000) is None  # too deep: refused
    assert find_json('pre ```json\n{"a": [1]}\n``` post') == {"a": [1]}
    qs, problems = parse_questions("]" * 100_000 + "\n" + "[" * 100_000)
    assert qs == [] and len(problems) == 2
    assert parse_questions('["Is a?"] then ] more ]')[0] == ["Is a?"]


def test_size_limits_name_the_limit(db, tmp_path, monkeypatch):
    monkeypatch.setitem(safeio.LIMITS, "import_bytes", 100)
    big = tmp_path / "big.csv"
    big.write_text("id,output\n" + "1,x\n" * 100, encoding="utf-8")
    with pytest.raises(ValueError, match=r"big.csv: 410 bytes is more than the limit of 100 bytes"):
        import_file(db, big, "t")
    monkeypatch.setitem(safeio.LIMITS, "import_bytes", 10_000)
    monkeypatch.setitem(safeio.LIMITS, "rows", 10)
    with pytest.raises(ValueError, match=r"line 12: more than 10 rows"):
        import_file(db, big, "t")
    assert db.execute("SELECT COUNT(*) FROM item").fetchone()[0] == 0


def test_checklist_question_limit(db, tmp_path, monkeypatch):
    monkeypatch.setitem(safeio.LIMITS, "questions", 3)
    p = tmp_path / "d.csv"
    p.write_text("id,output\n1,x\n", encoding="utf-8")
    import_file(db, p, "t")
    y = tmp_path / "coherence_seed.yaml"
    y.write_text("definition: x\nsub_aspect:\n  s: A? B? C? D?\n", encoding="utf-8")
    with pytest.raises(ChecklistError, match="4 questions is more than the 3 allowed"):
        import_checklist(db, "t", y)


def test_checklist_export_stays_inside_the_folder(db, db_path, tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("id,output\n1,x\n", encoding="utf-8")
    import_file(db, p, "t")
    tid = task_id(db, "t")
    for name in ("../evil", "/abs", "..", "evil"):
        dim = ensure_dimension(db, tid, name, "d")
        add_question(db, tid, dim, ensure_sub(db, dim, "s"), f"Is {name} fine?",
                     status="kept")
    out = tmp_path / "deep" / "out"
    r = run_cli(["checklist", "export", "--task", "t", "--out", str(out)], db=db_path)
    assert r.returncode == 0, r.stderr
    written = sorted(f.name for f in out.iterdir())
    assert written == ["abs_seed.yaml", "dimension_seed.yaml", "evil-2_seed.yaml",
                       "evil_seed.yaml"]
    outside = [f for f in tmp_path.rglob("*.yaml") if f.parent != out]
    assert outside == [] and not Path("/abs_seed.yaml").exists()
    # every dimension's question is in exactly one file
    texts = "".join(f.read_text(encoding="utf-8") for f in out.iterdir())
    for name in ("../evil", "/abs", "..", "evil"):
        assert f"Is {name} fine?" in texts


# -- lone surrogates and keys given twice -----------------------------------------------------
@pytest.mark.parametrize("text,fragment", [
    ('{"a": "\\ud800"}', "x.json, line 1, field 'a' holds a lone UTF-16 surrogate"),
    ('{"a": [1,\n "ok", "x\\udfffy"]}', "x.json, line 2, field 'a[2]' holds"),
    ('{"\\udc00": 1}', "x.json, line 1, a key holds a lone UTF-16 surrogate"),
    ('{"a": {"b": 1,\n  "b": 2}}', "x.json, line 2, field 'a.b': the key 'b' is given twice"),
    ('{"a": 1, "\\u0061": 2}', "field 'a': the key 'a' is given twice"),  # same key, escaped
    ('[{"k": 1}, {"k": 1, "k": 2}]', "field '[1].k'"),
])
def test_json_surrogates_and_duplicate_keys_are_refused_with_line_and_field(text, fragment):
    with pytest.raises(InputError) as e:
        load_json_text(text, "x.json")
    assert fragment in str(e.value)


def test_json_paired_surrogates_and_same_keys_in_different_objects_are_fine():
    assert load_json_text('"\\ud83d\\ude00"', "x.json") == "\U0001F600"
    assert load_json_text('[{"k": 1}, {"k": 2}, {"a": {"k": 3}, "k": 4}]', "x.json")[2]["k"] == 4
    assert load_json_text('{"a": "\\\\ud800"}', "x.json") == {"a": "\\ud800"}  # an escaped "\"


@pytest.mark.parametrize("text,fragment", [
    ('a:\n  b: "\\ud800"\n', "x.yaml, line 2, field 'a.b' holds a lone UTF-16 surrogate"),
    ('- ok\n- "\\udfff"\n', "x.yaml, line 2, field '[1]' holds"),
    ("a: 1\nb: 2\na: 3\n", "x.yaml, line 3, field 'a': the key 'a' is given twice"),
    ("s:\n  t: Is it?\n  t: Is it new?\n", "x.yaml, line 3, field 's.t'"),
])
def test_yaml_surrogates_and_duplicate_keys_are_refused_with_line_and_field(text, fragment):
    with pytest.raises(InputError) as e:
        load_yaml_text(text, "x.yaml")
    assert fragment in str(e.value)


def test_yaml_merge_keys_and_distinct_types_are_not_duplicates():
    assert load_yaml_text("base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n", "x.yaml")["c"] == \
        {"x": 1, "y": 2}
    assert load_yaml_text("1: a\n'1': b\n", "x.yaml") == {1: "a", "1": "b"}


@pytest.mark.parametrize("name", ["Ann Lee", "  Zoë  ", "a" * 200, "a" * 201, "", "a\nb",
                                  "a\x1b[31m", "a\u200bb", "x\ud800", "名前"])
def test_the_name_rule_is_the_apps_rule(name):
    """fields.check_name accepts exactly what the app's identity.clean_name accepts."""
    from checkeval_core.fields import check_name
    from checkeval_core.identity import clean_name

    try:
        got = check_name(name, "--x")
    except InputError as e:
        assert clean_name(name) is None
        assert str(e).startswith("--x: ")
    else:
        assert got == clean_name(name)
