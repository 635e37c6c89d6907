"""Run bundles: a finished run as one portable JSON file (answers by item id and question
text), so runs made elsewhere — or the demo's pre-computed embedded-judge runs — can be loaded
into another database and analysed at once.

Import is atomic (every row is checked first; the run, its answers and its scores are written
in one transaction) and de-duplicated by the bundle's content hash, not its file name. The
run's frozen checklist version is found in the task by its content hash; every answer is mapped
to that version's questions by (dimension, sub-dimension, text) and to items by their ids;
p(Yes) must be a finite number in [0, 1] or null. Errors name the row and field
(``answers[1951].p_yes``). Scores are recomputed.

A bundle also carries its version's content (``checklist``: number, kind, note and questions
as ``[dimension, sub_dimension, text(, group_id)]``), so it loads into a database that never
froze that version: when the task has no version with the bundle's ``checklist_hash``, the
version is frozen, inside the import's transaction, from the task's kept questions with those
keys — every one must be there, and the recomputed hash must equal ``checklist_hash``, or
nothing is written. The new version gets the task's next number (the bundle's number is where
it came from, not a claim on a number). Bundles without ``checklist`` (older files) need the
version to exist, as before.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import sqlite_utils

from checkeval_core.checklists.editing import questions as task_questions
from checkeval_core.checklists.versions import build_content, content_hash, freeze
from checkeval_core.runs.jobs import get_run
from checkeval_core.runs.options import check_params
from checkeval_core.runs.registry import METHODS
from checkeval_core.runs.score_write import compute_scores
from checkeval_core.safeio import InputError, decode_text, load_json_text, read_bytes
from checkeval_core.store import NotFound, dumps, loads, now_iso, rows, task_id, transaction
from checkeval_core.team import guarded

FORMAT = "checkeval-studio/run-v1"


def export_bundle(db: sqlite_utils.Database, run_id: int) -> dict[str, Any]:
    run = get_run(db, run_id)
    if run["status"] != "completed":
        raise ValueError(f"run {run_id} is {run['status']}: only completed runs are bundled")
    v = db.execute("SELECT hash, version, kind, note, content FROM checklist_version WHERE "
                   "id = ?", [run["checklist_version_id"]]).fetchone()
    answers = rows(db, "SELECT i.item_id, a.dimension, s.name AS sub_dimension, q.text AS "
                       "question, a.unit, a.verdict, a.p_yes, a.value, a.mode, a.raw, a.error "
                       "FROM answer a JOIN item i ON i.id = a.item_id LEFT JOIN question q ON "
                       "q.id = a.question_id LEFT JOIN sub_dimension s ON s.id = "
                       "q.sub_dimension_id WHERE a.run_id = ? ORDER BY a.id", [run_id])
    units = rows(db, "SELECT i.item_id, u.dimension, u.unit, u.kind, u.text, u.position FROM "
                     "seal_unit u JOIN item i ON i.id = u.item_id WHERE u.run_id = ?", [run_id])
    return {"format": FORMAT, "task": run["task"], "judge_spec": run["judge_spec"],
            "method": run["method"],
            "params": {k: x for k, x in run["params"].items() if k not in ("bundle", "bundle_hash")},
            "checklist_hash": v[0],
            "checklist": {"version": v[1], "kind": v[2], "note": v[3] or "",
                          "questions": [_question_key(q) for q in loads(v[4])["questions"]]},
            "scoring_mode": run["scoring_mode"], "tokens_in": run["tokens_in"],
            "tokens_out": run["tokens_out"], "started_at": run["started_at"],
            "finished_at": run["finished_at"], "answers": answers, "seal_units": units}


def _question_key(q: dict[str, Any]) -> list[Any]:
    """A version's question as a bundle carries it: what identifies it in any database."""
    key = [q["dimension"], q["sub_dimension"], q["text"]]
    return key + [q["group_id"]] if q.get("group_id") else key


class BundleError(ValueError):
    """A malformed bundle; the message names the file's part (row and field)."""


MAX_ANSWERS = 5_000_000
_VERDICTS = ("yes", "no", "invalid")


def bundle_hash(bundle: dict[str, Any]) -> str:
    """The bundle's content hash (canonical JSON): what de-duplicates imports."""
    try:
        blob = json.dumps(bundle, sort_keys=True, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError, RecursionError) as e:
        raise BundleError(f"cannot read the bundle's content ({type(e).__name__})") from None
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _number(v: Any, where: str, lo: float | None = None, hi: float | None = None) -> None:
    if v is None:
        return
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise BundleError(f"{where}: expected a finite number or null, got {_show(v)}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise BundleError(f"{where}: {v!r} is not between {lo:g} and {hi:g}")


def _show(v: Any) -> str:
    text = json.dumps(v) if isinstance(v, (str, int, float, bool)) or v is None \
        else type(v).__name__
    return text if len(text) <= 60 else text[:60] + "…"


def _text(obj: dict[str, Any], key: str, where: str, nullable: bool = False,
          required: bool = True) -> None:
    if key not in obj:
        if required:
            raise BundleError(f"{where}: missing field {key!r}")
        return
    v = obj[key]
    if v is None and nullable:
        return
    if not isinstance(v, str):
        raise BundleError(f"{where}.{key}: expected text{' or null' if nullable else ''}, "
                          f"got {_show(v)}")


def validate_bundle(bundle: Any) -> None:
    """Check a bundle's shape and values before anything is written: a :class:`BundleError`
    naming the row (``answers[1951]``) and field otherwise."""
    if not isinstance(bundle, dict):
        raise BundleError(f"not a run bundle: the top level is {type(bundle).__name__}, "
                          "expected an object")
    if bundle.get("format") != FORMAT:
        raise BundleError(f"not a run bundle (format {_show(bundle.get('format'))}, "
                          f"expected {FORMAT})")
    for key in ("task", "judge_spec", "method", "checklist_hash"):
        _text(bundle, key, "bundle")
    if bundle["method"] not in METHODS:
        raise BundleError(f"bundle.method: {_show(bundle['method'])} is not one of "
                          f"{', '.join(METHODS)}")
    if not isinstance(bundle.get("params", {}) or {}, dict):
        raise BundleError("bundle.params: expected an object")
    try:  # the same option rules as a run started here (runs/options.py)
        check_params(bundle["method"], bundle.get("params") or {})
    except ValueError as e:
        raise BundleError(f"bundle.params: {str(e).removeprefix('--param ')}") from None
    for key in ("tokens_in", "tokens_out"):
        v = bundle.get(key, 0)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise BundleError(f"bundle.{key}: expected a whole number ≥ 0, got {_show(v)}")
    for key in ("scoring_mode", "started_at", "finished_at"):
        _text(bundle, key, "bundle", nullable=True, required=False)
    if "checklist" in bundle:
        _validate_checklist(bundle["checklist"])
    answers = bundle.get("answers")
    if not isinstance(answers, list):
        raise BundleError("bundle.answers: missing or not a list")
    if len(answers) > MAX_ANSWERS:
        raise BundleError(f"bundle.answers: {len(answers)} rows is more than {MAX_ANSWERS}")
    # p(Yes) of a Yes/No method is a probability; a Likert method (G-Eval) keeps its
    # probability-weighted 1–5 score in the same column
    p_range = (0.0, 1.0) if METHODS[bundle["method"]].binary else (None, None)
    for n, a in enumerate(answers):
        where = f"answers[{n}]"
        if not isinstance(a, dict):
            raise BundleError(f"{where}: expected an object, got {type(a).__name__}")
        for key in ("item_id", "dimension", "unit", "verdict", "mode"):
            _text(a, key, where)
        for key in ("sub_dimension", "question", "raw", "error"):
            _text(a, key, where, nullable=True, required=key in ("question",))
        if a["verdict"] not in _VERDICTS:
            raise BundleError(f"{where}.verdict: {_show(a['verdict'])} is not one of "
                              f"{', '.join(_VERDICTS)}")
        _number(a.get("p_yes"), f"{where}.p_yes", *p_range)
        _number(a.get("value"), f"{where}.value")
    units = bundle.get("seal_units", [])
    if not isinstance(units, list):
        raise BundleError("bundle.seal_units: expected a list")
    for n, u in enumerate(units):
        where = f"seal_units[{n}]"
        if not isinstance(u, dict):
            raise BundleError(f"{where}: expected an object, got {type(u).__name__}")
        for key in ("item_id", "dimension", "unit", "kind", "text"):
            _text(u, key, where)
        pos = u.get("position")
        if isinstance(pos, bool) or not isinstance(pos, int):
            raise BundleError(f"{where}.position: expected a whole number, got {_show(pos)}")


KINDS = ("global", "instance")


def _validate_checklist(c: Any) -> None:
    where = "bundle.checklist"
    if not isinstance(c, dict):
        raise BundleError(f"{where}: expected an object, got {type(c).__name__}")
    if c.get("kind", "global") not in KINDS:
        raise BundleError(f"{where}.kind: {_show(c.get('kind'))} is not one of "
                          f"{', '.join(KINDS)}")
    _text(c, "note", where, nullable=True, required=False)
    n = c.get("version")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise BundleError(f"{where}.version: expected a whole number ≥ 1, got {_show(n)}")
    qs = c.get("questions")
    if not isinstance(qs, list) or not qs:
        raise BundleError(f"{where}.questions: expected a non-empty list")
    for k, q in enumerate(qs):
        at = f"{where}.questions[{k}]"
        if not isinstance(q, list) or len(q) not in (3, 4):
            raise BundleError(f"{at}: expected [dimension, sub_dimension, text(, group_id)], "
                              f"got {_show(q)}")
        if not (isinstance(q[0], str) and (q[1] is None or isinstance(q[1], str))
                and all(isinstance(x, str) for x in q[2:])):
            raise BundleError(f"{at}: dimension, text and group id must be text, "
                              f"sub_dimension text or null; got {_show(q)}")


def read_bundle_file(path: str | Path) -> dict[str, Any]:
    """Parse a bundle file (over the import size limit, not UTF-8, not JSON, too deeply
    nested → :class:`BundleError` naming the file and, for JSON errors, the line)."""
    p = Path(path)
    try:
        data = read_bytes(p)
    except InputError as e:
        raise BundleError(str(e)) from None
    try:
        text = decode_text(data, p.name)
    except InputError:
        raise BundleError(f"{p.name}: not a UTF-8 text file") from None
    if not text.strip():
        raise BundleError(f"{p.name}: the file is empty")
    try:
        return load_json_text(text, p.name)
    except InputError as e:
        msg = str(e)
        raise BundleError(msg if "nested" in msg else f"{p.name}: not JSON ({msg})") from None


def _existing(db: sqlite_utils.Database, tid: int, digest: str) -> int | None:
    for r in rows(db, "SELECT id, params FROM run WHERE task_id = ? AND params LIKE ?",
                  [tid, f"%{digest}%"]):
        if loads(r["params"], {}).get("bundle_hash") == digest:
            return r["id"]
    return None


def import_bundle_info(db: sqlite_utils.Database, bundle: Any, name: str = "",
                       task: str | None = None) -> dict[str, Any]:
    """Load a bundle as a completed run of ``task`` (default: the bundle's), atomically.

    Returns ``{"run": id, "created": bool, "repaired": bool}``. The same content (hash, not
    file name) is imported once: a second import returns the first run (``created`` False),
    and repairs it when it has answers but no scores (a process killed during an older,
    non-atomic import). Every check runs before anything is written; answers, units, the run
    and its scores are written in one transaction, so a bad row leaves nothing.
    """
    validate_bundle(bundle)
    digest = bundle_hash(bundle)
    task = task or bundle["task"]
    tid = task_id(db, task)
    old = _existing(db, tid, digest)
    if old is not None:
        repaired = False
        n_scores = db.execute("SELECT COUNT(*) FROM score WHERE run_id = ?", [old]).fetchone()[0]
        n_answers = db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?",
                               [old]).fetchone()[0]
        if n_scores == 0 and n_answers:
            compute_scores(db, old)
            repaired = True
        if n_answers or not bundle["answers"]:
            return {"run": old, "created": False, "repaired": repaired}
        db.execute("DELETE FROM run WHERE id = ?", [old])  # an empty leftover: import again
    v = db.execute("SELECT id, content FROM checklist_version WHERE task_id = ? AND hash = ?",
                   [tid, bundle["checklist_hash"]]).fetchone()
    plan = None
    if v is not None:
        version_questions = loads(v[1])["questions"]
    elif "checklist" in bundle:
        plan = _version_plan(db, task, bundle["checklist"], bundle["checklist_hash"])
        version_questions = plan["questions"]
    else:
        raise NotFound(f"task {task!r} has no checklist version with hash "
                       f"{bundle['checklist_hash'][:12]}… (the bundle's checklist)")
    # a per-query question is found within its item's query (two queries may share a text)
    qmap = {(q["dimension"], q["sub_dimension"], q["text"], q.get("group_id") or ""): q["id"]
            for q in version_questions}
    items, group_of = {}, {}
    for r in db.execute("SELECT item_id, id, group_id FROM item WHERE task_id = ?", [tid]):
        items[r[0]], group_of[r[0]] = r[1], r[2]
    answer_rows: list[list[Any]] = []
    seen_keys: set[tuple[int, int, str]] = set()
    seen: set[int] = set()
    for n, a in enumerate(bundle["answers"]):
        if a["item_id"] not in items:
            raise BundleError(f"answers[{n}].item_id: task {task!r} has no item "
                              f"{_show(a['item_id'])}")
        qid = 0
        if a.get("question") is not None:
            base = (a["dimension"], a.get("sub_dimension"), a["question"])
            qid = qmap.get((*base, group_of[a["item_id"]])) or qmap.get((*base, ""))
            if qid is None:
                raise BundleError(f"answers[{n}].question: not in the checklist: "
                                  f"{_show(a['question'])}")
        pk = items[a["item_id"]]
        if (pk, qid, a["unit"]) in seen_keys:
            raise BundleError(f"answers[{n}]: a second answer for item {_show(a['item_id'])}, "
                              "the same question and unit")
        seen_keys.add((pk, qid, a["unit"]))
        seen.add(pk)
        answer_rows.append([pk, qid, a["unit"], a["dimension"], a["verdict"], a.get("p_yes"),
                            a.get("value"), a["mode"], a.get("raw") or "", a.get("error") or ""])
    unit_rows = []
    for n, u in enumerate(bundle.get("seal_units", [])):
        if u["item_id"] not in items:
            raise BundleError(f"seal_units[{n}].item_id: task {task!r} has no item "
                              f"{_show(u['item_id'])}")
        unit_rows.append([items[u["item_id"]], u["dimension"], u["unit"], u["kind"], u["text"],
                          u["position"]])
    params = dict(bundle.get("params") or {})
    params["bundle_hash"] = digest
    if name:
        params["bundle"] = name
    now = now_iso()
    with transaction(db):
        if plan is not None:  # the version joins this transaction: no version without its run
            made = freeze(db, task, note=plan["note"], kind=plan["kind"],
                          exclude=plan["exclude"])
            if made["hash"] != bundle["checklist_hash"]:  # the same content as checked above
                raise BundleError("bundle.checklist: the frozen version's hash changed while "
                                  "importing; nothing was written")
            v = (made["id"],)
        rid = db.execute(
            "INSERT INTO run (task_id, checklist_version_id, judge_spec, method, params, "
            "item_ids, status, progress_done, progress_total, tokens_in, tokens_out, "
            "scoring_mode, created_at, started_at, finished_at) VALUES "
            "(?, ?, ?, ?, ?, ?, 'completed', ?, ?, ?, ?, ?, ?, ?, ?)",
            [tid, v[0], bundle["judge_spec"], bundle["method"], dumps(params),
             dumps(sorted(seen)), len(seen), len(seen), bundle.get("tokens_in") or 0,
             bundle.get("tokens_out") or 0, bundle.get("scoring_mode") or "", now,
             bundle.get("started_at"), bundle.get("finished_at")]).lastrowid
        db.conn.executemany(
            "INSERT INTO answer (run_id, item_id, question_id, unit, dimension, verdict, p_yes, "
            "value, mode, raw, error, cached, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,1,?)",
            [[rid, *r, now] for r in answer_rows])
        db.conn.executemany(
            "INSERT INTO seal_unit (run_id, item_id, dimension, unit, kind, text, position) "
            "VALUES (?,?,?,?,?,?,?)", [[rid, *u] for u in unit_rows])
        compute_scores(db, rid)  # joins this transaction: no run without its scores
    return {"run": rid, "created": True, "repaired": False}


def _version_plan(db: sqlite_utils.Database, task: str, checklist: dict[str, Any],
                  digest: str) -> dict[str, Any]:
    """How to freeze the bundle's version from ``task``'s kept questions, checked before
    anything is written: ``{"kind", "note", "exclude", "questions"}`` (``questions``: the
    version's content, with this database's question ids). Raises :class:`NotFound` naming
    the questions the task does not keep, :class:`BundleError` when the rebuilt content does
    not hash to ``digest``."""
    kind = checklist.get("kind") or "global"

    def key(dim: Any, sub: Any, text: Any, group: Any = "") -> tuple[str, str, str, str]:
        return (dim or "", sub or "", text, group or "")

    kept: dict[tuple[str, str, str, str], int] = {}
    other: dict[tuple[str, str, str, str], str] = {}
    kept_ids: list[int] = []
    for q in task_questions(db, task, instance=(kind == "instance")):
        k = key(q["dimension"], q["sub_dimension"], q["text"], q.get("group_id"))
        if q["status"] == "kept":
            kept_ids.append(q["id"])
            kept.setdefault(k, q["id"])  # a duplicate text: one of them stands for it
        else:
            other.setdefault(k, q["status"])
    wanted = [key(*q) for q in checklist["questions"]]
    missing = [k for k in wanted if k not in kept]
    if missing:
        shown = "; ".join(f"[{k[0]}/{k[1]}] {k[2]!r}"
                          + (f" (query {k[3]})" if k[3] else "")
                          + (f" (there, but {other[k]})" if k in other else "")
                          for k in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise NotFound(f"task {task!r} has no checklist version with hash {digest[:12]}… and "
                       f"cannot freeze it: {len(missing)} of the bundle's {len(wanted)} "
                       f"checklist questions are not kept questions of the task: {shown}{more}")
    chosen = {kept[k] for k in wanted}
    exclude = [i for i in kept_ids if i not in chosen]
    content = build_content(db, task, kind, exclude=exclude)
    h = content_hash(content["questions"])
    if h != digest:
        raise BundleError(f"bundle.checklist: the task's questions with these keys make a "
                          f"version with hash {h[:12]}…, not the bundle's {digest[:12]}… "
                          "(a question of the version is tied to an item of the database it "
                          "came from, or the file was edited); nothing was written")
    return {"kind": kind, "note": checklist.get("note") or "", "exclude": exclude,
            "questions": content["questions"]}


@guarded("data.import")
def import_bundle(db: sqlite_utils.Database, bundle: Any, name: str = "",
                  task: str | None = None) -> int:
    """:func:`import_bundle_info`, returning only the run id."""
    return import_bundle_info(db, bundle, name=name, task=task)["run"]
