"""A run's pending requests as OpenAI batch files, and their results stored as if asked online.

``checkeval run … --batch-out DIR [--shards N]`` (:func:`write_batch_files`) replays the run's
planning — the same planners, the same skip of stored answers as ``jobs.execute_run`` — and
writes every request the run still needs after the response cache, one JSON line each, with
the request's deterministic id (``judges/cached.py``) as ``custom_id`` and the body the online
backend sends (``judges/batch_format.py``). The files are contiguous slices of that order (an
item's requests stay together, so a server's prefix cache keeps reusing the item's texts), at
most 50,000 requests each (OpenAI's limit per batch). The run records the files
(``run_batch``, ``run.batch = 'files'``); nothing is asked.

``checkeval run --resume R --batch-in FILE…`` (:func:`store_batch_results`) reads result files
(OpenAI's batch output; vLLM's ``run_batch`` writes the same) and stores each answer the way
``execute_run`` stores an online one: the same request id is the cache key, the answer is read
by the online backend's reader and parsed by the method's own parser, and the answer row gets
the result's tokens. Every file is checked first; a line whose ``custom_id`` is not one of the
run's pending requests, whose model is not the judge's, that does not parse, or an id given
twice, refuses the whole call (:class:`BatchFileError`, naming file and line) and nothing is
stored. A line with the id of an answer already stored is skipped (feeding the same files
again after an interruption is safe). A result the provider could not give (an ``error``, a
status other than 200, a completion without an answer) is not stored: its request stays
pending for a later pass. Each file is stored in one transaction, so a process killed while
storing keeps every file stored before and none of the one in progress. When nothing is pending
any more, the run is finished by ``execute_run`` itself (which then asks nothing): scores,
status, cost.

Batching is for ``openai:``, ``openai-compat:`` (one address) and ``fake`` (tests) judges;
a run escalating to a second judge, and a method whose planning needs answers not cached yet
(SEAL's facts and weights), are refused with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlite_utils

from checkeval_core.checklists.versions import version_by_id
from checkeval_core.judges.base import BinaryResult, GenerateResult
from checkeval_core.judges.batch_format import (
    BatchFileError,
    request_line,
    result_lines,
    result_of,
    same_model,
    shard_lines,
)
from checkeval_core.judges.cached import CachedJudge
from checkeval_core.judges.keys import needs_key
from checkeval_core.judges.prices import PriceError, batch_price_of
from checkeval_core.judges.registry import get_judge, parse_spec
from checkeval_core.judges.spec import endpoint_urls
from checkeval_core.runs.escalation import options as escalation
from checkeval_core.runs.estimate import _scratch, record_actual, record_estimate
from checkeval_core.runs.jobs import RunBusy, _store, execute_run, get_run
from checkeval_core.runs.labels import run_label
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.runs.start import start_runs
from checkeval_core.store import now_iso, open_db, transaction
from checkeval_core.tasks import get_task, items
from checkeval_core.team import guarded, log_write, require

BATCH_BACKENDS = ("openai", "openai-compat", "fake")
API_BACKENDS = ("openai", "openai-compat")
NOT_ASKED = "not asked: batch planning"
MAX_SHARDS = 10_000

__all__ = ["BatchFileError", "check_batchable", "write_batch_files", "store_batch_results",
           "batch_requests", "batch_files_of"]


class BatchPending(RuntimeError):
    """The offline judge was asked something: a run in batch mode asks nothing online."""


def check_batchable(run: dict[str, Any], api: bool = False) -> None:
    """ValueError saying why ``run`` cannot be batched (``api``: by a provider's Batch API)."""
    check_batch_spec(run["judge_spec"], run["params"], api, f"run {run['id']}")


def check_batch_spec(spec: str, params: dict[str, Any], api: bool = False,
                     what: str = "the run") -> None:
    """ValueError saying why a run of judge ``spec`` with ``params`` cannot be batched —
    checked before a run is created."""
    backend = parse_spec(spec).backend
    allowed = API_BACKENDS if api else BATCH_BACKENDS
    flag = "--batch" if api else "batch files"
    if backend not in allowed:
        raise ValueError(f"{flag}: judge {spec!r} cannot be batched; only "
                         f"{' and '.join(b + ':' for b in API_BACKENDS)} judges can")
    if len(endpoint_urls(spec)) > 1:
        raise ValueError(f"{flag}: judge {spec!r} is a pool of servers; give one address")
    if escalation.enabled(params):
        raise ValueError(f"{flag}: {what} escalates to a second judge, which asks in passes "
                         "that depend on the first judge's answers: run it online")


class _Offline:
    """The run's backend as the wrapper sees it (spec, model, parameters: the same request
    ids and prices), answering nothing."""

    def __init__(self, inner: Any) -> None:
        self.spec = inner.spec
        self.capabilities = inner.capabilities
        self.params = dict(getattr(inner, "params", {}) or {})

    def binary(self, requests: Sequence[Any]) -> list[BinaryResult]:
        raise BatchPending(f"{len(requests)} request(s) not answered by a batch")

    def generate(self, requests: Sequence[Any]) -> list[GenerateResult]:
        raise BatchPending(f"{len(requests)} request(s) not answered by a batch")


def offline_judge(db: sqlite_utils.Database, spec: str) -> CachedJudge:
    """The run's judge wrapped with its cache in ``db``, asking nothing (a backend that sends
    a key gets a placeholder that is never sent: writing or reading files needs no key)."""
    extra = {"api_key": "batch-files-never-sent"} if needs_key(spec) else {}
    return CachedJudge(_Offline(get_judge(spec, db=None, **extra).inner), db=db)


class _Collector:
    """The judge a planner sees while a batch is planned: cached answers, else an error
    result (``NOT_ASKED``), counting what it could not answer."""

    def __init__(self, cj: CachedJudge, strict: bool) -> None:
        self.cj = cj
        self.spec = cj.spec
        self.capabilities = cj.capabilities
        self.strict = strict
        self.misses = 0

    def _ask(self, kind: str, requests: Sequence[Any]) -> list[Any]:
        keys = [self.cj._key(kind, r.cache_payload()) for r in requests]
        hits = self.cj._lookup(keys)
        make = BinaryResult if kind == "binary" else GenerateResult
        out = []
        for k in keys:
            if k in hits:
                res = make(**hits[k])
                res.cached = True
                out.append(res)
                continue
            if self.strict:
                raise BatchPending("planning needs an answer that is not cached")
            self.misses += 1
            out.append(BinaryResult(verdict="invalid", error=NOT_ASKED) if kind == "binary"
                       else GenerateResult(error=NOT_ASKED))
        return out

    def binary(self, requests: Sequence[Any]) -> list[BinaryResult]:
        return self._ask("binary", requests)

    def generate(self, requests: Sequence[Any]) -> list[GenerateResult]:
        return self._ask("generate", requests)


@dataclass
class Planned:
    """One pending request: its id, kind, the request, and the work units it answers."""

    key: str
    kind: str
    request: Any
    works: list[Any] = field(default_factory=list)


@dataclass
class Plan:
    pending: dict[str, Planned]  # request id → request, in the order execute_run asks them
    cached: set[str]  # pending ids whose answer is in the response cache
    answered: set[str]  # ids of the run's requests whose answers are stored
    n_items: int = 0


def plan_run(db: sqlite_utils.Database, run: dict[str, Any], cj: CachedJudge,
             write: bool = False) -> Plan:
    """The run's requests as ``execute_run`` would ask them now. Without ``write`` the
    planners' own writes (SEAL's units and weights) go to a scratch copy of the schema; a
    planner that needs an answer not cached yet is refused (ValueError)."""
    task = get_task(db, run["task"])
    content = version_by_id(db, run["checklist_version_id"])["content"]
    m = method_entry(run["method"])
    params = run["params"] if write else dict(run["params"])
    collector = _Collector(cj, strict=write)
    ctx = {"kind": task["kind"], "content": content, "params": params,
           "definitions": {d["name"]: d.get("definition", "") for d in content["dimensions"]},
           "db": db if write else _scratch(db),
           "run": run if write else {**run, "params": params}, "judge": collector}
    its = items(db, run["task"], pks=list(run["item_ids"]))
    its.sort(key=lambda i: (i["group_id"], i["position"]))
    pending: dict[str, Planned] = {}
    answered: set[str] = set()
    if m.prepare:
        m.prepare(ctx)
    for it in its:
        have = {(r[0], r[1]) for r in db.execute(
            "SELECT question_id, unit FROM answer WHERE run_id = ? AND item_id = ?",
            [run["id"], it["id"]])}
        works = m.plan(it, ctx)
        for w in works:
            key = cj._key(w.kind, w.request.cache_payload())
            if all((q, u) in have for q, u, _ in w.targets):
                answered.add(key)
            else:
                pending.setdefault(key, Planned(key, w.kind, w.request)).works.append(w)
    if collector.misses:
        raise ValueError(f"batch: method {run['method']!r} asks the judge while planning "
                         f"({collector.misses} answer(s) not cached yet, e.g. SEAL's facts "
                         "and weights): run it online, or run those first")
    cached = set(cj._lookup(list(pending)))
    return Plan(pending, cached, answered - set(pending), len(its))


def batch_requests(db: sqlite_utils.Database, run_id: int, api: bool = False) -> list[str]:
    """The input lines of a batch of run ``run_id`` now: its pending requests not cached, in
    the order ``execute_run`` asks them (``api``: for a provider's Batch API)."""
    run = get_run(db, run_id)
    check_batchable(run, api=api)
    cj = offline_judge(db, run["judge_spec"])
    plan = plan_run(db, run, cj)
    return [request_line(p.key, cj.capabilities.model, p.kind, p.request)
            for k, p in plan.pending.items() if k not in plan.cached]


@guarded("run.start")
def write_batch_files(db: sqlite_utils.Database, run_id: int, out_dir: str | Path,
                      shards: int = 1) -> dict[str, Any]:
    """Write run ``run_id``'s pending requests to ``out_dir`` as OpenAI batch files and
    record them on the run; returns ``{"run", "files", "requests"}``. Nothing is asked.
    Behind a login, only a role that may start runs may (the files hold every item's text
    and switch the run to batch mode): checked before anything is read, and logged."""
    if not 1 <= shards <= MAX_SHARDS:
        raise ValueError(f"--shards must be between 1 and {MAX_SHARDS}")
    run = get_run(db, run_id)
    if run["status"] == "completed":
        raise ValueError(f"run {run_id} is completed: nothing is pending")
    if run["status"] == "running" and run["alive"] and run["pid"] != os.getpid():
        raise RunBusy(f"run {run_id} is running (pid {run['pid']}): its worker asks what is "
                      "pending; cancel it first")
    lines = batch_requests(db, run_id)
    parts = shard_lines(lines, shards)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--batch-out {out}: not a directory")
    out.mkdir(parents=True, exist_ok=True)
    stamp = now_iso()
    files = []
    for k, part in enumerate(parts, start=1):
        p = out / f"run-{run_id}-{k:03d}-of-{len(parts):03d}.jsonl"
        tmp = p.with_suffix(".jsonl.tmp")
        tmp.write_text("\n".join(part) + "\n", encoding="utf-8")
        os.replace(tmp, p)
        files.append((p, len(part)))
    with transaction(db):
        db.execute("UPDATE run SET batch = 'files' WHERE id = ? AND batch = ''", [run_id])
        # the files written before hold requests answered since: these replace them
        db.execute("UPDATE run_batch SET status = 'replaced', updated_at = ? WHERE run_id = ? "
                   "AND mode = 'files' AND status = 'written'", [stamp, run_id])
        for p, n in files:
            db.execute("INSERT INTO run_batch (run_id, judge_spec, mode, file_name, n_requests,"
                       " status, created_at, updated_at) VALUES (?, ?, 'files', ?, ?, "
                       "'written', ?, ?)", [run_id, run["judge_spec"], str(p.resolve()), n,
                                            stamp, stamp])
    return {"run": run_id, "files": [str(p) for p, _ in files], "requests": len(lines)}


def start_batched(db: sqlite_utils.Database, task: str, judges: list[str], methods: list[str],
                  api: bool, out_dir: str | Path | None = None,
                  **kw: Any) -> dict[str, Any]:
    """The Run page's batch starts: runs created as ``start_runs`` creates them (launching
    none), every judge checked first. ``api``: each run is marked for the provider's Batch
    API (the caller launches its worker, which submits and polls); else its batch files are
    written under ``out_dir/run-N``. Returns ``{"started", "errors", "reused", "files"}``."""
    specs = [j.strip() for j in judges if j and j.strip()]
    try:
        for spec in specs:
            check_batch_spec(spec, dict(kw.get("params") or {}), api)
    except ValueError as e:
        return {"started": [], "errors": [str(e)], "reused": [], "files": {}}
    res = start_runs(db, task, specs, methods, launch=None, **kw)
    files = {}
    for rid in res.started:
        if api:
            db.execute("UPDATE run SET batch = 'api' WHERE id = ?", [rid])
        else:
            files[rid] = write_batch_files(db, rid, Path(out_dir or ".") / f"run-{rid}")
    return {"started": res.started, "errors": res.errors, "reused": res.reused,
            "files": files}


def batched_runs(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    """A task's runs asked by batch (files or a provider's Batch API), newest first, each
    with its ``label``, ``status``, ``batch`` mode and ``batches`` (its ``run_batch`` rows)."""
    cur = db.execute("SELECT r.id FROM run r JOIN task t ON t.id = r.task_id WHERE t.name = ? "
                     "AND r.batch != '' ORDER BY r.id DESC", [task])
    out = []
    for (rid,) in cur.fetchall():
        run = get_run(db, rid)
        out.append({"id": rid, "label": run_label(run), "status": run["status"],
                    "batch": run["batch"], "n_answers": run["n_answers"],
                    "batches": batch_files_of(db, rid)})
    return out


def batch_files_of(db: sqlite_utils.Database, run_id: int) -> list[dict[str, Any]]:
    """The batch files and provider batches recorded for a run, oldest first."""
    cur = db.execute("SELECT * FROM run_batch WHERE run_id = ? ORDER BY id", [run_id])
    cols = [c[0] for c in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


# -- storing results ------------------------------------------------------------------------
@dataclass
class _Checked:
    name: str
    results: list[tuple[str, Any]]  # (request id, result) to store
    skipped: int = 0
    failed: list[str] = field(default_factory=list)


def _check_files(plan: Plan, run: dict[str, Any], model: str,
                 files: list[tuple[str, bytes]]) -> list[_Checked]:
    """Every file read and checked before anything is stored (see the module docstring)."""
    seen: dict[str, tuple[str, int]] = {}
    out = []
    for name, data in files:
        chk = _Checked(name, [])
        for r in result_lines(data, name):
            where = f"{name}: line {r.line}"
            if r.custom_id in seen:
                f, n = seen[r.custom_id]
                raise BatchFileError(f"{where}: custom_id {r.custom_id[:80]!r} is given twice "
                                     f"(first in {f}, line {n})")
            seen[r.custom_id] = (name, r.line)
            if r.custom_id in plan.answered:
                chk.skipped += 1
                continue
            planned = plan.pending.get(r.custom_id)
            if planned is None:
                raise BatchFileError(f"{where}: custom_id {r.custom_id[:80]!r} is not one of "
                                     f"run {run['id']}'s pending requests")
            if r.body is None:
                chk.failed.append(f"{where}: {r.error}")
                continue
            if not same_model(r.model or "", model):
                raise BatchFileError(f"{where}: answered by model {r.model[:80]!r}, but run "
                                     f"{run['id']}'s judge is {run['judge_spec']!r} (model "
                                     f"{model!r})")
            res = result_of(planned.kind, r.body)
            if res.error:
                chk.failed.append(f"{where}: {res.error}")
                continue
            chk.results.append((r.custom_id, res))
        out.append(chk)
    return out


def _store_one(db: sqlite_utils.Database, run: dict[str, Any], cj: CachedJudge,
               planned: Planned, res: Any, fresh: bool) -> None:
    """Store ``res`` as execute_run stores an online answer: its cache entry (when it came
    from a batch), then each work unit's parsed answers."""
    if fresh:
        d = res.to_dict()
        d.pop("cached", None)
        cj._store(planned.kind, [(planned.key, d)])
    for w in planned.works:
        _store(db, run["id"], w.item_pk, w.parse(res), not fresh, res, run["judge_spec"])


def _batch_price(cj: CachedJudge) -> tuple[float, float] | None:
    caps = cj.capabilities
    try:
        return batch_price_of(cj.spec, caps.model, caps.local)
    except PriceError:
        return None


def store_batch_results(path: str | Path, run_id: int, files: list[tuple[str, bytes]],
                        finish: bool = True) -> dict[str, Any]:
    """Store result files (``(name, bytes)``) of run ``run_id``; returns ``{"run", "stored",
    "skipped", "failed", "pending", "status", "errors"}`` (``errors``: the first few results
    the provider could not give). Raises :class:`BatchFileError` / ValueError before storing
    anything. With ``finish``, a run with nothing pending is completed. Behind a login, only a
    role that may start runs may store their answers (checked before anything is read)."""
    db = open_db(path)
    actor, role = require(db, "run.start")
    run = get_run(db, run_id)
    if run["status"] == "completed":
        raise ValueError(f"run {run_id} is completed: nothing is pending")
    if run["status"] == "running" and run["alive"] and run["pid"] != os.getpid():
        raise RunBusy(f"run {run_id} is running (pid {run['pid']}): stop it first")
    check_batchable(run)
    cj = offline_judge(db, run["judge_spec"])
    model = cj.capabilities.model
    checked = _check_files(plan_run(db, run, cj), run, model, files)
    # everything checked: from here on, the run's real planning (SEAL writes its units, as an
    # online run does) and one transaction per file
    plan = plan_run(db, run, cj, write=True)
    before = record_estimate(db, run_id, cj)
    price = _batch_price(cj)
    stored, failed = 0, []
    for chk in checked:
        failed += chk.failed
        todo = [(k, r) for k, r in chk.results if k in plan.pending]
        if not todo:
            continue
        t_in = sum(r.tokens_in for _, r in todo)
        t_out = sum(r.tokens_out for _, r in todo)
        usd = 0.0 if price is None else (t_in * price[0] + t_out * price[1]) / 1e6
        with transaction(db):
            for k, res in todo:
                _store_one(db, run, cj, plan.pending.pop(k), res, fresh=True)
            db.execute("UPDATE run SET tokens_in = tokens_in + ?, tokens_out = tokens_out + ?, "
                       "cost = cost + ?, heartbeat_at = ? WHERE id = ?",
                       [t_in, t_out, usd, now_iso(), run_id])
        stored += len(todo)
        cj.n_requests += len(todo)
        cj.tokens_in += t_in
        cj.tokens_out += t_out
        cj.cost += usd
    left = _settle_cached(db, run, cj, plan)
    done_items = plan.n_items - len({w.item_pk for p in left.values() for w in p.works})
    db.execute("UPDATE run SET progress_done = ?, progress_at = ? WHERE id = ?",
               [done_items, now_iso(), run_id])
    record_actual(db, run_id, cj, before, paid="batch", priced=price is not None)
    status = get_run(db, run_id)["status"]
    if finish and not left:
        status = _complete(path, run_id, cj)["status"]
    log_write(db, actor, role, "store_batch_results", f"run_id={run_id}")
    return {"run": run_id, "stored": stored, "skipped": sum(c.skipped for c in checked),
            "failed": len(failed), "pending": len(left), "status": status,
            "errors": failed[:5]}


def _settle_cached(db: sqlite_utils.Database, run: dict[str, Any], cj: CachedJudge,
                   plan: Plan) -> dict[str, Planned]:
    """Store the pending answers the response cache holds (as a cache hit online); returns
    what is still pending."""
    hits = cj._lookup(list(plan.pending))
    if hits:
        with transaction(db):
            for k, value in hits.items():
                p = plan.pending.pop(k)
                res = (BinaryResult if p.kind == "binary" else GenerateResult)(**value)
                res.cached = True
                _store_one(db, run, cj, p, res, fresh=False)
    return plan.pending


def finish_if_done(path: str | Path, run_id: int,
                   progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Store cached answers of a batched run; complete it (``execute_run``, which then asks
    nothing) when nothing is pending. Returns ``{"pending", "status"}``."""
    db = open_db(path)
    # it completes the run: the same right as storing its answers
    actor, role = require(db, "run.start")
    run = get_run(db, run_id)
    cj = offline_judge(db, run["judge_spec"])
    left = _settle_cached(db, run, cj, plan_run(db, run, cj, write=True))
    log_write(db, actor, role, "finish_if_done", f"run_id={run_id}")
    if left:
        return {"pending": len(left), "status": run["status"]}
    return {"pending": 0, "status": _complete(path, run_id, cj, progress)["status"]}


def _complete(path: str | Path, run_id: int, cj: CachedJudge,
              progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Finish a run whose answers are all stored: ``execute_run`` (it asks nothing, computes
    the scores, sets the status), then the scoring mode from the stored answers — what an
    online execution reads from the answers it stores (``logprob``, ``text`` or ``mixed``)."""
    run = execute_run(path, run_id, judge=cj, progress=progress)
    if run["status"] == "completed":
        db = open_db(path)
        modes = {r[0] for r in db.execute("SELECT DISTINCT mode FROM answer WHERE run_id = ?",
                                          [run_id])}
        mode = "logprob" if modes == {"logprob"} else ("text" if modes == {"text"} else
                                                       "mixed" if modes else "")
        db.execute("UPDATE run SET scoring_mode = ? WHERE id = ?", [mode, run_id])
        run = get_run(db, run_id)
    return run
