"""The cost of judge work before it is asked: calls, cache hits, tokens, seconds and dollars.

One function family computes every estimate the app and the CLI show before a click (a run,
*Generate*, *Filter*, a reliability or bias probe, a ``bench`` command):

* **calls** — the requests the judge will really receive: every request the work plans, in the
  order the wrapper (``judges/cached.py``) sends them, minus those whose deterministic request
  id is already in the response cache or was answered earlier in the same work (a run stores
  each answer as it arrives, so a repeated prompt is asked once). ``cached`` counts the rest.
* **prompt_tokens** — prompt tokens the judge evaluates. A backend that can count them
  (``prompt_segments(request)``, e.g. the embedded judge: its own tokenizer, loaded without
  the weights) is replayed request by request with its prefix cache: a request whose leading
  segments equal the cached ones costs only the rest. Any other backend: characters / 4 of
  the whole prompt (an estimate, said in ``notes``).
* **completion_tokens** — 1 per Yes/No question; a generation's ``max_tokens`` (an upper
  bound, said in ``notes``).
* **seconds** — from this machine's measured rate for the judge (:func:`measure_rate`,
  ``checkeval bench rate``; stored in ``<cache dir>/judge_rates.json``), else from the runs of
  that judge already done in this store (:func:`rate_from_runs`):
  ``calls·per_call + prompt_tokens·per_prompt_token + completion_tokens·per_completion_token``.
  ``None`` when neither exists for that judge here.
* **usd** — prompt and completion tokens × the judge's price (``judges/prices.py``,
  ``CHECKEVAL_PRICES``); 0 for a local judge, ``None`` for a remote one without a price.

Planning never asks the judge: a planner that would ask it something (SEAL's fact split and
weights) gets the cached answer when there is one, else an error result, and its follow-up
requests are planned from the fallback (SEAL: sentences for facts) — a note says so. Its
database writes go to a scratch in-memory copy of the schema.

After a run, :func:`record_actual` stores what it really cost beside the estimate stored when
it started (:func:`record_estimate`; columns ``run.estimate`` / ``run.actual``).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sqlite_utils
from scipy.optimize import nnls

from checkeval_core.checklists.evidence import question_evidence
from checkeval_core.checklists.filtering import filter_dimension
from checkeval_core.checklists.grounded import generate
from checkeval_core.checklists.versions import get_version, version_by_id
from checkeval_core.config import cache_dir
from checkeval_core.judges.base import BinaryRequest, BinaryResult, GenerateRequest, GenerateResult
from checkeval_core.judges.cached import CachedJudge
from checkeval_core.judges.keys import needs_key
from checkeval_core.judges.prices import PriceError, batch_price_of, price_of
from checkeval_core.judges.registry import get_judge, parse_spec
from checkeval_core.judges.spec import endpoint_urls
from checkeval_core.runs.options import check_limit, check_method, check_params
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.store import NotFound, dumps, loads, now_iso, rows
from checkeval_core.tasks import get_task, items

KEYS = ("calls", "cached", "prompt_tokens", "completion_tokens", "seconds", "usd")
RATES_FILE = "judge_rates.json"
NOT_ASKED = "not asked: cost estimate"


@dataclass
class Estimate:
    """What some judge work will cost; ``notes`` say where each figure comes from."""

    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float | None = 0.0
    usd: float | None = 0.0
    notes: list[str] = field(default_factory=list)
    # a judge with a provider Batch API (``runs/batch.py``): the same work at its batch price
    # (``judges/prices.py``; None: unknown); ``batchable`` False: there is no batch price
    batchable: bool = False
    usd_batch: float | None = None
    #: the share of one named judge in the totals (an escalating run's second judge):
    #: ``{spec: to_json() of its part}``; stored with a run's estimate, not in ``to_json``
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Exactly :data:`KEYS` (the CLI's ``--estimate --json``), plus ``usd_batch`` when a
        judge can be asked through a provider's Batch API."""
        out = {"calls": self.calls, "cached": self.cached, "prompt_tokens": self.prompt_tokens,
               "completion_tokens": self.completion_tokens,
               "seconds": None if self.seconds is None else round(self.seconds, 1),
               "usd": None if self.usd is None else round(self.usd, 6)}
        if self.batchable:
            out["usd_batch"] = None if self.usd_batch is None else round(self.usd_batch, 6)
        return out

    def __add__(self, other: Estimate) -> Estimate:
        def plus(a: float | None, b: float | None) -> float | None:
            return None if a is None or b is None else a + b

        def batch(e: Estimate) -> float | None:  # a judge without a batch API: online
            return e.usd_batch if e.batchable else e.usd

        return Estimate(self.calls + other.calls, self.cached + other.cached,
                        self.prompt_tokens + other.prompt_tokens,
                        self.completion_tokens + other.completion_tokens,
                        plus(self.seconds, other.seconds), plus(self.usd, other.usd),
                        list(dict.fromkeys(self.notes + other.notes)),
                        self.batchable or other.batchable, plus(batch(self), batch(other)),
                        {**self.parts, **other.parts})

    def text(self) -> str:
        """One line for a page or a terminal (online and batch price side by side when a
        judge has a provider Batch API)."""
        secs = "time unknown" if self.seconds is None else f"≈ {duration(self.seconds)}"
        usd = "cost unknown" if self.usd is None else (
            "$0 (local)" if self.usd == 0 else f"≈ ${self.usd:.4f}")
        if self.batchable:
            usd = (f"online {usd} · with the Batch API " +
                   ("cost unknown" if self.usd_batch is None else f"≈ ${self.usd_batch:.4f}"))
        return (f"{self.calls} judge calls ({self.cached} already cached) · "
                f"{self.prompt_tokens:,} prompt + {self.completion_tokens:,} completion tokens"
                f" · {secs} · {usd}")


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# -- rates: seconds per call and per token, measured on this machine ------------------------------
def rates_path() -> Path:
    return cache_dir() / RATES_FILE


def load_rates() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(rates_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def rate_for(spec: str) -> dict[str, Any] | None:
    """The stored rate of ``spec`` on this machine, or None."""
    r = load_rates().get(spec)
    return r if isinstance(r, dict) and "per_prompt_token" in r else None


def save_rate(spec: str, rate: dict[str, Any]) -> None:
    data = load_rates()
    data[spec] = rate
    p = rates_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(p)


RUNS_FOR_RATE = 20  # the latest runs of a judge a rate is taken from


def rate_from_runs(db: sqlite_utils.Database | None, spec: str) -> dict[str, Any] | None:
    """A rate for ``spec`` taken from the runs of that judge already done in ``db`` (this
    machine's store; the latest :data:`RUNS_FOR_RATE` whose ``actual`` asked it afresh, an
    escalating run left out: its seconds include a second judge), or None when there is none.

    Seconds per token (prompt tokens evaluated + completion tokens) over those runs, with no
    per-call term: a run's calls and tokens move together, so more cannot be told apart from
    a few runs. Model loading counts in (it is part of what a run costs); a generation's
    tokens are decoded, slower than a Yes/No prompt's, so for *Generate* it is a lower bound.
    When the backend counts no tokens, seconds per call."""
    if db is None:
        return None
    try:
        found = db.execute(
            "SELECT actual, params FROM run WHERE judge_spec = ? AND status = 'completed' AND "
            "actual IS NOT NULL ORDER BY id DESC LIMIT ?", [spec, 4 * RUNS_FOR_RATE]).fetchall()
    except Exception:  # noqa: BLE001 - a schema older than the cost columns: no rate
        return None
    runs = []
    for actual, params in found:
        a, p = loads(actual, {}) or {}, loads(params, {}) or {}
        if p.get("escalate_to") or not int(a.get("calls") or 0) or not a.get("seconds"):
            continue
        runs.append(a)
        if len(runs) == RUNS_FOR_RATE:
            break
    if not runs:
        return None
    secs = sum(float(a["seconds"]) for a in runs)
    calls = sum(int(a["calls"]) for a in runs)
    tokens = sum(int(a.get("prompt_tokens") or 0) + int(a.get("completion_tokens") or 0)
                 for a in runs)
    per_token = secs / tokens if tokens else 0.0
    return {"per_call": 0.0 if tokens else secs / calls, "per_prompt_token": per_token,
            "per_completion_token": per_token, "runs": len(runs), "calls": calls,
            "seconds": secs, "source": f"from {len(runs)} earlier run(s) of this judge here "
                                      f"({calls} calls in {duration(secs)})"}


# -- replaying work against the cache and the judge's prefix cache --------------------------------
class Simulation:
    """A stand-in for a judge that records what would be asked and answers nothing new.

    ``binary``/``generate`` have the judge's signature, so a planner that asks the judge
    something gets a result: the cached answer when the response cache has it, else an error
    result (``NOT_ASKED``)."""

    def __init__(self, judge: Any, db: sqlite_utils.Database | None) -> None:
        self.cj = judge if isinstance(judge, CachedJudge) else CachedJudge(judge, db=db)
        if self.cj.db is None and db is not None:
            self.cj = CachedJudge(self.cj.inner, db=db)
        self.inner = self.cj.inner
        self.spec = self.cj.spec
        self.capabilities = self.cj.capabilities
        self.count = getattr(self.inner, "prompt_segments", None)
        self.known: set[str] = set()
        self.kv_tokens: list[int] = []
        self.kv_bounds: list[int] = []
        self.est = Estimate()
        self.approx_tokens = False
        self.upper_completion = False

    # the judge protocol ---------------------------------------------------------------------
    def binary(self, requests: Sequence[BinaryRequest]) -> list[BinaryResult]:
        return self.ask("binary", list(requests))

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]:
        return self.ask("generate", list(requests))

    def ask(self, kind: str, requests: list[Any]) -> list[Any]:
        """Account for one call of the wrapper with ``requests``; returns stand-in results."""
        if not requests:
            return []
        keys = [self.cj._key(kind, r.cache_payload()) for r in requests]
        hits = self.cj._lookup(keys)
        make = BinaryResult if kind == "binary" else GenerateResult
        results: list[Any] = []
        misses: list[int] = []
        for i, k in enumerate(keys):
            if k in hits:
                res = make(**hits[k])
                res.cached = True
                results.append(res)
                self.est.cached += 1
                continue
            if k in self.known:  # answered earlier in this work: the cache has it by then
                self.est.cached += 1
            else:
                misses.append(i)
            results.append(BinaryResult(verdict="invalid", error=NOT_ASKED) if kind == "binary"
                           else GenerateResult(error=NOT_ASKED))
        order = getattr(self.inner, "order", None) if kind == "binary" else None
        if callable(order) and misses:
            misses = [misses[j] for j in order([requests[i] for i in misses])]
        for i in misses:
            self.est.calls += 1
            self.est.prompt_tokens += self._prompt_tokens(requests[i])
            if kind == "binary":
                self.est.completion_tokens += 1
            else:
                self.est.completion_tokens += requests[i].max_tokens
                self.upper_completion = True
        self.known.update(keys[i] for i in misses)
        return results

    def _prompt_tokens(self, req: Any) -> int:
        if not callable(self.count):
            self.approx_tokens = True
            if isinstance(req, BinaryRequest):
                chars = len(req.system) + len(req.user_text)
            else:
                chars = sum(len(c) for _, c in req.messages)
            return max(1, round(chars / 4))
        try:
            tokens, bounds = self.count(req)
        except Exception as e:  # noqa: BLE001 - e.g. the model's package is not installed
            self.count = None
            self.est.notes.append(f"{self.spec}: its tokenizer cannot be loaded "
                                  f"({type(e).__name__}: {str(e)[:120]})")
            return self._prompt_tokens(req)
        if not self.capabilities.prefix_reuse:
            return len(tokens)
        # the embedded judge's segment cache (embedded._Engine.eval_segments), replayed
        start = 0
        for j, b in enumerate(bounds[:-1]):
            if j < len(self.kv_bounds) and self.kv_bounds[j] == b and \
                    self.kv_tokens[:b] == tokens[:b]:
                start = j + 1
            else:
                break
        pos = bounds[start - 1] if start else 0
        self.kv_tokens = self.kv_tokens[:pos] + tokens[pos:]
        self.kv_bounds = self.kv_bounds[:start] + bounds[start:]
        return len(tokens) - pos

    # the result -------------------------------------------------------------------------------
    def result(self) -> Estimate:
        est = Estimate(self.est.calls, self.est.cached, self.est.prompt_tokens,
                       self.est.completion_tokens, notes=list(self.est.notes))
        if callable(self.count):
            est.notes.append(f"{self.spec}: prompt tokens counted with the judge's tokenizer"
                             + (", after prefix reuse" if self.capabilities.prefix_reuse
                                else ""))
        elif self.approx_tokens:
            est.notes.append(f"{self.spec}: prompt tokens ≈ characters / 4 (no tokenizer for "
                             "this backend)")
        if self.upper_completion:
            est.notes.append("completion tokens of generations: their max_tokens (an upper "
                             "bound)")
        rate = rate_for(self.spec)
        from_runs = rate is None and est.calls > 0
        if from_runs:
            rate = rate_from_runs(self.cj.db, self.spec)
        if rate is None:
            est.seconds = None if est.calls else 0.0
            if est.calls:
                est.notes.append(f"{self.spec}: no measured rate on this machine and no "
                                 f"earlier run of this judge — `checkeval bench rate --judge "
                                 f"{self.spec}`, or run a few items first")
        else:
            est.seconds = (est.calls * rate["per_call"]
                           + est.prompt_tokens * rate["per_prompt_token"]
                           + est.completion_tokens * rate["per_completion_token"])
            est.notes.append(
                f"{self.spec}: time at the rate {rate['source']}; `checkeval bench rate` "
                "measures it more exactly" if from_runs else
                f"{self.spec}: time from the rate measured {rate.get('source', '')}"
                f" on {rate.get('measured_at', '?')[:16]}")
        caps = self.capabilities
        try:
            price = price_of(self.spec, caps.model, caps.local)
        except PriceError as e:
            price = None
            est.notes.append(str(e))
        if price is None:
            est.usd = None if est.calls else 0.0
            if est.calls:
                est.notes.append(f"{self.spec}: no price for model {caps.model!r} — set "
                                 f"CHECKEVAL_PRICES")
        else:
            est.usd = (est.prompt_tokens * price[0] + est.completion_tokens * price[1]) / 1e6
        self._batch_price(est)
        return est

    def _batch_price(self, est: Estimate) -> None:
        """``usd_batch`` for a judge with a provider Batch API (``openai:``, one
        ``openai-compat:`` address): its batch price, or unknown with a note."""
        caps = self.capabilities
        backend = self.spec.split(":", 1)[0]
        if caps.local or backend not in ("openai", "openai-compat") or \
                len(endpoint_urls(self.spec)) > 1:
            return
        est.batchable = True
        try:
            price = batch_price_of(self.spec, caps.model, caps.local)
        except PriceError:
            price = None
        if price is None:
            est.usd_batch = None if est.calls else 0.0
            if est.calls:
                est.notes.append(f"{self.spec}: no batch price for model {caps.model!r} — "
                                 "set batch_input/batch_output in CHECKEVAL_PRICES")
        else:
            est.usd_batch = (est.prompt_tokens * price[0]
                             + est.completion_tokens * price[1]) / 1e6


def estimate_requests(judge: Any, batches: Iterable[tuple[str, Sequence[Any]]],
                      db: sqlite_utils.Database | None = None) -> Estimate:
    """The cost of sending ``batches`` — ``(kind, requests)`` pairs, one per wrapper call, in
    order — to ``judge`` (a judge object or a spec string); nothing is asked."""
    sim = Simulation(judge_to_look_at(judge, db), db)
    for kind, reqs in batches:
        sim.ask(kind, list(reqs))
    return sim.result()


@contextmanager
def _dry(db: sqlite_utils.Database | None) -> Iterator[None]:
    """Everything ``db`` gets written inside is rolled back (a savepoint): the feature a
    cost is estimated for runs its own code, and stores nothing."""
    if db is None:
        yield
        return
    conn = db.conn
    if conn.in_transaction:
        raise RuntimeError("a cost estimate cannot run inside a transaction")
    conn.execute("SAVEPOINT cost_estimate")
    try:
        yield
    finally:
        conn.execute("ROLLBACK TO SAVEPOINT cost_estimate")
        conn.execute("RELEASE SAVEPOINT cost_estimate")


def estimate_calls(judge: Any, work: Callable[[Any], Any],
                   db: sqlite_utils.Database | None = None) -> Estimate:
    """The cost of ``work(judge)`` — a feature's own function (*Generate*, *Filter*, a probe)
    called with a stand-in judge that answers nothing new (see :class:`Simulation`), its
    writes rolled back and its result discarded. Requests that depend on an answer not yet
    cached are planned from the feature's own fallback for a failed answer. The feature's
    refusals (ValueError: no seeds, an unknown dimension) are raised as they would be."""
    sim = Simulation(judge_to_look_at(judge, db), db)
    with _dry(db):
        work(sim)
    est = sim.result()
    est.notes.append("later steps that need the judge's answers are counted as if the first "
                     "answers were missing")
    return est


def judge_to_look_at(judge: Any, db: sqlite_utils.Database | None) -> Any:
    """The judge object for a spec, built to be looked at, never asked: a backend that sends
    a key gets a placeholder (so a price can be shown before a key is set; nothing is sent,
    and keys are not part of the request ids)."""
    if isinstance(judge, str):
        extra = {"api_key": "estimate-only-never-sent"} if needs_key(judge) else {}
        return get_judge(judge, db=db, **extra)
    return judge


# -- runs -----------------------------------------------------------------------------------------
def _scratch(db: sqlite_utils.Database) -> sqlite_utils.Database:
    """An in-memory database with ``db``'s tables (empty), for planners that write."""
    scratch = sqlite_utils.Database(memory=True)
    for (sql,) in db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT "
                             "NULL AND name NOT LIKE 'sqlite_%'").fetchall():
        scratch.execute(sql)
    return scratch


def _plan(db: sqlite_utils.Database, sim: Simulation, task: str, method: str,
          content: dict[str, Any], params: dict[str, Any], its: list[dict[str, Any]],
          run_id: int | None) -> None:
    """Replay ``runs/jobs.execute_run``'s loop (prepare, then the binary and generate batch of
    each item — of ``items_at_once`` items for a pool) against ``sim``."""
    m = method_entry(method)
    scratch = _scratch(db)
    ctx = {"kind": get_task(db, task)["kind"], "content": content, "params": dict(params),
           "definitions": {d["name"]: d.get("definition", "") for d in content["dimensions"]},
           "db": scratch, "run": {"id": run_id or 0, "params": dict(params)}, "judge": sim}
    ctx["run"]["params"] = ctx["params"]
    if m.prepare:
        m.prepare(ctx)
    asked_judge = sim.est.calls + sim.est.cached > 0
    its = sorted(its, key=lambda i: (i["group_id"], i["position"]))
    step = max(1, int(getattr(sim.capabilities, "items_at_once", 1) or 1))
    for start in range(0, len(its), step):  # the items a run sends in one call
        todo = []
        for it in its[start:start + step]:
            have: set[tuple[int, str]] = set()
            if run_id:
                have = {(r[0], r[1]) for r in db.execute(
                    "SELECT question_id, unit FROM answer WHERE run_id = ? AND item_id = ?",
                    [run_id, it["id"]])}
            before = sim.est.calls + sim.est.cached
            works = m.plan(it, ctx)
            asked_judge = asked_judge or sim.est.calls + sim.est.cached > before
            todo += [w for w in works if not all((q, u) in have for q, u, _ in w.targets)]
        for kind in ("binary", "generate"):
            batch = [w.request for w in todo if w.kind == kind]
            if batch:
                sim.ask(kind, batch)
    if asked_judge:
        sim.est.notes.append(f"{method}: planning asks the judge (e.g. SEAL's facts); "
                             "answers not cached yet are planned from the fallback (sentences)")


def estimate_run(db: sqlite_utils.Database, run_id: int, judge: Any = None) -> Estimate:
    """What the rest of stored run ``run_id`` will cost (its answers already stored are
    skipped, as a resumed run skips them)."""
    found = rows(db, "SELECT r.judge_spec, r.method, r.params, r.item_ids, "
                     "r.checklist_version_id, t.name AS task FROM run r JOIN task t ON "
                     "t.id = r.task_id WHERE r.id = ?", [run_id])
    if not found:
        raise NotFound(f"no run {run_id}")
    run = found[0]
    sim = Simulation(judge_to_look_at(judge or run["judge_spec"], db), db)
    content = version_by_id(db, run["checklist_version_id"])["content"]
    its = items(db, run["task"], pks=list(loads(run["item_ids"], [])))
    _plan(db, sim, run["task"], run["method"], content, loads(run["params"], {}), its, run_id)
    return sim.result()


def estimate_new_run(db: sqlite_utils.Database, task: str, judge: str, method: str,
                     checklist: str | int = "latest", limit: int | None = None,
                     item_ids: list[str] | None = None,
                     params: dict[str, Any] | None = None) -> Estimate:
    """What a run ``create_run`` would create with these arguments will cost; checked as
    ``create_run`` checks them (ValueError naming the option), nothing written."""
    check_method(method)
    check_limit(limit)
    check_params(method, dict(params or {}))
    spec = parse_spec(judge).spec
    version = get_version(db, task, checklist)
    chosen = items(db, task, limit=limit, item_ids=item_ids)
    if not chosen:
        raise ValueError(f"task {task!r}: no items selected")
    sim = Simulation(judge_to_look_at(spec, db), db)
    # the options planners read are the ones given (the defaults create_run adds are scoring
    # options: they do not change what is asked)
    _plan(db, sim, task, method, version["content"], dict(params or {}), chosen, None)
    return sim.result()


def estimate_batch(db: sqlite_utils.Database, task: str, judges: list[str], methods: list[str],
                   **kw: Any) -> Estimate:
    """The sum over judge × method, as ``runs/start.start_runs`` would start them; ``primary``
    (a primary aggregation) is accepted and does not change the cost."""
    kw.pop("primary", None)
    total = Estimate()
    for j in [j.strip() for j in judges if j and j.strip()]:
        for m in methods:
            total = total + estimate_new_run(db, task, j, m, **kw)
    return total


# -- the Dimensions page's Generate and Filter -----------------------------------------------------
def estimate_generate(db: sqlite_utils.Database, task: str, dimension: str, strategy: str,
                      judge: str, n: int = 4, fresh: bool = False,
                      mode: str | None = None) -> Estimate:
    """What *Generate* (``checklists.grounded.generate``: any strategy) with these arguments
    will cost."""
    spec = judge.strip() or "embedded"
    return estimate_calls(spec, lambda j: generate(db, task, dimension, strategy, spec, n=n,
                                                   judge_obj=j, fresh=fresh, mode=mode), db)


def estimate_filter(db: sqlite_utils.Database, task: str, dimension: str,
                    judge: str, mode: str | None = None) -> Estimate:
    """What *Filter* (``checklists.filtering.filter_dimension``) will cost."""
    spec = judge.strip() or "embedded"
    return estimate_calls(spec, lambda j: filter_dimension(db, task, dimension, spec,
                                                           judge_obj=j, mode=mode), db)


def estimate_evidence(db: sqlite_utils.Database, task: str, judge: str, status: str = "proposed",
                      n_items: int = 24, dimension: str | None = None) -> Estimate:
    """What testing questions on dev items (``checklists.evidence.question_evidence``) will
    cost."""
    spec = judge.strip() or "embedded"
    return estimate_calls(spec, lambda j: question_evidence(
        db, task, spec, status=status, n_items=n_items, dimension=dimension, judge_obj=j), db)


# -- stored beside the run ------------------------------------------------------------------------
def _snapshot(judge: Any) -> dict[str, float]:
    inner = getattr(judge, "inner", judge)
    evaluated = getattr(inner, "tokens_evaluated", None)
    return {"calls": getattr(judge, "n_requests", 0), "cached": getattr(judge, "n_cache_hits", 0),
            "prompt_tokens": evaluated if evaluated is not None else getattr(judge, "tokens_in", 0),
            "completion_tokens": getattr(judge, "tokens_out", 0),
            "usd": getattr(judge, "cost", 0.0), "t": time.perf_counter()}


def _priced(judge: Any) -> bool:
    """Whether a judge's dollars are known (a local judge, or a model with a price)."""
    caps = getattr(judge, "capabilities", None)
    try:
        return caps is None or price_of(getattr(judge, "spec", ""), caps.model,
                                        caps.local) is not None
    except PriceError:
        return False


def _has_cost_columns(db: sqlite_utils.Database) -> bool:
    """False on a connection opened on a schema older than migration m0016 (kept open while
    the file was upgraded elsewhere, as a test of old databases does): nothing is stored."""
    return {"estimate", "actual"} <= {r[1] for r in db.execute("PRAGMA table_info(run)")}


def record_estimate(db: sqlite_utils.Database, run_id: int, judge: Any,
                    estimate: Callable[..., Estimate] | None = None) -> dict[str, float]:
    """Store the run's estimate (once: a resumed run keeps the first) and return the judge's
    counters now, for :func:`record_actual`. An estimate that cannot be made is stored as
    its reason; it never stops the run. ``estimate(db, run_id, judge)`` replaces
    :func:`estimate_run` (an escalating run adds its second judge's expected share, stored
    under ``parts``)."""
    if not _has_cost_columns(db):
        return _snapshot(judge)
    row = db.execute("SELECT estimate FROM run WHERE id = ?", [run_id]).fetchone()
    if row is not None and row[0] is None:
        try:
            est = (estimate or estimate_run)(db, run_id, judge)
            value = {**est.to_json(), "notes": est.notes, "at": now_iso(),
                     **({"parts": est.parts} if est.parts else {})}
        except Exception as e:  # noqa: BLE001 - the estimate is information, not a gate
            value = {"error": f"{type(e).__name__}: {e}"[:500], "at": now_iso()}
        db.execute("UPDATE run SET estimate = ? WHERE id = ?", [dumps(value), run_id])
    return _snapshot(judge)


def _stored_actual(db: sqlite_utils.Database, run_id: int) -> dict[str, Any] | None:
    """The run's ``actual`` so far ({} before its first execution); None where nothing can be
    stored (no such run, or a schema older than the cost columns)."""
    if not _has_cost_columns(db):
        return None
    row = db.execute("SELECT actual FROM run WHERE id = ?", [run_id]).fetchone()
    return None if row is None else (loads(row[0], {}) or {})


def record_actual(db: sqlite_utils.Database, run_id: int, judge: Any,
                  before: dict[str, float], paid: str | None = None,
                  priced: bool | None = None) -> None:
    """Add what this execution of the run cost (judge calls, cache hits, prompt tokens
    evaluated, completion tokens, wall seconds, dollars) to ``run.actual``; ``paid`` says
    which price this execution paid (``"batch"`` for answers from a batch, ``runs/batch.py``;
    else ``"online"`` when it asked the judge), kept in ``actual.paid`` with the earlier
    executions' (``"online"``, ``"batch"`` or ``"batch+online"``); ``priced``: whether that
    price is known (default: whether the judge's online price is)."""
    now = _snapshot(judge)
    old = _stored_actual(db, run_id)
    if old is None:
        return
    if priced is None:
        priced = _priced(judge)
    # a second judge's share (record_part_actual) is kept; its counts are in the totals
    out: dict[str, Any] = {"parts": old["parts"]} if old.get("parts") else {}
    for k in ("calls", "cached", "prompt_tokens", "completion_tokens"):
        out[k] = int(old.get(k, 0) or 0) + int(now[k] - before[k])
    out["seconds"] = round(float(old.get("seconds", 0) or 0) + now["t"] - before["t"], 2)
    out["usd"] = round(float(old.get("usd", 0) or 0) + now["usd"] - before["usd"], 6) \
        if priced and ("usd" not in old or old["usd"] is not None) else None
    out["executions"] = int(old.get("executions", 0) or 0) + 1
    # which prices were paid over the executions: "online", "batch" or "batch+online"
    this = paid or ("online" if out["calls"] > int(old.get("calls", 0) or 0) else None)
    kinds = {k for k in str(old.get("paid") or "").split("+") if k} | ({this} if this else set())
    out["paid"] = "+".join(sorted(kinds)) or "online"
    db.execute("UPDATE run SET actual = ? WHERE id = ?", [dumps(out), run_id])


def snapshot(judge: Any) -> dict[str, float]:
    """A judge's counters now (calls, cache hits, tokens, dollars, a clock), for
    :func:`record_part_actual`."""
    return _snapshot(judge)


def record_part_actual(db: sqlite_utils.Database, run_id: int, judge: Any,
                       before: dict[str, float]) -> None:
    """Add what ``judge`` — a run's second judge — cost since ``before`` to ``run.actual``:
    to its totals (calls, cache hits, tokens, dollars; the wall seconds are the run's own,
    counted once by :func:`record_actual`) and to ``parts[spec]`` (the seconds of its pass
    included), beside the estimate's ``parts``."""
    now = _snapshot(judge)
    out = _stored_actual(db, run_id)
    if out is None:
        return
    spec = str(getattr(judge, "spec", "second judge"))
    part = dict((out.get("parts") or {}).get(spec) or {})
    for k in ("calls", "cached", "prompt_tokens", "completion_tokens"):
        d = int(now[k] - before[k])
        out[k] = int(out.get(k, 0) or 0) + d
        part[k] = int(part.get(k, 0) or 0) + d
    usd = float(now["usd"] - before["usd"])
    priced = _priced(judge) and part.get("usd", 0) is not None
    part["usd"] = round(float(part.get("usd", 0) or 0) + usd, 6) if priced else None
    out["usd"] = round(float(out.get("usd", 0) or 0) + usd, 6) \
        if priced and out.get("usd", 0) is not None else None
    part["seconds"] = round(float(part.get("seconds", 0) or 0) + now["t"] - before["t"], 2)
    out["parts"] = {**(out.get("parts") or {}), spec: part}
    db.execute("UPDATE run SET actual = ? WHERE id = ?", [dumps(out), run_id])


def estimate_vs_actual(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows figure / estimate / actual / ratio for a run's stored columns (the Run page); an
    escalating run adds its second judge's share of each figure (``calls · B``, …) below
    the totals, which include it."""
    est = loads(run.get("estimate"), None) if isinstance(run.get("estimate"), str) \
        else run.get("estimate")
    act = loads(run.get("actual"), None) if isinstance(run.get("actual"), str) \
        else run.get("actual")
    if not est or "error" in est:
        return []
    out = []
    for k in KEYS:
        e, a = est.get(k), (act or {}).get(k)
        if k == "usd" and (act or {}).get("paid") == "batch" and "usd_batch" in est:
            e = est["usd_batch"]  # paid at the batch price: compared with its estimate
        ratio = (a / e) if isinstance(e, int | float) and isinstance(a, int | float) and e \
            else None
        out.append({"figure": k, "estimate": e, "actual": a,
                    "actual / estimate": None if ratio is None else round(ratio, 3)})
    act_parts = (act or {}).get("parts") or {}
    for spec, part in (est.get("parts") or {}).items():
        got = act_parts.get(spec) or {}
        for k in ("calls", "cached", "seconds", "usd"):
            e, a = part.get(k), got.get(k)
            ratio = (a / e) if isinstance(e, int | float) and isinstance(a, int | float) \
                and e else None
            out.append({"figure": f"{k} · second judge {spec}", "estimate": e, "actual": a,
                        "actual / estimate": None if ratio is None else round(ratio, 3)})
    return out


# -- measuring the rate ---------------------------------------------------------------------------
_ARTICLE = ("The city council met on Tuesday to discuss the new budget for public transport. "
            "Members argued about the cost of extending the tram line to the northern suburbs, "
            "which would serve about twelve thousand residents. ")


def measure_rate(spec: str, rounds: int = 2) -> dict[str, Any]:
    """Time a small fixed workload through ``spec``'s backend (no response cache) and fit
    seconds = calls·a + prompt tokens·b + completion tokens·c by non-negative least squares;
    stored for :meth:`Simulation.result`. The workload: long prompts without reuse, one
    article with many short questions (prefix reuse), and short generations."""

    judge = get_judge(spec, db=None)
    inner = judge.inner
    rows: list[list[float]] = []
    secs: list[float] = []

    def timed(kind: str, reqs: list[Any]) -> None:
        sim = Simulation(judge, None)
        sim.ask(kind, reqs)
        t0 = time.perf_counter()
        res = (inner.binary if kind == "binary" else inner.generate)(reqs)
        secs.append(time.perf_counter() - t0)
        completion = sum(r.tokens_out for r in res) if kind == "generate" else len(reqs)
        rows.append([len(reqs), sim.est.prompt_tokens, completion])

    system = "You are a careful evaluator. Answer Yes or No."
    inner.binary([BinaryRequest(system, ("warm up",), "Is this a test?")])  # loads the model
    for r in range(rounds):
        art = (_ARTICLE * 6) + f" (round {r})"
        long_reqs = [BinaryRequest(system, (f"Article {k} of round {r}:\n{art}\n\n",),
                                   "Is the article about transport?") for k in range(2)]
        timed("binary", long_reqs)
        qs = [f"Does the summary mention point {k} of the article about the tram?"
              for k in range(12)]
        timed("binary", [BinaryRequest(system, (f"Article:\n{art}\n\n", "Summary: trams.\n\n"),
                                       q) for q in qs])
        gen = GenerateRequest.chat(system, f"Article:\n{art}\n\nSummary: trams.\n\nList three "
                                   "facts from the article, one per line.", max_tokens=48,
                                   shared_parts=(f"Article:\n{art}\n\n",))
        timed("generate", [gen])
    coef, _ = nnls(np.array(rows, dtype=float), np.array(secs, dtype=float))
    rate = {"per_call": float(coef[0]), "per_prompt_token": float(coef[1]),
            "per_completion_token": float(coef[2]),
            "source": "by `checkeval bench rate`", "measured_at": now_iso(),
            "machine": f"{platform.machine()} · {os.cpu_count()} CPUs · {platform.node()}",
            "workloads": [{"calls": r[0], "prompt_tokens": r[1], "completion_tokens": r[2],
                           "seconds": round(s, 3)} for r, s in zip(rows, secs)]}
    save_rate(judge.spec, rate)
    return rate


def cost_line(estimate: Callable[..., Estimate], *args: Any, **kw: Any) -> tuple[str, list[str]]:
    """``(line, notes)`` for a page, before its button: ``estimate(*args, **kw)``'s text, or
    why there is none (the same message the button would show)."""
    try:
        est = estimate(*args, **kw)
    except ImportError as e:
        return f"Cost unknown: {e}", []
    except (ValueError, LookupError) as e:
        return f"Cost unknown: {e}", []
    return "Cost: " + est.text(), est.notes
