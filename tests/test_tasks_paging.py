"""Reading a task by pages and by ids, in SQL: a page or a small run never loads the whole task."""

from __future__ import annotations

import json

from checkeval_core.datasets import import_file
from checkeval_core.tasks import count_items, items


def _task(db, tmp_path, n: int = 2500) -> None:
    p = tmp_path / "big.jsonl"
    p.write_text("".join(json.dumps({"id": f"i{k:05d}", "group_id": f"g{k // 10}",
                                     "output": f"text {k}", "scores": {"q": k % 5}}) + "\n"
                         for k in range(n)))
    import_file(db, p, "big")


def test_pages_follow_import_order_and_count(db, tmp_path) -> None:
    _task(db, tmp_path)
    assert count_items(db, "big") == 2500
    assert count_items(db, "big", group_id="g3") == 10
    page = items(db, "big", limit=25, offset=100)
    assert [r["item_id"] for r in page] == [f"i{k:05d}" for k in range(100, 125)]
    assert page[0]["scores"] == {"q": 0.0}
    assert [r["item_id"] for r in items(db, "big", limit=5, offset=2498)] == ["i02498", "i02499"]


def test_pick_by_ids_beyond_sqlite_parameter_limit(db, tmp_path) -> None:
    _task(db, tmp_path)
    wanted = [f"i{k:05d}" for k in range(0, 2500, 2)]  # 1,250 ids > 999 bound parameters
    got = items(db, "big", item_ids=wanted)
    assert [r["item_id"] for r in got] == wanted
    assert all(r["scores"] for r in got)
    pks = [got[3]["pk"], got[0]["pk"]]
    assert [r["item_id"] for r in items(db, "big", pks=pks)] == ["i00000", "i00006"]


def test_default_task_prefers_content(db, tmp_path) -> None:
    from checkeval_core.tasks import default_task

    assert default_task(db) is None
    _task(db, tmp_path, n=3)  # "big": human scores
    p = tmp_path / "a.jsonl"
    p.write_text('{"id": "x", "output": "y", "group_id": "q"}\n')
    import_file(db, p, "aaa", "instruction")  # first by name, no human scores
    assert default_task(db) == "aaa"
    assert default_task(db, prefer_kind="instruction") == "aaa"
    for name, rid in (("big", 1), ("aaa", 2)):
        db.execute("INSERT INTO run (id, task_id, judge_spec, method, status, created_at) "
                   "VALUES (?, (SELECT id FROM task WHERE name = ?), 'fake', 'rocketeval', "
                   "'completed', '')", [rid, name])
    assert default_task(db) == "aaa"  # one run each: the latest completed run's task
    assert default_task(db, with_human_scores=True) == "big"
    db.execute("INSERT INTO run (id, task_id, judge_spec, method, status, created_at) VALUES "
               "(3, (SELECT id FROM task WHERE name = 'big'), 'fake', 'geval', 'completed', '')")
    db.execute("INSERT INTO run (id, task_id, judge_spec, method, status, created_at) VALUES "
               "(4, (SELECT id FROM task WHERE name = 'aaa'), 'fake', 'geval', 'failed', '')")
    assert default_task(db) == "big"  # the task with the most completed runs
