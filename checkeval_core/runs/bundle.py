"""Run bundles: a finished run as one portable JSON file (answers by item id and question
text), so runs made elsewhere — or the demo's pre-computed embedded-judge runs — can be loaded
into another database and analysed at once.

Import is atomic and checks that the task holds a frozen checklist version with the same
content hash as the bundle's; every answer is mapped to that version's questions by
(dimension, sub-dimension, text) and to items by their ids. Scores are recomputed.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.runs.jobs import get_run
from checkeval_core.runs.scoring import compute_scores
from checkeval_core.store import NotFound, dumps, loads, now_iso, rows, task_id, transaction

FORMAT = "checkeval-studio/run-v1"


def export_bundle(db: sqlite_utils.Database, run_id: int) -> dict[str, Any]:
    run = get_run(db, run_id)
    if run["status"] != "completed":
        raise ValueError(f"run {run_id} is {run['status']}: only completed runs are bundled")
    v = db.execute("SELECT hash FROM checklist_version WHERE id = ?",
                   [run["checklist_version_id"]]).fetchone()
    answers = rows(db, "SELECT i.item_id, a.dimension, s.name AS sub_dimension, q.text AS "
                       "question, a.unit, a.verdict, a.p_yes, a.value, a.mode, a.raw, a.error "
                       "FROM answer a JOIN item i ON i.id = a.item_id LEFT JOIN question q ON "
                       "q.id = a.question_id LEFT JOIN sub_dimension s ON s.id = "
                       "q.sub_dimension_id WHERE a.run_id = ? ORDER BY a.id", [run_id])
    units = rows(db, "SELECT i.item_id, u.dimension, u.unit, u.kind, u.text, u.position FROM "
                     "seal_unit u JOIN item i ON i.id = u.item_id WHERE u.run_id = ?", [run_id])
    return {"format": FORMAT, "task": run["task"], "judge_spec": run["judge_spec"],
            "method": run["method"], "params": run["params"], "checklist_hash": v[0],
            "scoring_mode": run["scoring_mode"], "tokens_in": run["tokens_in"],
            "tokens_out": run["tokens_out"], "started_at": run["started_at"],
            "finished_at": run["finished_at"], "answers": answers, "seal_units": units}


def import_bundle(db: sqlite_utils.Database, bundle: dict[str, Any], name: str = "",
                  task: str | None = None) -> int:
    """Load a bundle as a completed run of ``task`` (default: the bundle's); returns its id.
    A bundle already imported under ``name`` is not imported twice (its run id is returned)."""
    if bundle.get("format") != FORMAT:
        raise ValueError(f"not a run bundle (format {bundle.get('format')!r}, expected {FORMAT})")
    task = task or bundle["task"]
    tid = task_id(db, task)
    if name:
        for r in rows(db, "SELECT id, params FROM run WHERE task_id = ?", [tid]):
            if loads(r["params"], {}).get("bundle") == name:
                return r["id"]
    v = db.execute("SELECT id, content FROM checklist_version WHERE task_id = ? AND hash = ?",
                   [tid, bundle["checklist_hash"]]).fetchone()
    if v is None:
        raise NotFound(f"task {task!r} has no checklist version with hash "
                       f"{bundle['checklist_hash'][:12]}… (the bundle's checklist)")
    qmap = {(q["dimension"], q["sub_dimension"], q["text"]): q["id"]
            for q in loads(v[1])["questions"]}
    items = {r[0]: r[1] for r in db.execute("SELECT item_id, id FROM item WHERE task_id = ?",
                                            [tid])}
    params = dict(bundle.get("params") or {})
    if name:
        params["bundle"] = name
    with transaction(db):
        rid = db.execute(
            "INSERT INTO run (task_id, checklist_version_id, judge_spec, method, params, "
            "item_ids, status, progress_done, progress_total, tokens_in, tokens_out, "
            "scoring_mode, created_at, started_at, finished_at) VALUES "
            "(?, ?, ?, ?, ?, '[]', 'completed', 0, 0, ?, ?, ?, ?, ?, ?)",
            [tid, v[0], bundle["judge_spec"], bundle["method"], dumps(params),
             bundle.get("tokens_in", 0), bundle.get("tokens_out", 0),
             bundle.get("scoring_mode", ""), now_iso(), bundle.get("started_at"),
             bundle.get("finished_at")]).lastrowid
        seen: set[int] = set()
        for a in bundle["answers"]:
            if a["item_id"] not in items:
                raise NotFound(f"bundle answer for unknown item {a['item_id']!r}")
            qid = 0
            if a.get("question") is not None:
                key = (a["dimension"], a["sub_dimension"], a["question"])
                if key not in qmap:
                    raise NotFound(f"bundle question not in the checklist: {a['question']!r}")
                qid = qmap[key]
            pk = items[a["item_id"]]
            seen.add(pk)
            db.execute("INSERT INTO answer (run_id, item_id, question_id, unit, dimension, "
                       "verdict, p_yes, value, mode, raw, error, cached, created_at) VALUES "
                       "(?,?,?,?,?,?,?,?,?,?,?,1,?)",
                       [rid, pk, qid, a["unit"], a["dimension"], a["verdict"], a["p_yes"],
                        a["value"], a["mode"], a["raw"] or "", a["error"] or "", now_iso()])
        for u in bundle.get("seal_units", []):
            db.execute("INSERT INTO seal_unit (run_id, item_id, dimension, unit, kind, text, "
                       "position) VALUES (?,?,?,?,?,?,?)",
                       [rid, items[u["item_id"]], u["dimension"], u["unit"], u["kind"],
                        u["text"], u["position"]])
        db.execute("UPDATE run SET item_ids = ?, progress_done = ?, progress_total = ? "
                   "WHERE id = ?", [dumps(sorted(seen)), len(seen), len(seen), rid])
    compute_scores(db, rid)
    return rid
