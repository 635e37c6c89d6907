"""The malformed-input matrix: every importer given a broken file exits 2 with a
message naming the file and the line or field, prints no traceback, and writes nothing.

Every importer is in it — datasets, checklists (YAML, JSON), per-query checklists,
annotations, preferences, reference ratings, external metrics, run bundles — with the
problems that cut across them: a lone UTF-16 surrogate (valid JSON and YAML, not text), a key
given twice (the parsers would keep one value silently), and the same limit for the same kind
of field (question length, output length, names, bytes under ``CHECKEVAL_MAX_IMPORT_MB``).

Each case is a row of :data:`CASES` (importer, file name, content, expected fragments); the
file is generated under ``tmp_path``, the command runs in-process through the CLI against a
copy of one prepared database, and every table is counted before and after.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.helpers import Q1, Q2, authors, copy_db, counts  # noqa: F401

DEEP = "[" * 100_000 + "]" * 100_000
ROW = '{"id": "9", "output": "x"}'
ANN_HEAD = "annotator,item_id,question,answer\n"
BOMB = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def proj(dims: Any) -> str:
    return json.dumps({"format": "checkeval-studio/checklist-v1", "dimensions": dims})




def jl(*rows: Any) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


SUR = "\ud800"  # a lone surrogate; json.dumps writes it as the escape "\ud800"
PAIR = {"input": "Say hi.", "output_1": "Hi!", "output_2": "Hello.", "label": 1}
LONG_Q = "Is it " + "x" * 4_995 + "?"  # 5,002 characters: one more than a question may have
OK_Q = "Is it " + "x" * 4_993 + "?"  # exactly 5,000
LONG_OUT = "y" * 2_000_001


# (id, importer, file name, content, fragments the message must hold)
CASES: list[tuple[str, str, str, str | bytes, list[str]]] = [
    # --- datasets: checkeval import FILE --task new
    ("ds-empty", "data", "e.csv", "", ["e.csv", "empty"]),
    ("ds-header-only", "data", "h.csv", "id,output\n", ["h.csv", "no data rows"]),
    ("ds-ragged", "data", "r.csv", "id,output\n1,x\n2,y,z\n", ["r.csv, line 3", "3 fields"]),
    ("ds-missing-col", "data", "m.csv", "id,text\n1,x\n", ["m.csv, line 1", "'output'"]),
    ("ds-dup-id", "data", "d.csv", "id,output\n1,x\n1,y\n", ["d.csv, line 3", "duplicate id"]),
    ("ds-dup-col", "data", "c.csv", "id,output,output\n1,x,y\n", ["c.csv, line 1", "duplicate"]),
    ("ds-bad-score", "data", "s.csv", "id,output,human_c\n1,x,abc\n",
     ["s.csv, line 2", "'human_c'"]),
    ("ds-inf-score", "data", "i.csv", "id,output,human_c\n1,x,inf\n",
     ["i.csv, line 2", "finite"]),
    ("ds-missing-value", "data", "v.csv", "id,output\n1,\n", ["v.csv, line 2", "'output'"]),
    ("ds-bad-utf8", "data", "u.csv", b"id,output\n1,\xff\n", ["u.csv, line 2", "UTF-8"]),
    ("ds-nul", "data", "n.csv", b"id,output\n1,\x00x\n", ["n.csv", "NUL"]),
    ("ds-json-as-csv", "data", "j.csv", "[" + ROW + "]", ["j.csv", "looks like JSON"]),
    ("ds-jsonl-bad-line", "data", "b.jsonl", ROW + "\n{bad\n", ["b.jsonl, line 2", "JSON"]),
    ("ds-jsonl-array", "data", "a.jsonl", "[1, 2]\n", ["a.jsonl, line 1", "object"]),
    ("ds-jsonl-deep", "data", "dp.jsonl", DEEP + "\n", ["dp.jsonl, line 1", "nested"]),
    ("ds-jsonl-deep-field", "data", "df.jsonl",
     '{"id": "1", "output": "x", "m": ' + "[" * 1000 + "]" * 1000 + "}\n",
     ["df.jsonl, line 1", "nested"]),
    ("ds-json-deep", "data", "dp.json", DEEP, ["dp.json, line 1", "nested"]),
    ("ds-json-object", "data", "o.json", '{"a": 1}', ["o.json", "list of objects"]),
    ("ds-json-element", "data", "el.json", "[1]", ["el.json, element 1", "object"]),
    ("ds-json-empty-list", "data", "el0.json", "[]", ["el0.json", "empty"]),
    ("ds-json-invalid", "data", "iv.json", '[{"id": 1,]', ["iv.json, line 1", "not valid"]),
    ("ds-json-scores-list", "data", "sl.json", '[{"id": "1", "output": "x", "scores": [1]}]',
     ["sl.json, element 1", "'scores'"]),
    ("ds-json-output-object", "data", "oo.json", '[{"id": "1", "output": {"a": 1}}]',
     ["oo.json, element 1", "'output'"]),
    ("ds-json-bool-score", "data", "bs.json",
     '[{"id": "1", "output": "x", "scores": {"c": true}}]', ["bs.json, element 1", "scores.c"]),
    ("ds-json-dup-id", "data", "di.json", "[" + ROW + ", " + ROW + "]",
     ["di.json, element 2", "duplicate id"]),
    ("ds-txt", "data", "x.txt", "id,output\n1,x\n", ["x.txt", "unsupported extension"]),
    # --- checklists: checkeval checklist import FILE --task t
    ("ck-invalid-json", "checklist", "c.json", "{bad", ["c.json, line 1", "not valid JSON"]),
    ("ck-json-list", "checklist", "l.json", "[1, 2]", ["l.json", "expected"]),
    ("ck-json-deep", "checklist", "d.json", DEEP, ["d.json, line 1", "nested"]),
    ("ck-json-empty-object", "checklist", "e.json", "{}", ["e.json", "expected"]),
    ("ck-no-question", "checklist", "nq.json", authors({"s": {"seed": []}}),
     ["nq.json", "no question"]),
    ("ck-subs-list", "checklist", "sl.json", authors([1]), ["sl.json", "'sub_dimensions'"]),
    ("ck-seed-text", "checklist", "st.json", authors({"s": {"seed": "Is it?"}}),
     ["st.json", "'seed'"]),
    ("ck-seed-object", "checklist", "so.json", authors({"s": {"seed": [{"q": 1}]}}),
     ["so.json", "seed[0]"]),
    ("ck-sub-not-object", "checklist", "sn.json", authors({"s": ["Is it?"]}),
     ["sn.json", "sub-dimension 's'"]),
    ("ck-definition-list", "checklist", "df.json", authors({"s": {"seed": ["Is it?"]}}, [1]),
     ["df.json", "'definition'"]),
    ("ck-proj-dims-object", "checklist", "p1.json", proj({"a": 1}), ["p1.json", "'dimensions'"]),
    ("ck-proj-no-name", "checklist", "p2.json", proj([{"sub_dimensions": []}]),
     ["p2.json, dimensions[0], field 'name'"]),
    ("ck-proj-text-number", "checklist", "p3.json",
     proj([{"name": "c", "sub_dimensions": [{"name": "s", "questions": [{"text": 5}]}]}]),
     ["p3.json", "questions[0], field 'text'"]),
    ("ck-proj-origin", "checklist", "p4.json",
     proj([{"name": "c", "sub_dimensions": [{"name": "s", "questions": [
         {"text": "Is it?", "origin": "bogus"}]}]}]), ["p4.json", "field 'origin'"]),
    ("ck-proj-status", "checklist", "p5.json",
     proj([{"name": "c", "sub_dimensions": [{"name": "s", "questions": [
         {"text": "Is it?", "status": "done"}]}]}]), ["p5.json", "field 'status'"]),
    ("ck-proj-empty", "checklist", "p6.json", proj([{"name": "c", "sub_dimensions": []}]),
     ["p6.json", "no question"]),
    ("ck-proj-sub-text", "checklist", "p7.json", proj([{"name": "c", "sub_dimensions": ["s"]}]),
     ["p7.json", "sub_dimensions[0]"]),
    ("ck-proj-origins", "checklist", "p8.json",
     proj([{"name": "c", "sub_dimensions": [{"name": "s", "questions": [
         {"text": "Is it?", "origins": "seed"}]}]}]), ["p8.json", "field 'origins'"]),
    ("ck-proj-dup-dimension", "checklist", "p9.json",
     proj([{"name": "c", "sub_dimensions": [{"name": "s", "questions": ["Is it?"]}]},
           {"name": "c", "sub_dimensions": []}]), ["p9.json, dimensions[1], field 'name'"]),
    ("ck-proj-dup-sub", "checklist", "p10.json",
     proj([{"name": "c", "sub_dimensions": [{"name": "s", "questions": ["Is it?"]},
                                           {"name": "s"}]}]),
     ["p10.json, dimensions[0].sub_dimensions[1], field 'name'"]),
    ("ck-yaml-long-question", "checklist", "c_seed.yaml",
     "sub_aspect:\n  s: " + "word " * 2000 + "?\n", ["c_seed.yaml, field 'sub_aspect.s'"]),
    ("ck-yaml-syntax", "checklist", "c_seed.yaml", "sub_aspect: [a\n",
     ["c_seed.yaml, line", "not valid YAML"]),
    ("ck-yaml-no-sub-aspect", "checklist", "c_seed.yaml", "definition: x\n",
     ["c_seed.yaml", "'sub_aspect'"]),
    ("ck-yaml-sub-aspect-list", "checklist", "c_seed.yaml", "sub_aspect: [a, b]\n",
     ["c_seed.yaml, field 'sub_aspect'"]),
    ("ck-yaml-no-question", "checklist", "c_seed.yaml", "sub_aspect: {s: no question here}\n",
     ["c_seed.yaml", "no question"]),
    ("ck-yaml-bomb", "checklist", "c_seed.yaml", BOMB + "sub_aspect: {s: *i}\n",
     ["c_seed.yaml", "alias expansion is refused"]),
    ("ck-yaml-python-tag", "checklist", "c_seed.yaml",
     "sub_aspect: !!python/object/apply:os.system ['true']\n", ["c_seed.yaml", "YAML"]),
    ("ck-yaml-bad-utf8", "checklist", "c_seed.yaml", b"sub_aspect:\n  s: Is \xff it?\n",
     ["c_seed.yaml, line 2", "UTF-8"]),
    ("ck-yaml-block-object", "checklist", "c_seed.yaml", "sub_aspect: {s: {a: 1}}\n",
     ["c_seed.yaml, field 'sub_aspect.s'"]),
    ("ck-yaml-empty", "checklist", "c_seed.yaml", "", ["c_seed.yaml", "'sub_aspect'"]),
    ("ck-yaml-deep", "checklist", "c_seed.yaml", "sub_aspect: " + "[" * 3000 + "]" * 3000,
     ["c_seed.yaml", "nested"]),
    ("ck-txt", "checklist", "c.txt", "Is it?", ["c.txt", ".yaml"]),
    # --- annotations: checkeval annotations import FILE --task t
    ("an-missing-col", "annotations", "a.csv", "annotator,item_id,answer\nx,1,yes\n",
     ["a.csv, line 1", "question"]),
    ("an-ragged", "annotations", "r.csv", ANN_HEAD + f"x,1,{Q1},yes,extra\n",
     ["r.csv, line 2", "5 fields"]),
    ("an-ragged-short", "annotations", "rs.csv", ANN_HEAD + "x,1\n", ["rs.csv, line 2"]),
    ("an-conflict", "annotations", "c.csv", ANN_HEAD + f"x,1,{Q1},yes\nx,1,{Q1},no\n",
     ["c.csv, line 3", "conflicts", "line 2"]),
    ("an-unknown-item", "annotations", "ui.csv", ANN_HEAD + f"x,99,{Q1},yes\n",
     ["ui.csv, line 2", "'item_id'"]),
    ("an-unknown-question", "annotations", "uq.csv", ANN_HEAD + "x,1,Is it blue?,yes\n",
     ["uq.csv, line 2", "'question'"]),
    ("an-bad-answer", "annotations", "ba.csv", ANN_HEAD + f"x,1,{Q1},maybe\n",
     ["ba.csv, line 2", "'answer'"]),
    ("an-no-annotator", "annotations", "na.csv", ANN_HEAD + f",1,{Q1},yes\n",
     ["na.csv, line 2", "'annotator'"]),
    ("an-jsonl-invalid", "annotations", "i.jsonl", "{bad\n", ["i.jsonl, line 1", "JSON"]),
    ("an-jsonl-deep", "annotations", "d.jsonl", DEEP + "\n", ["d.jsonl, line 1", "nested"]),
    ("an-jsonl-array", "annotations", "a.jsonl", "[1]\n", ["a.jsonl, line 1", "object"]),
    ("an-jsonl-answer-list", "annotations", "al.jsonl",
     json.dumps({"annotator": "x", "item_id": "1", "question": Q1, "answer": ["yes"]}) + "\n",
     ["al.jsonl, line 1", "'answer'"]),
    ("an-txt", "annotations", "a.txt", ANN_HEAD, ["a.txt", ".csv"]),
    ("an-empty", "annotations", "e.csv", "", ["e.csv", "empty"]),
    ("an-header-only", "annotations", "h.csv", ANN_HEAD, ["h.csv", "no annotation rows"]),
    ("an-bad-utf8", "annotations", "u.csv", ANN_HEAD.encode() + b"x,1,\xff,yes\n",
     ["u.csv, line 2", "UTF-8"]),
    ("an-dup-col", "annotations", "dc.csv", "annotator,item_id,question,answer,answer\n",
     ["dc.csv, line 1", "duplicate"]),
    # --- external metric: checkeval analyze --task t --metric-file FILE
    ("me-no-item-col", "metric", "m.csv", "id,c\n1,0.5\n", ["m.csv, line 1", "'item_id'"]),
    ("me-ragged", "metric", "r.csv", "item_id,c\n1,0.5,9\n", ["r.csv, line 2", "3 fields"]),
    ("me-ragged-short", "metric", "rs.csv", "item_id,c,d\n1,0.5\n", ["rs.csv, line 2"]),
    ("me-dup-row", "metric", "d.csv", "item_id,c\n1,0.5\n1,0.7\n",
     ["d.csv, line 3", "twice", "line 2"]),
    ("me-not-number", "metric", "n.csv", "item_id,c\n1,high\n", ["n.csv, line 2", "'c'"]),
    ("me-nan", "metric", "nan.csv", "item_id,c\n1,nan\n", ["nan.csv, line 2", "finite"]),
    ("me-unknown-item", "metric", "u.csv", "item_id,c\n99,0.5\n", ["u.csv, line 2", "'item_id'"]),
    ("me-empty", "metric", "e.csv", "", ["e.csv", "empty"]),
    ("me-header-only", "metric", "h.csv", "item_id,c\n", ["h.csv", "no scores"]),
    ("me-no-dimension", "metric", "nd.csv", "item_id\n1\n", ["nd.csv, line 1", "dimension"]),
    ("me-dup-col", "metric", "dc.csv", "item_id,c,c\n1,1,2\n", ["dc.csv, line 1", "duplicate"]),
    ("me-bad-utf8", "metric", "bu.csv", b"item_id,c\n1,\xff\n", ["bu.csv, line 2", "UTF-8"]),
    ("me-unnamed-col", "metric", "un.csv", "item_id,,c\n1,2,3\n", ["un.csv, line 1", "no name"]),
    # --- per-query checklists: checkeval checklist instance-import FILE --task t
    ("in-invalid-json", "instance", "i.jsonl", "{bad\n", ["i.jsonl, line 1", "not valid JSON"]),
    ("in-unknown-query", "instance", "u.jsonl", jl({"group_id": "99", "questions": [Q1]}),
     ["u.jsonl:1", "no query '99'"]),
    ("in-deep", "instance", "d.jsonl", DEEP + "\n", ["d.jsonl, line 1", "nested"]),
    ("in-bad-utf8", "instance", "b.jsonl", b'{"group_id": "1", "questions": ["\xff?"]}\n',
     ["b.jsonl, line 1", "UTF-8"]),
    # --- preferences: checkeval preferences import FILE --task p (self-contained pairs)
    ("pr-no-label", "preferences", "n.jsonl", jl({**PAIR, "label": "maybe"}),
     ["n.jsonl, line 1", "'label'"]),
    ("pr-output-number", "preferences", "o.jsonl", jl({**PAIR, "output_2": 5}),
     ["o.jsonl, line 1", "'output_2'"]),
    # --- reference ratings: checkeval ratings import FILE --task t
    ("ra-not-number", "ratings", "r.csv", "system_id,rating\na,high\n",
     ["r.csv, line 2", "'rating'"]),
    ("ra-twice", "ratings", "t.csv", "system_id,rating\na,1\na,2\n", ["t.csv, line 3", "'a'"]),
    # --- a lone UTF-16 surrogate, in every importer that reads JSON or YAML
    ("ds-json-surrogate", "data", "s.json", json.dumps([{"id": "1", "output": "a" + SUR}]),
     ["s.json, line 1, field '[0].output'", "surrogate"]),
    ("ds-jsonl-surrogate", "data", "s.jsonl", jl({"id": "1", "output": SUR}),
     ["s.jsonl, line 1, field 'output'", "surrogate"]),
    ("ds-jsonl-surrogate-key", "data", "sk.jsonl", jl({"id": "1", "output": "x", SUR: 1}),
     ["sk.jsonl, line 1", "a key", "surrogate"]),
    ("ck-json-surrogate", "checklist", "s.json", authors({"s": {"seed": ["Is it " + SUR + "?"]}}),
     ["s.json, line 1, field 'clarity.sub_dimensions.s.seed[0]'", "surrogate"]),
    ("ck-yaml-surrogate", "checklist", "c_seed.yaml", 'sub_aspect:\n  s: "Is it \\ud800?"\n',
     ["c_seed.yaml, line 2, field 'sub_aspect.s'", "surrogate"]),
    ("ck-yaml-surrogate-definition", "checklist", "c_seed.yaml",
     'definition:\n  x: "\\udfff"\nsub_aspect:\n  s: Is it?\n',
     ["c_seed.yaml, line 2, field 'definition.x'", "surrogate"]),
    ("in-surrogate", "instance", "s.jsonl", jl({"group_id": "1", "questions": [SUR + "?"]}),
     ["s.jsonl, line 1, field 'questions[0]'", "surrogate"]),
    ("an-jsonl-surrogate", "annotations", "s.jsonl",
     jl({"annotator": "x" + SUR, "item_id": "1", "question": Q1, "answer": "yes"}),
     ["s.jsonl, line 1, field 'annotator'", "surrogate"]),
    ("pr-surrogate", "preferences", "s.jsonl", jl({**PAIR, "output_1": SUR}),
     ["s.jsonl, line 1, field 'output_1'", "surrogate"]),
    ("ra-surrogate", "ratings", "s.json", json.dumps([{"system_id": SUR, "rating": 1}]),
     ["s.json, line 1, field '[0].system_id'", "surrogate"]),
    # --- a key given twice: refused with its line (never one value silently dropped)
    ("ck-yaml-dup-key", "checklist", "c_seed.yaml",
     "sub_aspect:\n  s: Is it clear?\n  s: Is it new?\n",
     ["c_seed.yaml, line 3, field 'sub_aspect.s'", "given twice"]),
    ("ck-yaml-dup-top-key", "checklist", "c_seed.yaml",
     "sub_aspect:\n  s: Is it?\nsub_aspect:\n  t: Is it new?\n",
     ["c_seed.yaml, line 3, field 'sub_aspect'", "given twice"]),
    ("ck-json-dup-key", "checklist", "d.json",
     '{"clarity": {"definition": "d", "sub_dimensions": {\n "s": {"seed": ["Is it?"]},\n'
     ' "s": {"seed": ["Is it new?"]}}}}', ["d.json, line 3, field 'clarity.sub_dimensions.s'",
                                          "given twice"]),
    ("ds-jsonl-dup-key", "data", "d.jsonl", '{"id": "1", "output": "x", "output": "y"}\n',
     ["d.jsonl, line 1, field 'output'", "given twice"]),
    ("ds-json-dup-key", "data", "d.json", '[{"id": "1",\n "id": "2", "output": "y"}]',
     ["d.json, line 2, field '[0].id'", "given twice"]),
    ("in-dup-key", "instance", "d.jsonl",
     '{"group_id": "1", "questions": ["Is it?"], "questions": ["Is it new?"]}\n',
     ["d.jsonl, line 1, field 'questions'", "given twice"]),
    ("an-jsonl-dup-key", "annotations", "d.jsonl",
     '{"annotator": "x", "item_id": "1", "question": ' + json.dumps(Q1)
     + ', "answer": "yes", "answer": "no"}\n', ["d.jsonl, line 1, field 'answer'", "given twice"]),
    ("pr-dup-key", "preferences", "d.jsonl",
     '{"input": "Hi?", "output_1": "a", "output_2": "b", "label": 1, "label": 2}\n',
     ["d.jsonl, line 1, field 'label'", "given twice"]),
    # --- one rule per kind of field, whichever importer reads it
    ("ck-yaml-question-5001", "checklist", "c_seed.yaml", f"sub_aspect:\n  s: '{LONG_Q}'\n",
     ["c_seed.yaml, field 'sub_aspect.s'", "more than the 5,000 allowed"]),
    ("ck-json-question-5001", "checklist", "q.json", authors({"s": {"seed": [LONG_Q]}}),
     ["q.json", "seed[0]", "more than the 5,000 allowed"]),
    ("in-question-5001", "instance", "q.jsonl", jl({"group_id": "1", "questions": [LONG_Q]}),
     ["q.jsonl:1: field questions[0]", "more than the 5,000 allowed"]),
    ("ds-output-2000001", "data", "o.jsonl", jl({"id": "1", "output": LONG_OUT}),
     ["o.jsonl, line 1, field 'output'", "more than the 2,000,000 allowed"]),
    ("pr-output-2000001", "preferences", "o.jsonl", jl({**PAIR, "output_1": LONG_OUT}),
     ["o.jsonl, line 1, field 'output_1'", "more than the 2,000,000 allowed"]),
    ("ds-output-empty", "data", "e.jsonl", jl({"id": "1", "output": ""}),
     ["e.jsonl, line 1, field 'output'", "required value is missing"]),
    ("pr-output-empty", "preferences", "e.jsonl", jl({**PAIR, "output_1": ""}),
     ["e.jsonl, line 1, field 'output_1'", "required value is missing"]),
    ("an-annotator-newline", "annotations", "n.csv",
     ANN_HEAD + f'"ann\nfake",1,{Q1},yes\n', ["n.csv, line 3, field 'annotator'", "U+000A"]),
    ("an-annotator-escape", "annotations", "e.jsonl",
     jl({"annotator": "a\x1b[31mb", "item_id": "1", "question": Q1, "answer": "yes"}),
     ["e.jsonl, line 1, field 'annotator'", "U+001B"]),
    ("an-annotator-long", "annotations", "l.csv", ANN_HEAD + f"{'a' * 201},1,{Q1},yes\n",
     ["l.csv, line 2, field 'annotator'", "201 characters is more than the 200"]),
    ("pr-annotator-newline", "preferences", "a.jsonl", jl({**PAIR, "annotator": "a\nb"}),
     ["a.jsonl, line 1, field 'annotator'", "U+000A"]),
    # the vote id: the name rule, unique in a file, and a named annotator's second vote on one
    # pair (the same pair in the other order) needs its own id
    ("pr-vote-id-escape", "preferences", "v.jsonl", jl({**PAIR, "vote_id": "v\x1b[2J"}),
     ["v.jsonl, line 1, field 'vote_id'", "U+001B"]),
    ("pr-vote-id-long", "preferences", "v.jsonl", jl({**PAIR, "vote_id": "v" * 201}),
     ["v.jsonl, line 1, field 'vote_id'", "201 characters"]),
    ("pr-vote-id-twice", "preferences", "v.jsonl",
     jl({**PAIR, "vote_id": "r1"}, {**PAIR, "output_2": "Hey.", "vote_id": "r1"}),
     ["v.jsonl, line 2, field 'vote_id'", "'r1' is given twice (first on v.jsonl, line 1)"]),
    ("pr-vote-both-orders", "preferences", "o.jsonl",
     jl({**PAIR, "annotator": "ann"}, {**PAIR, "output_1": PAIR["output_2"],
                                       "output_2": PAIR["output_1"], "label": 2,
                                       "annotator": "ann"}),
     ["o.jsonl, line 2: the same pair of answers as o.jsonl, line 1", "needs its own vote_id"]),
    ("ck-proj-name-escape", "checklist", "ne.json",
     proj([{"name": "c\x1b[2J", "sub_dimensions": [{"name": "s", "questions": ["Is it?"]}]}]),
     ["ne.json, dimensions[0], field 'name'", "U+001B"]),
    ("ck-authors-sub-name-escape", "checklist", "se.json", authors({"s\x07": {"seed": [Q1]}}),
     ["se.json, dimension 'clarity', sub-dimension", "U+0007"]),
]


# (id, importer, file name, content, {limit: lowered value}, fragments): every import is bounded
LIMIT_CASES: list[tuple[str, str, str, str, dict[str, int], list[str]]] = [
    ("lim-ds-bytes", "data", "b.csv", "id,output\n1,x\n2,y\n", {"import_bytes": 10},
     ["b.csv", "limit of 10 bytes"]),
    ("lim-ds-rows", "data", "r.csv", "id,output\n1,x\n2,y\n3,z\n", {"rows": 2},
     ["r.csv, line 4", "more than 2 rows"]),
    ("lim-ds-json-rows", "data", "r.json", "[" + ", ".join([ROW.replace("9", str(i))
                                                             for i in range(3)]) + "]",
     {"rows": 2}, ["r.json", "2 rows allowed"]),
    ("lim-ck-bytes", "checklist", "c_seed.yaml", "sub_aspect:\n  s: Is it? Is it new?\n",
     {"checklist_bytes": 10}, ["c_seed.yaml", "limit of 10 bytes"]),
    ("lim-ck-questions", "checklist", "c_seed.yaml", "sub_aspect:\n  s: Is it? Is it new?\n",
     {"questions": 1}, ["c_seed.yaml", "2 questions is more than the 1 allowed"]),
    ("lim-ck-aliases", "checklist", "c_seed.yaml",
     "x: &x Is it?\nsub_aspect:\n  s: [*x, *x, *x]\n", {"yaml_aliases": 2},
     ["c_seed.yaml, line 3", "more than 2 YAML aliases"]),
    ("lim-an-bytes", "annotations", "a.csv", ANN_HEAD + f"x,1,{Q1},yes\n", {"import_bytes": 10},
     ["a.csv", "limit of 10 bytes"]),
    ("lim-an-rows", "annotations", "a.csv", ANN_HEAD + f"x,1,{Q1},yes\nx,2,{Q1},yes\n",
     {"rows": 1}, ["a.csv, line 3", "more than 1 rows"]),
    ("lim-me-bytes", "metric", "m.csv", "item_id,c\n1,0.5\n", {"import_bytes": 10},
     ["m.csv", "limit of 10 bytes"]),
    ("lim-me-rows", "metric", "m.csv", "item_id,c\n1,0.5\n2,0.5\n", {"rows": 1},
     ["m.csv, line 3", "more than 1 rows"]),
    ("lim-ds-depth", "data", "d.json", "[" + ROW[:-1] + ', "m": [[[1]]]}]', {"json_depth": 3},
     ["d.json, line 1", "more than 3 levels"]),
    # the same byte limit (CHECKEVAL_MAX_IMPORT_MB) for every import of data rows
    ("lim-in-bytes", "instance", "i.jsonl", jl({"group_id": "1", "questions": [Q1]}),
     {"import_bytes": 10}, ["i.jsonl", "limit of 10 bytes"]),
    ("lim-pr-bytes", "preferences", "p.jsonl", jl(PAIR), {"import_bytes": 10},
     ["p.jsonl", "limit of 10 bytes"]),
    ("lim-ra-bytes", "ratings", "r.csv", "system_id,rating\na,1\n", {"import_bytes": 10},
     ["r.csv", "limit of 10 bytes"]),
    ("lim-bu-bytes", "bundle", "b.json", '{"format": "x"}', {"import_bytes": 10},
     ["b.json", "limit of 10 bytes"]),
    ("lim-in-questions", "instance", "q.jsonl", jl({"group_id": "1", "questions": [Q1, Q2]}),
     {"questions": 1}, ["q.jsonl", "more than 1 questions"]),
    ("lim-in-rows", "instance", "r.jsonl", jl({"group_id": "1", "questions": [Q1]},
                                              {"group_id": "2", "questions": [Q1]}),
     {"rows": 1}, ["r.jsonl:2", "more than 1 rows"]),
]


# bundle import (runs/bundle.py belongs to another area; these document its behaviour)
BUNDLE_CASES: list[tuple[str, str, list[str]]] = [
    ("bu-not-json", "{bad", ["b.json"]),
    ("bu-deep", DEEP, ["b.json"]),
    ("bu-list", "[1]", ["b.json", "object"]),
    ("bu-format", "format=other", ["b.json", "format"]),
    ("bu-pyes-high", "p_yes=7.5", ["b.json", "answers[0].p_yes"]),
    ("bu-pyes-negative", "p_yes=-3", ["b.json", "answers[0].p_yes"]),
    ("bu-pyes-nan", "p_yes=NaN", ["b.json", "answers[0].p_yes"]),
    ("bu-answers-object", "answers={}", ["b.json", "answers"]),
    ("bu-answer-text", "answer0=x", ["b.json", "answers[0]"]),
    ("bu-unknown-item", "item=99", ["b.json", "99"]),
    ("bu-verdict", "verdict=maybe", ["b.json", "verdict"]),
    ("bu-hash", "checklist_hash=abc", ["b.json", "checklist"]),
    ("bu-aggregation", "aggregation=bogus",
     ["b.json", "bundle.params", "aggregation=bogus", "valid: share_yes"]),
    ("bu-seal-units", "seal_units=bogus", ["b.json", "bundle.params", "seal_units",
                                           "sentence, pair, fact, whole"]),
    ("bu-surrogate", "judge_spec=" + SUR, ["b.json", "judge_spec", "surrogate"]),
    ("bu-dup-key", '{"format": 1, "format": 2}', ["b.json, line 1, field 'format'",
                                                  "given twice"]),
]






ARGS = {
    "data": lambda f: ["import", str(f), "--task", "new"],
    "checklist": lambda f: ["checklist", "import", str(f), "--task", "t"],
    "annotations": lambda f: ["annotations", "import", str(f), "--task", "t"],
    "metric": lambda f: ["analyze", "--task", "t", "--metric-file", str(f)],
    "bundle": lambda f: ["bundle", "import", str(f), "--task", "t"],
    "instance": lambda f: ["checklist", "instance-import", str(f), "--task", "t"],
    "preferences": lambda f: ["preferences", "import", str(f), "--task", "p"],
    "ratings": lambda f: ["ratings", "import", str(f), "--task", "t"],
}


def run_case(base, tmp_path, monkeypatch, importer: str, name: str, content: str | bytes,
             fragments: list[str]) -> None:
    from checkeval_core.cli import app

    db = tmp_path / "case.db"
    copy_db(base["path"], db)
    monkeypatch.setenv("CHECKEVAL_DB", str(db))
    before = counts(db)
    assert before["item"] == 3 and before["question"] == 2
    f = tmp_path / "in" / name
    f.parent.mkdir()
    f.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    res = CliRunner().invoke(app, ["--db", str(db), *ARGS[importer](f)])
    err = res.stderr
    assert isinstance(res.exception, SystemExit), f"crashed: {res.exception!r}"
    assert res.exit_code == 2, (res.exit_code, res.output)
    assert "Traceback" not in err, err
    for frag in fragments:
        assert frag in err, f"{frag!r} not in message: {err!r}"
    assert counts(db) == before  # nothing written, in any table


@pytest.mark.parametrize("importer,name,content,fragments",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_file_is_refused(base, tmp_path, monkeypatch, importer, name, content,
                                   fragments):
    run_case(base, tmp_path, monkeypatch, importer, name, content, fragments)


@pytest.mark.parametrize("importer,name,content,limits,fragments",
                         [c[1:] for c in LIMIT_CASES], ids=[c[0] for c in LIMIT_CASES])
def test_limits_are_enforced(base, tmp_path, monkeypatch, importer, name, content, limits,
                             fragments):
    from checkeval_core import safeio

    for k, v in limits.items():
        monkeypatch.setitem(safeio.LIMITS, k, v)
    run_case(base, tmp_path, monkeypatch, importer, name, content, fragments)


def mutated_bundle(bundle: dict[str, Any], how: str) -> str:
    if not how or how[0] in "{[":
        return how
    b = json.loads(json.dumps(bundle))
    key, _, value = how.partition("=")
    if key == "format":
        b["format"] = value
    elif key == "p_yes":
        b["answers"][0]["p_yes"] = float(value)
    elif key == "answers":
        b["answers"] = {}
    elif key == "answer0":
        b["answers"][0] = value
    elif key == "item":
        b["answers"][0]["item_id"] = value
    elif key == "verdict":
        b["answers"][0]["verdict"] = value
    elif key == "checklist_hash":
        b["checklist_hash"] = value
    elif key == "aggregation":
        b["params"]["aggregation"] = value
    elif key == "seal_units":
        b["params"]["seal_units"] = {"clarity": value}
    elif key == "judge_spec":
        b["judge_spec"] = value
    return json.dumps(b)


@pytest.mark.parametrize("how,fragments", [c[1:] for c in BUNDLE_CASES],
                         ids=[c[0] for c in BUNDLE_CASES])
def test_malformed_bundle_is_refused(base, tmp_path, monkeypatch, how, fragments):
    run_case(base, tmp_path, monkeypatch, "bundle", "b.json",
             mutated_bundle(base["bundle"], how), fragments)


def test_matrix_size():
    assert len(CASES) + len(LIMIT_CASES) + len(BUNDLE_CASES) >= 60
    assert len({c[0] for c in CASES}) == len(CASES)


def test_valid_files_of_the_same_shapes_import(base, tmp_path, monkeypatch):
    """The matrix's setup is sound: well-formed files of each kind import (exit 0)."""
    from checkeval_core.cli import app

    db = tmp_path / "ok.db"
    copy_db(base["path"], db)
    monkeypatch.setenv("CHECKEVAL_DB", str(db))
    files = {"data": ("d.csv", "id,output\n1,x\n"),
             "checklist": ("c_seed.yaml", "definition: d\nsub_aspect:\n  s: Is it new?\n"),
             "annotations": ("a.csv", ANN_HEAD + f"x,1,{Q1},yes\nx,1,{Q1},yes\n"),
             "metric": ("m.csv", "item_id,clarity\n1,0.5\n2,0.7\n3,0.1\n"),
             "bundle": ("b.json", json.dumps(base["bundle"])),
             # the longest question allowed, the same in every checklist importer
             "instance": ("i.jsonl", jl({"group_id": "1", "questions": [OK_Q]})),
             "preferences": ("p.jsonl", jl({**PAIR, "annotator": "Ann Lee"})),
             "ratings": ("r.csv", "system_id,rating\na,1\n")}
    for importer, (name, content) in files.items():
        f = tmp_path / importer / name
        f.parent.mkdir()
        f.write_text(content, encoding="utf-8")
        res = CliRunner().invoke(app, ["--db", str(db), *ARGS[importer](f)])
        assert res.exit_code == 0, (importer, res.output, res.exception)
    after = counts(db)
    assert after["annotation"] == 1  # the repeated identical row is stored once
    assert after["preference"] == 1 and after["system_rating"] == 1
