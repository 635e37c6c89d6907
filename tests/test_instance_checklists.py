"""Per-query (instance) checklists (issue 14): one list per query shared by its answers,
generation / import with provenance, freezing with the query's group, and the RocketEval
method asking each answer its query's questions, query first, items of a query together."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from checkeval_core.checklists import instance as I
from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.versions import content_hash, freeze, get_version
from checkeval_core.datasets import import_file
from checkeval_core.judges.base import GenerateResult
from checkeval_core.judges.fake import FakeJudge
from checkeval_core.prompts.checklist import (
    INSTANCE_OPENINGS,
    INSTANCE_PROMPT_VERSION,
    INSTANCE_SINGLE_PROMPT_VERSION,
    opening_grammar,
)
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path as path_of

QUERIES = {"q1": "Write a haiku about autumn leaves falling gently",
           "q2": "List three prime numbers and explain why they are prime"}


def make_task(db, tmp_path, name="inst", interleave=False, reference=True):
    """2 queries × 3 systems (items ``q:sN``); ``interleave`` imports them q1, q2, q1, ..."""
    recs = [{"id": f"{g}:s{k}", "group_id": g, "system_id": f"s{k}", "input": q,
             "reference": f"reference for {g}" if reference else "",
             "output": f"answer {k} to {q.lower()}"} for g, q in QUERIES.items()
            for k in range(3)]
    if interleave:
        recs = [recs[i] for i in (0, 3, 1, 4, 2, 5)]
    p = tmp_path / f"{name}.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    import_file(db, p, name, kind="instruction")
    return name


class Recorder(FakeJudge):
    """The fake judge, recording every request in order."""

    def __init__(self) -> None:
        super().__init__()
        self.generated: list = []
        self.asked: list = []

    def generate(self, requests):
        self.generated += list(requests)
        return super().generate(requests)

    def binary(self, requests):
        self.asked += list(requests)
        return super().binary(requests)


def live(db, task):
    return [q for q in questions(db, task, status="kept", instance=True)]


def test_generation_one_list_per_query_shared_and_fresh(db, tmp_path):
    task = make_task(db, tmp_path)
    rec = Recorder()
    res = I.generate_group_checklists(db, task, "fake", judge_obj=rec)
    assert res["groups"] == 2 and res["items"] == 6 and res["skipped"] == 0
    assert len(rec.generated) == 2  # one request per query, not per item
    qs = live(db, task)
    assert {q["group_id"] for q in qs} == {"q1", "q2"}
    assert all(q["item_id"] is None and q["origin"] == "instance" for q in qs)
    assert all(q["model"] == "fake" and q["prompt_version"].startswith(INSTANCE_PROMPT_VERSION)
               for q in qs)
    assert 5 <= sum(q["group_id"] == "q1" for q in qs) <= 10
    # the reference answer is in the prompt by default, and left out on request
    assert "reference for q1" in rec.generated[0].messages[-1][1]
    # not global questions: a global freeze does not see them
    assert questions(db, task, instance=False) == []
    # a second call skips queries that already have a list ...
    again = I.generate_group_checklists(db, task, "fake")
    assert again["groups"] == 0 and again["skipped"] == 2 and len(live(db, task)) == len(qs)
    # ... fresh rewrites them: the old questions are rejected (kept for history), new kept
    rec2 = Recorder()
    fr = I.generate_group_checklists(db, task, "fake", judge_obj=rec2, fresh=True,
                                     include_reference=False, limit=1)
    assert fr["groups"] == 1 and "reference for q1" not in rec2.generated[0].messages[-1][1]
    now = live(db, task)
    old_q1 = {q["id"] for q in qs if q["group_id"] == "q1"}
    assert not old_q1 & {q["id"] for q in now}
    assert {q["id"] for q in now if q["group_id"] == "q2"} == \
        {q["id"] for q in qs if q["group_id"] == "q2"}
    rejected = questions(db, task, status="rejected", instance=True)
    assert {q["id"] for q in rejected} == old_q1
    assert all(q["reason"] == "regenerated" for q in rejected)


def test_import_good_rows_with_provenance_and_replace(db, tmp_path):
    task = make_task(db, tmp_path)
    f = tmp_path / "ck.jsonl"
    f.write_text(json.dumps({"instruction_id": "q1", "questions": ["Is it a haiku?",
                                                                   "Is it about autumn?"]})
                 + "\n\n" + json.dumps({"group_id": "q2", "questions": ["Are all three prime?"]})
                 + "\n", encoding="utf-8")
    res = I.import_group_checklists(db, task, path=f)
    assert res == {"groups": 2, "questions": 3, "replaced": 0, "file": "ck.jsonl"}
    qs = live(db, task)
    assert sorted((q["group_id"], q["text"]) for q in qs) == [
        ("q1", "Is it a haiku?"), ("q1", "Is it about autumn?"), ("q2", "Are all three prime?")]
    assert all(q["author"] == "import" and q["prompt_version"] == "import:ck.jsonl" for q in qs)
    # bytes in memory (the app's upload) replace the query's list
    res2 = I.import_group_checklists(db, task, data=b'{"group_id": "q1", "questions": '
                                     b'["Does it have 17 syllables?"]}\n', filename="up.jsonl")
    assert res2["replaced"] == 2
    assert sorted(q["text"] for q in live(db, task) if q["group_id"] == "q1") == \
        ["Does it have 17 syllables?"]


def test_import_bad_lines_name_file_line_field_and_change_nothing(db, tmp_path):
    task = make_task(db, tmp_path)
    I.import_group_checklists(db, task, data=b'{"group_id": "q1", "questions": ["Is it ok?"]}',
                              filename="first.jsonl")
    before = [dict(q) for q in questions(db, task, instance=None)]
    bad = "\n".join([
        '{"group_id": "q2", "questions": ["Is it right?"]}',  # fine on its own
        "{not json",
        '{"group_id": "nope", "questions": ["Is it?"]}',
        '{"questions": ["Is it?"]}',
        '{"group_id": "q1", "questions": []}',
        '{"group_id": "q2", "questions": ["Fine?", ""]}',
    ])
    with pytest.raises(I.InstanceChecklistError) as e:
        I.import_group_checklists(db, task, data=bad.encode(), filename="bad.jsonl")
    msg = str(e.value)
    assert "bad.jsonl, line 2, column 2: not valid JSON" in msg
    assert "bad.jsonl:3: field group_id: no query 'nope'" in msg
    assert "bad.jsonl:4: field group_id (or instruction_id) is missing" in msg
    assert "bad.jsonl:5: field questions: expected a non-empty list" in msg
    assert "bad.jsonl:6: field group_id: 'q2' already given on line 1" in msg
    assert "bad.jsonl:6: field questions[1]: expected a non-empty text" in msg
    assert [dict(q) for q in questions(db, task, instance=None)] == before  # atomic
    with pytest.raises(I.InstanceChecklistError, match="bin.jsonl, line 1: invalid UTF-8"):
        I.import_group_checklists(db, task, data=b"\xff\xfe\x00", filename="bin.jsonl")


def test_fixed_checklist_for_every_query(db, tmp_path):
    task = make_task(db, tmp_path)
    res = I.import_group_checklists(db, task, path=I.fixed_checklist_path())
    assert res["groups"] == 2 and res["questions"] == 12
    by_group = {}
    for q in live(db, task):
        by_group.setdefault(q["group_id"], []).append(q["text"])
    assert by_group["q1"] == by_group["q2"] and len(by_group["q1"]) == 6
    assert any("creativ" in t for t in by_group["q1"]) and any("detail" in t
                                                                 for t in by_group["q1"])


def test_freeze_carries_group_and_group_questions(db, tmp_path):
    task = make_task(db, tmp_path)
    I.generate_group_checklists(db, task, "fake")
    with pytest.raises(ValueError, match="no kept global questions"):
        freeze(db, task)  # the per-query lists are not a global checklist
    v = freeze(db, task, kind="instance", note="per query")
    content = get_version(db, task, v["version"])["content"]
    assert {q["group_id"] for q in content["questions"]} == {"q1", "q2"}
    gq = I.group_questions(db, task)
    assert set(gq) == {"q1", "q2"}
    assert all(set(q) == {"id", "text", "dimension"} for qs in gq.values() for q in qs)
    # the same text in two queries is two questions: the hash depends on the group
    a = [{"dimension": "d", "sub_dimension": "s", "text": "Is it ok?", "item_id": None,
          "group_id": "q1"}]
    b = [dict(a[0], group_id="q2")]
    assert content_hash(a) != content_hash(b)
    # versions without groups keep their hash (bundles made before issue 14 still match)
    legacy = [{"dimension": "d", "sub_dimension": "s", "text": "Is it ok?", "item_id": None}]
    import hashlib
    want = hashlib.sha256(json.dumps([["d", "s", "Is it ok?", 0]]).encode()).hexdigest()
    assert content_hash(legacy) == want


def test_rocketeval_asks_each_item_its_query_questions_query_first_grouped(db, tmp_path):
    task = make_task(db, tmp_path, interleave=True, reference=False)
    I.import_group_checklists(db, task, data=(
        b'{"group_id": "q1", "questions": ["Is it a haiku?", "Is it about autumn?"]}\n'
        b'{"group_id": "q2", "questions": ["Are three primes listed?", "Is the reason given?",'
        b' "Is it short?"]}\n'), filename="ck.jsonl")
    freeze(db, task, kind="instance")
    rec = Recorder()
    rid = create_run(db, task, "fake", "rocketeval")
    run = execute_run(path_of(db), rid, judge=rec)
    assert run["status"] == "completed" and run["n_answers"] == 3 * 2 + 3 * 3
    texts = {r[0]: r[1] for r in db.execute("SELECT id, text FROM question")}
    per_item = {}
    for item_id, group, qid in db.execute(
            "SELECT i.item_id, i.group_id, a.question_id FROM answer a JOIN item i ON "
            "i.id = a.item_id WHERE a.run_id = ?", [rid]):
        per_item.setdefault((item_id, group), set()).add(texts[qid])
    for (_item_id, group), asked in per_item.items():
        assert asked == ({"Is it a haiku?", "Is it about autumn?"} if group == "q1" else
                         {"Are three primes listed?", "Is the reason given?", "Is it short?"})
    # requests: the query's items together (imported interleaved), the query as the first
    # context part (shared by every answer to it), the answer next, the question last
    queries = [next(g for g, q in QUERIES.items() if q in r.context[0]) for r in rec.asked]
    assert queries == ["q1"] * 6 + ["q2"] * 9
    for r in rec.asked:
        assert r.context[0].startswith("Input:\n") and "answer" in r.context[-1]
        assert r.question in {t for s in per_item.values() for t in s}
    # a run's score per item (overall) as for every run
    n_scores = db.execute("SELECT COUNT(DISTINCT item_id) FROM score WHERE run_id = ? AND "
                          "aggregation = 'mean_p_yes'", [rid]).fetchone()[0]
    assert n_scores == 6


def test_cli_instance_generate_import_and_fixed(db, db_path, tmp_path):
    from checkeval_core.cli import app

    task = make_task(db, tmp_path)
    r = CliRunner()
    out = r.invoke(app, ["--db", str(db_path), "checklist", "instance", "--task", task,
                         "--judge", "fake", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["groups"] == 2
    f = tmp_path / "c.jsonl"
    f.write_text('{"group_id": "zz", "questions": ["Is it?"]}\n', encoding="utf-8")
    bad = r.invoke(app, ["--db", str(db_path), "checklist", "instance-import", str(f),
                         "--task", task])
    assert bad.exit_code == 2 and "c.jsonl:1: field group_id: no query 'zz'" in bad.output
    f.write_text('{"group_id": "q2", "questions": ["Is it?"]}\n', encoding="utf-8")
    ok = r.invoke(app, ["--db", str(db_path), "checklist", "instance-import", str(f),
                        "--task", task, "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["questions"] == 1
    fx = r.invoke(app, ["--db", str(db_path), "checklist", "instance", "--task", task,
                        "--fixed", "--json"])
    assert fx.exit_code == 0 and json.loads(fx.stdout)["questions"] == 12
    one = r.invoke(app, ["--db", str(db_path), "checklist", "instance", "--task", task,
                         "--judge", "fake", "--mode", "single", "--fresh", "--limit", "1",
                         "--json"])
    got = json.loads(one.stdout)
    assert one.exit_code == 0 and got["mode"] == "single" and got["requests"] == I.SINGLE_N
    bad_mode = r.invoke(app, ["--db", str(db_path), "checklist", "instance", "--task", task,
                              "--judge", "fake", "--mode", "all"])
    assert bad_mode.exit_code == 2 and "--mode 'all'" in bad_mode.output


def test_checklist_page_per_query_block(db, tmp_path):
    """The Checklist review page's per-query block, on a task with no question yet."""
    from tests.conftest import open_app_page

    make_task(db, tmp_path, name="pq")
    at = open_app_page("app_pages/checklist.py")
    if at.selectbox(key="rv_task").value != "pq":
        at.selectbox(key="rv_task").select("pq").run()
    at.text_input(key="pq_judge").input("fake").run()
    assert at.selectbox(key="pq_mode_list").value == "list"  # a non-embedded judge: one list
    at.button(key="pq_gen").click().run()
    assert not at.exception
    qs = live(db, "pq")
    assert {q["group_id"] for q in qs} == {"q1", "q2"} and all(q["model"] == "fake" for q in qs)
    assert {q["prompt_version"] for q in qs} == {INSTANCE_PROMPT_VERSION + "+reference"}
    # one question per generation, asked afresh: the lists are replaced
    at.selectbox(key="pq_mode_list").select("single").run()
    at.checkbox(key="pq_fresh").check().run()
    at.button(key="pq_gen").click().run()
    assert not at.exception
    assert {q["prompt_version"] for q in live(db, "pq")} == \
        {INSTANCE_SINGLE_PROMPT_VERSION + "+reference"}
    assert any("from the cache" in s.value for s in at.success), [w.value for w in at.warning]
    # a second press (a double click, its box still ticked in the browser) does not rewrite
    # again: "Rewrite" is unticked before the judge was asked
    kept = {q["id"] for q in live(db, "pq")}
    at.button(key="pq_gen").click().run()
    assert not at.exception and {q["id"] for q in live(db, "pq")} == kept
    assert at.checkbox(key="pq_fresh").value is False
    at.button(key="pq_fix").click().run()
    assert not at.exception
    assert sorted({q["prompt_version"] for q in live(db, "pq")}) == \
        ["import:rocketeval_fixed.jsonl"]


def test_deeply_nested_line_is_refused_with_its_line():
    import pytest

    from checkeval_core.checklists.instance import InstanceChecklistError, parse_group_file

    text = '{"group_id": "g1", "questions": ["Is it?"]}\n' + "[" * 100_000 + "]" * 100_000 + "\n"
    with pytest.raises(InstanceChecklistError, match="x.jsonl, line 2: JSON nested more than"):
        parse_group_file(text, "x.jsonl", {"g1"})


class Scripted(Recorder):
    """Answers the one-question generations from a script (the same question twice, ...)."""

    def __init__(self, texts):
        super().__init__()
        self.texts = list(texts)

    def generate(self, requests):
        self.generated += list(requests)
        return [GenerateResult(text=self.texts.pop(0)) for _ in requests]


def test_single_mode_asks_one_question_at_a_time(db, tmp_path):
    task = make_task(db, tmp_path)
    rec = Recorder()
    res = I.generate_group_checklists(db, task, "fake", judge_obj=rec, mode="single", n=6)
    assert res["mode"] == "single" and res["requests"] == 12 and res["groups"] == 2
    q1 = rec.generated[:6]
    # the k-th generation is held to the k-th opening; its prompt lists the questions so far
    assert [r.grammar for r in q1] == [opening_grammar(o) for o in INSTANCE_OPENINGS[:6]]
    assert all(r.max_tokens <= 80 and r.purpose == "instance_question" for r in q1)
    assert "already written" not in q1[0].messages[-1][1]
    assert q1[3].messages[-1][1].count("\n- ") == 3
    assert "reference for q1" in q1[0].messages[-1][1]
    qs = live(db, task)
    assert sum(q["group_id"] == "q1" for q in qs) == 6
    assert all(q["prompt_version"] == INSTANCE_SINGLE_PROMPT_VERSION + "+reference"
               and q["model"] == "fake" for q in qs)
    # greedy: asking again (fresh) without sampling would return the cached questions, so
    # fresh samples with a seed per generation
    rec2 = Recorder()
    I.generate_group_checklists(db, task, "fake", judge_obj=rec2, mode="single", n=5,
                                fresh=True, limit=1)
    assert all(r.temperature > 0 and r.seed for r in rec2.generated)
    assert len({r.seed for r in rec2.generated}) == 5


def test_single_mode_drops_near_copies_and_reports_them(db, tmp_path):
    task = make_task(db, tmp_path)
    script = ["Does the response include a haiku?", "Does the response include a haiku ?",
              "Does the response have three lines?", "Is the response about autumn?",
              "Does the response mention leaves?", "Is the syllable count 5-7-5?"]
    res = I.generate_group_checklists(db, task, "fake", judge_obj=Scripted(script), mode="single",
                                      n=6, limit=1)
    got = [q["text"] for q in live(db, task)]
    assert got == [script[0]] + script[2:]
    assert res["questions"] == 5 and any("repeats a question" in p for p in res["problems"])


def test_generation_mode_and_count_are_checked(db, tmp_path):
    task = make_task(db, tmp_path)
    with pytest.raises(ValueError, match="--mode 'many'"):
        I.generate_group_checklists(db, task, "fake", mode="many")
    with pytest.raises(ValueError, match="--n 50"):
        I.generate_group_checklists(db, task, "fake", mode="single", n=50)
    assert live(db, task) == []


def test_a_reviewer_sees_no_per_query_generation(db, tmp_path, monkeypatch):
    """The page offered a reviewer a free judge field whose *Generate* spent the judge (the
    server's key) before the core refused: behind a login the form is for a role that may
    edit checklists, and the core refuses first anyway (tests/test_team_roles.py)."""
    from streamlit.testing.v1 import AppTest

    from checkeval_core import team
    from checkeval_core.identity import TRUSTED_HEADER_ENV
    from tests.conftest import APP

    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)
    monkeypatch.setenv(team.ADMINS_ENV, "ada")
    monkeypatch.setenv(team.SECRETS_ENV, str(tmp_path / "none.toml"))
    make_task(db, tmp_path, name="pq")
    team.grant(db, "rev", "reviewer")
    team.grant(db, "rita", "researcher")
    for person, drawn in (("rev", False), ("rita", True)):
        at = AppTest.from_file(APP, default_timeout=120)
        # the person's name in every claim a login may name them by
        at.user = {"is_logged_in": True, "name": person, "sub": person}
        at.run()
        at.switch_page("app_pages/checklist.py").run()
        assert not at.exception, at.exception
        assert any(b.key == "pq_gen" for b in at.button) == drawn, person
        assert any("you review them below" in c.value for c in at.caption) != drawn
