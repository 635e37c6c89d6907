"""Dataset import: good files in every format, and every bad input leaves the db unchanged."""

import json

import pytest

from checkeval_core.datasets import DatasetError, import_file, parse_mapping
from checkeval_core.tasks import items, list_tasks


def snapshot(db):
    return [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("task", "item", "human_score")]


def write(tmp_path, name, content):
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def test_csv_import_with_scores_and_metadata(db, tmp_path):
    p = write(tmp_path, "a.csv", "id,group_id,system_id,source,output,human_fluency,extra\n"
                                 "1,d1,M1,art,sum one,4,x\n2,d1,M2,art,sum two,2.5,y\n")
    res = import_file(db, p, "t", kind="summarization")
    assert res == {"task": "t", "n_items": 2, "n_scores": 2, "dimensions": ["fluency"],
                   "notes": ["not imported as a field or a human score (kept as item metadata): "
                             "extra"]}
    its = items(db, "t")
    assert [i["item_id"] for i in its] == ["1", "2"]
    assert its[1]["scores"] == {"fluency": 2.5}
    assert its[0]["metadata"] == {"extra": "x"}
    assert list_tasks(db)[0]["kind"] == "summarization"


def test_jsonl_scores_object_and_mapping(db, tmp_path):
    rows = [{"doc": "a", "text": "o1", "k": "d", "scores": {"coherence": 4.33}},
            {"doc": "b", "text": "o2", "k": "d", "scores": {"coherence": 1}}]
    p = write(tmp_path, "a.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    res = import_file(db, p, "t", mapping=parse_mapping(["id=doc", "output=text",
                                                          "group_id=k"]))
    assert res["n_scores"] == 2
    its = items(db, "t")
    assert its[0]["group_id"] == "d" and its[0]["output"] == "o1"
    assert its[0]["scores"]["coherence"] == pytest.approx(4.33)


def test_json_list_and_bom_and_input_alias(db, tmp_path):
    p = write(tmp_path, "a.json", b"\xef\xbb\xbf" + json.dumps(
        [{"id": "x", "input": "question?", "output": "answer"}]).encode())
    import_file(db, p, "t")
    assert items(db, "t")[0]["source"] == "question?"
    p2 = write(tmp_path, "b.csv", "\ufeffid,output\nq,w\n")
    import_file(db, p2, "t2")
    assert items(db, "t2")[0]["item_id"] == "q"


def test_huge_field_is_accepted(db, tmp_path):
    big = "word " * 60_000  # 300 kB
    p = write(tmp_path, "big.csv", f'id,output\n1,"{big}"\n')
    import_file(db, p, "t")
    assert len(items(db, "t")[0]["output"]) == len(big)


BAD = [
    ("missing.csv", "id,text\n1,a\n", ["missing.csv, line 1", "'output'"]),
    ("empty.csv", "", ["empty.csv", "empty"]),
    ("blank.jsonl", "\n\n", ["blank.jsonl", "empty"]),
    ("types.csv", "id,output,human_coherence\n1,a,4\n2,b,good\n",
     ["types.csv, line 3", "human_coherence", "'good' is not a number"]),
    ("dups.csv", "id,output\n1,a\n1,b\n", ["dups.csv, line 3", "duplicate id '1'", "line 2"]),
    ("latin1.csv", "id,output\n1,caf\xe9\n".encode("latin-1"),
     ["latin1.csv, line 2", "invalid UTF-8"]),
    ("ragged.csv", "id,output\n1,a,extra\n2,b\n", ["ragged.csv, line 2", "3 fields",
                                                     "header has 2"]),
    ("obj.json", '{"id": 1, "output": "x"}', ["obj.json", "list of objects", "dict"]),
    ("strs.json", '["a", "b"]', ["strs.json, element 1", "expected an object"]),
    ("notjson.json", "id,output\n1,a\n", ["notjson.json, line 1", "not valid JSON"]),
    ("isjson.csv", '[{"id": 1, "output": "x"}]', ["isjson.csv", "looks like JSON"]),
    ("badline.jsonl", '{"id": "1", "output": "a"}\n{"id": 2,\n', ["badline.jsonl, line 2",
                                                                   "not valid JSON"]),
    ("binary.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00", ["binary.csv", "not a text file"]),
    ("scores.jsonl", '{"id": "1", "output": "a", "scores": {"coherence": "high"}}\n',
     ["scores.jsonl, line 1", "scores.coherence", "not a number"]),
    ("nooutput.jsonl", '{"id": "1", "output": ""}\n', ["nooutput.jsonl, line 1", "'output'",
                                                        "missing"]),
    ("listtext.json", '[{"id": "1", "output": ["a"]}]', ["element 1", "'output'",
                                                         "expected text"]),
    ("data.txt", "id,output\n1,a\n", ["data.txt", "unsupported extension"]),
]


@pytest.mark.parametrize("name,content,expected", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_rejected_and_changes_nothing(db, tmp_path, name, content, expected):
    good = write(tmp_path, "good.csv", "id,output,human_x\na,b,1\n")
    import_file(db, good, "existing")
    before = snapshot(db)
    p = write(tmp_path, name, content)
    with pytest.raises(DatasetError) as e:
        import_file(db, p, "existing")
    for fragment in expected:
        assert fragment in str(e.value)
    with pytest.raises(DatasetError):
        import_file(db, p, "brand-new-task")
    assert snapshot(db) == before


def test_id_clash_with_existing_items_is_atomic(db, tmp_path):
    import_file(db, write(tmp_path, "a.csv", "id,output\n1,a\n"), "t")
    before = snapshot(db)
    with pytest.raises(DatasetError, match="id '1' already exists in task 't'"):
        import_file(db, write(tmp_path, "b.csv", "id,output\n2,b\n1,c\n"), "t")
    assert snapshot(db) == before


def test_huge_field_over_limit_is_rejected(db, tmp_path, monkeypatch):
    import checkeval_core.datasets as ds

    monkeypatch.setattr(ds, "MAX_FIELD_CHARS", 1000)
    p = write(tmp_path, "huge.jsonl", json.dumps({"id": "1", "output": "x" * 2000}) + "\n")
    with pytest.raises(DatasetError, match="huge.jsonl, line 1, field 'output'"):
        import_file(db, p, "t")
    assert snapshot(db) == [0, 0, 0]


def test_bad_mapping_and_kind():
    with pytest.raises(DatasetError, match="unknown field 'nope'"):
        parse_mapping(["nope=x"])
    with pytest.raises(DatasetError, match="FIELD=COLUMN"):
        parse_mapping(["group_id"])
