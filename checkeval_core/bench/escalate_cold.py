"""``checkeval bench escalate --cold``: what a cascade costs when the second judge's answers are
not in the cache, measured on the cascade run as it runs.

SummEval only (units are answers). The split is the one of ``bench escalate``: the first half
of the documents dev, the second half held out (``docs_per_half``: the first N documents of
each half only, all their summaries — a sample that keeps each document's summaries together,
as the embedded judge reuses a document's text across them). Each part runs in its own
database copied from the bench database (``sqlite3`` backup, read only) with an **empty request
cache**, kept in ``cold_dir`` beside its measurement (``PART.db``, ``PART.json``):

* ``dev`` — the first judge on the dev documents, only with ``calibrate``: A's confidence is
  fitted (Platt) on these answers (``dev_fit.json``); not a cost figure;
* ``a`` — the first judge alone on the held-out items (its CPU is the first part of the
  ensemble's and of every cascade's cost);
* ``b`` — the second judge alone on them (the ensemble = ``a`` + ``b``);
* ``answer`` / ``item`` — the cascade escalating **by answer** / **by item**
  (:mod:`checkeval_core.runs.escalation.by_item`) at a fixed margin, files named with it
  (``item-0.1.db``: cascades at other margins share the folder's other parts): A's answers
  come from part a's cache (imported; it must be complete), B's cache is empty, so every
  request B gets is executed. With ``calibrate`` the run carries A's dev calibration and the
  margin as its escalation state, as a resumed run does, so the held-out run escalates what the
  dev fit says without asking B about dev documents (B's own p(Yes) is then not calibrated:
  the run has no dev answer of B's).

A part's cost is the **process CPU time** (``time.process_time``: every thread of the
process, llama.cpp's included) and the wall time around ``execute_run``; for a cascade, the
part after the first judge's pass (the second judge, its model load, the scores). The requests
executed are counted per judge model as the cache rows the part added. A killed part resumes
on the next call (``execute_run`` asks only what is missing) and its measurement is the sum of
its sessions (an interrupted session is kept; one killed without notice keeps its figures up
to its last checkpoint, :data:`CHECKPOINT_S` seconds at most before the kill).

Quality (agreement per answer with the people's labels and per summary, sample-level Spearman
averaged over dimensions) is read on held-out documents with 95 % intervals over resampled
documents (none below the floor's minimum of groups); the other margins of the curve are
replayed from the caches of ``a`` and ``b`` (``warm.db``): quality only, their cost not measured
cold (``cpu_per_item`` None).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from checkeval_core.analysis.frames import run_frame
from checkeval_core.bench.escalate import _ensemble
from checkeval_core.bench.quality import default_db
from checkeval_core.judges.registry import parse_spec
from checkeval_core.people import answer_labels
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.escalation.by_item import check_escalate_by
from checkeval_core.runs.escalation.judge_calibration import confidence_calibration
from checkeval_core.runs.escalation.options import OPTIONS, escalation_params
from checkeval_core.runs.escalation.units import people_label
from checkeval_core.runs.jobs import get_run, prepare_resume
from checkeval_core.stats import escalation as E
from checkeval_core.stats.bootstrap import (
    mean_of_groups,
    mean_of_paired,
    nanmean_rows,
    paired_group_bootstraps,
)
from checkeval_core.stats.bootstrap import percentile_ci as floor_ci
from checkeval_core.stats.correlation import group_correlations
from checkeval_core.stats.values import ci_list, fmt, fmt_ci
from checkeval_core.store import NotFound, dumps, open_db, task_id
from checkeval_core.task_split import filter_frame, set_explicit_split

COLD_PARTS = ("dev", "a", "b", "answer", "item")
DEFAULT_COLD_MARGIN = 0.1
CURVE_MARGINS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)


def check_cold(benchmark: str, parts: list[str] | None, modes: list[str] | None,
               margins: tuple[float, ...] | None, judge: str, escalate_to: str
               ) -> tuple[list[str], list[str], float]:
    """The cold options checked before anything is copied or asked: ``(parts, modes,
    margin)``; a ValueError naming the option otherwise."""
    if benchmark != "summeval":
        raise ValueError(f"--cold: --benchmark summeval only (its units are answers; "
                         f"{benchmark} is not)")
    if parse_spec(judge).spec == parse_spec(escalate_to).spec:
        raise ValueError(f"--escalate-to {escalate_to}: the second judge must differ from "
                         "--judge")
    modes = list(dict.fromkeys(check_escalate_by(m) for m in (modes or ["answer", "item"])))
    parts = list(dict.fromkeys(parts or ["a", "b", *modes]))
    bad = [p for p in parts if p not in COLD_PARTS]
    if bad:
        raise ValueError(f"--only {bad[0]!r}: choose among {', '.join(COLD_PARTS)}")
    if margins and len(margins) > 1:
        raise ValueError("--cold: give one --margin (the cold cascades' margin; the other "
                         "margins of the curve come from the cache)")
    margin = float(margins[0]) if margins else DEFAULT_COLD_MARGIN
    if not math.isfinite(margin) or margin < 0:
        raise ValueError(f"--margin {margin}: give a confidence ≥ 0")
    return parts, modes, margin


# -- databases --------------------------------------------------------------------------------
def _copy(src: Path, dst: Path) -> Any:
    """``src`` backed up into ``dst`` (a consistent copy while another process writes it),
    its request cache emptied: nothing any judge asked before is served."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    s, d = sqlite3.connect(f"file:{src}?mode=ro", uri=True), sqlite3.connect(tmp)
    try:
        s.backup(d)
        d.execute("DELETE FROM llm_cache")
        d.commit()
    finally:
        s.close()
        d.close()
    os.replace(tmp, dst)
    return open_db(dst)


def _import_cache(db: Any, other: Path) -> None:
    db.execute("ATTACH DATABASE ? AS other", [str(other)])
    try:
        db.execute("INSERT OR IGNORE INTO llm_cache SELECT * FROM other.llm_cache")
        db.conn.commit()
    finally:
        db.execute("DETACH DATABASE other")


def _cache_counts(db: Any) -> dict[str, int]:
    return {str(m): int(n) for m, n in db.execute(
        "SELECT model, COUNT(*) FROM llm_cache GROUP BY model")}


def _split(db: Any, task: str) -> tuple[list[str], list[str]]:
    groups = [g for (g,) in db.execute("SELECT group_id FROM item WHERE task_id = ? GROUP BY "
                                       "group_id ORDER BY MIN(rowid)", [task_id(db, task)])]
    h = len(groups) // 2
    set_explicit_split(db, task, groups[h:])
    return groups[:h], groups[h:]


def _items_of(db: Any, task: str, groups: list[str]) -> list[str]:
    """The items of ``groups`` in import order."""
    marks = ",".join("?" * len(groups))
    return [str(i) for (i,) in db.execute(
        f"SELECT item_id FROM item WHERE task_id = ? AND group_id IN ({marks}) ORDER BY rowid",
        [task_id(db, task), *groups])]


def _cascade_params(b: str, margin: float, mode: str, cal: dict[str, Any] | None
                    ) -> dict[str, Any]:
    """A cascade run's options at a fixed ``margin``; with A's dev calibration ``cal``, carried
    as the run's escalation state (the module doc)."""
    params = escalation_params(b, margin=margin, calibrate_judges=cal is not None,
                               escalate_by=mode)
    if cal is not None:
        params["escalation"] = {"threshold": margin, "b_threshold": None, "fitted": False,
                                "confidence_calibration": cal}
    return params


def _config(cold: Path, sample: int | None, calibrate: bool) -> None:
    """The sample and options a cold folder was started with; another set is refused (its
    parts would not be measured on the same items). Cascades at other margins may share it:
    their files carry the margin (:func:`_file`)."""
    path, want = cold / "config.json", {"docs_per_half": sample, "calibrate": calibrate}
    if path.exists():
        got = json.loads(path.read_text())
        if got != want:
            raise ValueError(f"--cold-dir {cold}: its parts were started with {got}; give the "
                             "same --docs-per-half / --calibrate-judges, or another --cold-dir")
    else:
        path.write_text(json.dumps(want))


# -- one measured part ------------------------------------------------------------------------
def _state(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


CHECKPOINT_S = 30.0  # a session's figures so far are saved this often while it runs


def _measure(db: Any, path: Path, rid: int, first_pass: bool, progress: bool,
             name: str, save: Any) -> None:
    """Execute (or resume) run ``rid`` and ``save`` its measurement: process CPU and wall
    seconds, and with ``first_pass`` those spent after the first judge's pass (an escalating
    run's second judge); the cache rows added per model (= requests executed).

    The session's figures so far are saved every :data:`CHECKPOINT_S` seconds (``status``
    "checkpoint") and replaced at its end (a Python exception too: "interrupted"), so a
    process killed without notice — ``kill -9``, or the machine stopping, which is how a long
    part ends a working session — keeps its session up to the last checkpoint: the CPU and
    the requests of at most that many seconds go uncounted, never the whole session."""
    prepare_resume(db, rid)
    before = _cache_counts(db)
    c0, t0 = time.process_time(), time.perf_counter()
    mark: dict[str, float] = {}

    def tick(done: int, total: int) -> None:
        if done >= total and "cpu" not in mark:
            mark.update(cpu=time.process_time(), wall=time.perf_counter())
        if progress and (done % 8 == 0 or done == total):
            print(f"[cold {name}] {done}/{total} items, {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr, flush=True)

    def figures(conn: Any, status: str) -> dict[str, Any]:
        c1, t1 = time.process_time(), time.perf_counter()
        after = _cache_counts(conn)
        part = {"cpu_s": round(c1 - c0, 2), "wall_s": round(t1 - t0, 2),
                "executed": {m: n - before.get(m, 0) for m, n in after.items()
                             if n != before.get(m, 0)},
                "status": status, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                            time.gmtime())}
        if first_pass:
            part["second_cpu_s"] = round(c1 - mark.get("cpu", c0), 2)
            part["second_wall_s"] = round(t1 - mark.get("wall", t0), 2)
        return part

    stop = threading.Event()

    def checkpoints() -> None:  # its own connection: sqlite's are per thread
        conn = open_db(path)
        try:
            while not stop.wait(CHECKPOINT_S):
                save(figures(conn, "checkpoint"))
        finally:
            conn.conn.close()

    saver = threading.Thread(target=checkpoints, name=f"cold-{name}-checkpoint", daemon=True)
    saver.start()
    status = "interrupted"
    try:
        status = execute_run(str(path), rid, progress=tick)["status"]
    finally:
        stop.set()
        saver.join()
        save(figures(db, status))


def _file(part: str, margin: float) -> str:
    """A part's file name in the cold folder: a cascade's carries its margin."""
    return f"{part}-{margin:g}" if part in ("answer", "item") else part


def _held_run(db: Any, task: str, judge: str, held_ids: list[str],
              params: dict[str, Any]) -> int:
    """A new run on the held-out items; a cascade's dev fit (``params["escalation"]``) is
    carried as the run's escalation state, as a resumed run reads it."""
    rid = create_run(db, task, judge, "rocketeval", item_ids=held_ids,
                     params={k: v for k, v in params.items() if k != "escalation"})
    if "escalation" in params:
        run = get_run(db, rid)
        run["params"]["escalation"] = params["escalation"]
        db.execute("UPDATE run SET params = ? WHERE id = ?", [dumps(run["params"]), rid])
    return rid


def _run_part(name: str, cold_dir: Path, bench: Path, task: str, judge: str,
              params: dict[str, Any], held_ids: list[str], progress: bool,
              prepare: Any = None, first_pass: bool = False) -> dict[str, Any]:
    """Part ``name``: its database made once (``prepare(db)`` after the copy), its run created
    once, executed / resumed and measured; the state (run id, sessions) in ``NAME.json``."""
    path, meta = cold_dir / f"{name}.db", cold_dir / f"{name}.json"
    st = _state(meta)
    if not st or not path.exists():
        db = _copy(bench, path)
        _split(db, task)
        if prepare is not None:
            prepare(db)
        rid = _held_run(db, task, judge, held_ids, params)
        st = {"part": name, "run": rid, "judge": judge, "n_items": len(held_ids),
              "threads": os.environ.get("CHECKEVAL_EMBEDDED_THREADS"), "sessions": []}
        meta.write_text(json.dumps(st, indent=1))
    db = open_db(path)
    if get_run(db, st["run"])["status"] != "completed":
        this = len(st["sessions"])  # this session's entry, replaced at each checkpoint

        def save(part: dict[str, Any]) -> None:
            st["sessions"][this:] = [part]
            tmp = meta.with_suffix(".json.tmp")  # a kill while writing keeps the last one
            tmp.write_text(json.dumps(st, indent=1))
            os.replace(tmp, meta)

        _measure(db, path, st["run"], first_pass, progress, name, save)
    return st


def _totals(st: dict[str, Any]) -> dict[str, Any]:
    s = st.get("sessions", [])
    out = {k: round(sum(x.get(k, 0.0) for x in s), 2) for k in
           ("cpu_s", "wall_s", "second_cpu_s", "second_wall_s")}
    ex: dict[str, int] = {}
    for x in s:
        for m, n in x.get("executed", {}).items():
            ex[m] = ex.get(m, 0) + n
    return {**out, "executed": ex, "sessions": len(s)}


def _dev_fit(cold: Path, b: str) -> dict[str, Any]:
    """A's confidence calibration (Platt) on A's answers of the dev documents, from part
    dev's run."""
    st = _state(cold / "dev.json")
    db = open_db(cold / "dev.db")
    run = get_run(db, st["run"])
    return confidence_calibration(db, {**run, "params": {"escalate_to": b}},
                                  fitted_threshold=False) | {"run": st["run"]}


# -- quality ----------------------------------------------------------------------------------
def answer_agreement(db: Any, rid: int, held: set[str], n_boot: int, seed: int
                     ) -> dict[str, Any]:
    """Share of the run's final Yes/No answers on held-out documents that agree with the
    people's label, with a 95 % interval over resampled documents (invalid answers count as
    disagreeing: they decide nothing)."""
    run = get_run(db, rid)
    by_q, by_dim, _ = answer_labels(db, task_id(db, run["task"]), run["item_ids"])
    ok, groups = [], []
    for pk, qid, unit, dim, verdict, g in db.execute(
            "SELECT a.item_id, a.question_id, a.unit, a.dimension, a.verdict, i.group_id FROM "
            "answer a JOIN item i ON i.id = a.item_id WHERE a.run_id = ? AND a.question_id != 0",
            [rid]):
        if str(g) not in held:
            continue
        label = people_label(by_q, by_dim, {"key": (int(pk), int(qid), str(unit)),
                                            "dimension": dim})
        if label is None:
            continue
        ok.append(float(verdict == label))
        groups.append(str(g))
    a = np.asarray(ok, float)
    vals = E.resample_groups(groups, lambda ix: float(a[ix].mean()) if len(ix) else math.nan,
                             n_boot, seed)
    return {"agreement": float(a.mean()) if len(a) else math.nan,
            "ci": E.percentile_ci(vals), "n": len(a), "n_groups": len(set(groups))}


def summary_agreement(db: Any, rid_ref: int, rid: int, n_boot: int, seed: int,
                      aggregation: str = "mean_p_yes") -> dict[str, Any]:
    """Sample-level Spearman with the experts on held-out documents (mean over dimensions) of
    run ``rid``'s ``aggregation`` scores, its 95 % interval over resampled documents, and Δ
    against run ``rid_ref`` on the same resamples (paired; ``rid_ref == rid``: Δ = 0)."""
    fb, meta = run_frame(db, rid, aggregation)
    fa = fb if rid_ref == rid else run_frame(db, rid_ref, aggregation)[0]
    task = get_run(db, rid)["task"]
    df = fa.rename(columns={"metric": "score_a"}).merge(
        fb[["item_pk", "dimension", "metric"]].rename(columns={"metric": "score_b"}),
        on=["item_pk", "dimension"], how="inner")
    df = filter_frame(db, task, df, "heldout").dropna(subset=["human", "score_a", "score_b"])
    df = df.assign(group=df["group"].astype(str))
    groups = sorted(df["group"].unique().tolist())
    pairs, pa, pb = [], [], []
    for _, part in df.groupby("dimension", sort=True):
        both = group_correlations(part, groups, ["score_a", "score_b"], "spearman")
        pa.append(float(nanmean_rows(both["score_a"][None, :], 1)[0]))
        pb.append(float(nanmean_rows(both["score_b"][None, :], 1)[0]))
        pairs.append((mean_of_groups(both["score_a"]), mean_of_groups(both["score_b"])))
    if not pairs:
        return {"rho": math.nan, "ci": None, "rho_ref": math.nan, "delta": math.nan,
                "delta_ci": None, "n_items": 0, "n_groups": 0,
                "reason": "no held-out summary with an expert score"}
    boot = mean_of_paired(paired_group_bootstraps(len(groups), pairs, n_boot, seed))
    ref, val = float(np.nanmean(pa)), float(np.nanmean(pb))
    ok = ~np.isnan(boot.a) & ~np.isnan(boot.b)
    return {"rho": val, "ci": floor_ci(boot.b[~np.isnan(boot.b)]) if boot.reason is None
            else None, "rho_ref": ref, "delta": val - ref,
            "delta_ci": floor_ci((boot.b - boot.a)[ok]) if boot.reason is None else None,
            "n_items": int(df["item_pk"].nunique()), "n_groups": len(groups),
            "reason": boot.reason}


# -- the command ------------------------------------------------------------------------------
def bench_escalate_cold(data: str | Path | None, judge: str, escalate_to: str, docs: int,
                        parts: list[str], modes: list[str], margin: float,
                        db_file: str | Path | None = None, cold_dir: str | Path | None = None,
                        n_boot: int = 200, seed: int = 0, progress: bool = False,
                        curve_margins: tuple[float, ...] = CURVE_MARGINS,
                        calibrate: bool = False, docs_per_half: int | None = None
                        ) -> dict[str, Any]:
    """Run the cold ``parts`` not yet complete (module doc), then report every part that is:
    per row the held-out agreement per answer and per summary [95 % CI], the share kept by A,
    the second judge's requests and items, CPU per held-out item and its share of the
    ensemble's (A + B alone). Options are checked by :func:`check_cold` first.
    ``docs_per_half``: the first N documents of each half only, with all their summaries (a
    sample when the machine has no time for all; the split stays the halves of ``docs``);
    ``calibrate``: A's confidence calibrated (Platt) on A's answers of the dev documents,
    asked by part ``dev`` (A alone on the dev documents, cold too but not a cost figure)."""
    a, b = parse_spec(judge).spec, parse_spec(escalate_to).spec
    bench = Path(db_file) if db_file else default_db()
    if not bench.exists():
        raise ValueError(f"--db {bench}: no bench database; run `bench escalate --first-only` "
                         "first")
    task = f"summeval-{docs}-seed"
    src = open_db(bench)
    try:
        task_id(src, task)
    except NotFound:
        raise ValueError(f"--docs {docs}: the bench database has no task {task}; run "
                         f"`bench escalate --first-only --docs {docs}` first") from None
    src.conn.close()
    cold = Path(cold_dir) if cold_dir else bench.with_name(bench.stem + "-cold")
    cold.mkdir(parents=True, exist_ok=True)
    _config(cold, docs_per_half, calibrate)
    probe_path = cold / f"split-{os.getpid()}.db"  # parts may run in parallel processes
    probe = _copy(bench, probe_path)
    dev, held = _split(probe, task)
    if docs_per_half is not None:
        dev, held = dev[:docs_per_half], held[:docs_per_half]
    held_ids = _items_of(probe, task, held)
    dev_ids = _items_of(probe, task, dev)
    probe.conn.close()
    probe_path.unlink(missing_ok=True)
    cal = None
    if calibrate and any(p in ("answer", "item") for p in parts) and "dev" not in parts:
        parts = ["dev", *parts]  # the fit needs A's dev answers first
    for p in parts:
        if p in ("dev", "a", "b"):
            _run_part(p, cold, bench, task, b if p == "b" else a, {},
                      dev_ids if p == "dev" else held_ids, progress)
            continue
        for need in ("a", "dev") if calibrate else ("a",):
            if not _done(cold, need):
                raise ValueError(f"--only {p}: part {need} (the first judge alone, cold) is "
                                 "not complete yet; the cascade reads A's answers from part "
                                 "a's cache" + (" and its calibration from part dev's run"
                                                if calibrate else ""))
        cal = _calibration(cold, b) if calibrate else None
        params = _cascade_params(b, margin, p, cal)
        _run_part(_file(p, margin), cold, bench, task, a, params, held_ids, progress,
                  prepare=lambda db: _import_cache(db, cold / "a.db"), first_pass=True)
    if calibrate and cal is None and _done(cold, "dev"):
        cal = _calibration(cold, b)
    return _report(cold, bench, task, a, b, modes, margin, cal, set(held), held_ids, len(dev),
                   n_boot, seed, curve_margins)


def _calibration(cold: Path, b: str) -> dict[str, Any]:
    path = cold / "dev_fit.json"
    if not path.exists():
        path.write_text(json.dumps(_dev_fit(cold, b), indent=1))
    return json.loads(path.read_text())


def _done(cold: Path, part: str) -> bool:
    st = _state(cold / f"{part}.json")
    if not st or not (cold / f"{part}.db").exists():
        return False
    return get_run(open_db(cold / f"{part}.db"), st["run"])["status"] == "completed"


def _report(cold: Path, bench: Path, task: str, a: str, b: str, modes: list[str],
            margin: float, cal: dict[str, Any] | None, held: set[str], held_ids: list[str],
            n_dev: int, n_boot: int, seed: int, curve_margins: tuple[float, ...]) -> dict[str, Any]:
    n = len(held_ids)
    out: dict[str, Any] = {"benchmark": "summeval", "task": task, "judge_a": a, "judge_b": b,
                           "dev_groups": n_dev, "heldout_groups": len(held), "n_items": n,
                           "margin": margin, "n_boot": n_boot,
                           "docs_per_half": _state(cold / "config.json").get("docs_per_half"),
                           "confidence_calibration": (cal or {}).get("fit"), "rows": [],
                           "curve": [], "missing": [], "parts": {}}
    for p in COLD_PARTS:
        if p in ("a", "b") or p in modes:
            f = _file(p, margin)
            if _done(cold, f):
                out["parts"][p] = {**_state(cold / f"{f}.json"), **_totals(
                    _state(cold / f"{f}.json"))}
            else:
                out["missing"].append(f)
    cpu = {p: v["cpu_s"] / v["n_items"] for p, v in out["parts"].items() if p != "dev"}
    ens = cpu["a"] + cpu["b"] if {"a", "b"} <= set(cpu) else None
    out["cpu_per_item"] = {"a": cpu.get("a"), "b": cpu.get("b"), "ensemble": ens}
    ref_db = cold / "a.db"
    if "a" not in out["parts"]:
        return out
    rid_a = out["parts"]["a"]["run"]
    dba = open_db(ref_db)

    def row(name: str, db: Any, rid: int, cpu_s: float | None, extra: dict[str, Any]
            ) -> dict[str, Any]:
        ans = answer_agreement(db, rid, held, n_boot, seed)
        summ = summary_agreement(db, rid_a, rid, n_boot, seed)
        return {"name": name, "run": rid, "answer_agreement": ans["agreement"],
                "answer_ci": ci_list(ans["ci"]), "n_answers": ans["n"],
                "n_groups": ans["n_groups"], "rho": summ["rho"], "rho_ci": ci_list(summ["ci"]),
                "rho_delta_vs_a": summ.get("delta") if rid != rid_a else None,
                "rho_delta_ci": ci_list(summ.get("delta_ci")) if rid != rid_a else None,
                "n_summaries": summ["n_items"], "cpu_per_item": cpu_s,
                "cpu_share": None if cpu_s is None or ens is None else cpu_s / ens, **extra}

    out["rows"].append(row(f"A alone: {a}", dba, rid_a, cpu.get("a"), {"coverage": 1.0}))
    warm = None
    if "b" in out["parts"]:
        warm = _warm_db(cold, bench, task)
        rid_aw = _cached_run(warm, task, a, {}, held_ids)
        rid_bw = _cached_run(warm, task, b, {}, held_ids)
        r = row(f"B alone: {b}", warm, rid_bw, cpu.get("b"), {"coverage": 0.0})
        r["rho_delta_vs_a"], r["rho_delta_ci"] = _delta_vs(warm, rid_aw, rid_bw, n_boot, seed)
        out["rows"].append(r)
        e = _ensemble(warm, rid_aw, rid_bw, held)
        out["rows"].append({"name": "ensemble A + B (mean p(Yes) per answer)",
                            "answer_agreement": e["agreement"], "answer_ci": ci_list(e["ci"]),
                            "n_answers": e["n"], "n_groups": e["n_groups"], "rho": None,
                            "cpu_per_item": ens, "cpu_share": 1.0 if ens else None})
    for p in modes:
        if p not in out["parts"]:
            continue
        dbp = open_db(cold / f"{_file(p, margin)}.db")
        st = out["parts"][p]
        esc = get_run(dbp, st["run"])["params"]["escalation"]
        b_cpu = st["second_cpu_s"] / n
        a_models = set(out["parts"]["a"]["executed"])  # part a executed A's requests only
        extra = {"coverage": esc.get("coverage"), "n_escalated": esc.get("n_escalated"),
                 "n_items_escalated": esc.get("n_items_escalated"),
                 "b_executed": sum(v for m, v in st["executed"].items() if m not in a_models),
                 "a_executed": sum(v for m, v in st["executed"].items() if m in a_models),
                 "b_cpu_per_item": b_cpu, "escalate_by": p}
        rid_ap = _cached_run(dbp, task, a, {}, held_ids)
        r = row(f"cascade by {p}, margin {margin:g} (cold)", dbp, st["run"],
                None if cpu.get("a") is None else cpu["a"] + b_cpu, extra)
        r["rho_delta_vs_a"], r["rho_delta_ci"] = _delta_vs(dbp, rid_ap, st["run"], n_boot, seed)
        out["rows"].append(r)
    if warm is not None:
        for p in modes:
            for mg in curve_margins:
                params = _cascade_params(b, mg, p, cal)
                before = _cache_counts(warm)
                rid = _cached_run(warm, task, a, params, held_ids)
                esc = get_run(warm, rid)["params"]["escalation"]
                ans = answer_agreement(warm, rid, held, n_boot, seed)
                summ = summary_agreement(warm, rid_aw, rid, n_boot, seed)
                out["curve"].append({
                    "escalate_by": p, "margin": mg, "run": rid, "coverage": esc.get("coverage"),
                    "n_escalated": esc.get("n_escalated"),
                    "n_items_escalated": esc.get("n_items_escalated"),
                    "answer_agreement": ans["agreement"], "answer_ci": ci_list(ans["ci"]),
                    "rho": summ["rho"], "rho_ci": ci_list(summ["ci"]),
                    "rho_delta_vs_a": summ["delta"], "rho_delta_ci": ci_list(summ["delta_ci"]),
                    "new_requests": sum(_cache_counts(warm).values()) - sum(before.values()),
                    "cpu_per_item": None})
    out["target"] = _target(out)
    return out


def _delta_vs(db: Any, rid_a: int, rid: int, n_boot: int, seed: int
              ) -> tuple[float | None, list[float] | None]:
    s = summary_agreement(db, rid_a, rid, n_boot, seed)
    return s["delta"], ci_list(s["delta_ci"])


def _warm_db(cold: Path, bench: Path, task: str) -> Any:
    """``warm.db``: the bench database with the caches of parts a and b (made once)."""
    path = cold / "warm.db"
    if path.exists():
        return open_db(path)
    db = _copy(bench, cold / "warm.tmp.db")
    _split(db, task)
    for p in ("a", "b"):
        _import_cache(db, cold / f"{p}.db")
    db.conn.close()
    os.replace(cold / "warm.tmp.db", path)
    return open_db(path)


def _cached_run(db: Any, task: str, judge: str, params: dict[str, Any],
                held_ids: list[str]) -> int:
    """The completed run of ``judge`` with ``params`` on the held-out items in ``db`` (made
    and executed from the cache the first time)."""
    pks = [int(pk) for (pk,) in db.execute(
        f"SELECT id FROM item WHERE task_id = ? AND item_id IN ({','.join('?' * len(held_ids))})"
        " ORDER BY rowid", [task_id(db, task), *held_ids])]
    want = {k: v for k, v in params.items() if k != "escalation"}
    for rid, spec, p, ids, status in db.execute(
            "SELECT id, judge_spec, params, item_ids, status FROM run ORDER BY id"):
        got = json.loads(p or "{}")
        if spec == judge and sorted(json.loads(ids)) == sorted(pks) and status == \
                "completed" and all(got.get(k) == want.get(k) for k in OPTIONS):
            return int(rid)
    rid = _held_run(db, task, judge, held_ids, params)
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    execute_run(path, rid)
    return rid


def _target(out: dict[str, Any]) -> dict[str, Any]:
    """The issue's target per cold cascade: inside the better single judge's interval (per
    answer and per summary) at ≤ 50 % of the ensemble's CPU."""
    by = {r["name"].split(":")[0]: r for r in out["rows"]}
    sa, sb = by.get("A alone"), by.get("B alone")
    res: dict[str, Any] = {}
    if not (sa and sb):
        return {"reason": "needs both judges alone (parts a and b)"}
    for r in out["rows"]:
        if not r["name"].startswith("cascade"):
            continue
        one = {}
        for key, ci in (("answer_agreement", "answer_ci"), ("rho", "rho_ci")):
            best = max((sa, sb), key=lambda x: x[key])
            if best[ci] is None or r[key] is None:  # below the floor's minimum of groups
                one[key] = {"better_judge": best["name"], "inside_its_interval": None,
                            "reason": "no interval (too few held-out documents)"}
                continue
            one[key] = {"better_judge": best["name"],
                        "inside_its_interval": bool(best[ci][0] <= r[key] <= best[ci][1])}
        one["cpu_share_at_most_half"] = r["cpu_share"] is not None and r["cpu_share"] <= 0.5
        inside = [one[k]["inside_its_interval"] for k in ("answer_agreement", "rho")]
        # met only with both intervals; a cost above half fails it whatever the intervals
        one["met"] = False if not one["cpu_share_at_most_half"] or False in inside else \
            (True if all(inside) else None)
        res[r["name"]] = one
    return res


_n = fmt  # a number with d decimals, "—" when undefined


def _ci(ci: Any) -> str:
    return " " + fmt_ci(ci) if ci else ""


def format_cold(res: dict[str, Any]) -> str:
    """The cold rows and the curve as Markdown tables."""
    lines = [f"summeval · A = {res['judge_a']}, B = {res['judge_b']} · dev {res['dev_groups']}"
             f" / held-out {res['heldout_groups']} documents ({res['n_items']} summaries) · "
             f"{res['n_boot']} document resamples · cold cascades at margin {res['margin']:g}",
             "", "| row | per answer [95 % CI] | per summary ρ [95 % CI] (Δ vs A) | kept by A |"
             " B requests executed · items | CPU s per item (share of ensemble) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in res["rows"]:
        d = (f" ({r['rho_delta_vs_a']:+.3f}{_ci(r['rho_delta_ci'])})"
             if r.get("rho_delta_vs_a") is not None else "")
        b_req = (f"{r.get('b_executed')} · {r.get('n_items_escalated')}"
                 if r.get("escalate_by") else "")
        lines.append(f"| {r['name']} | {_n(r['answer_agreement'])}{_ci(r.get('answer_ci'))} | "
                     f"{_n(r.get('rho'))}{_ci(r.get('rho_ci'))}{d} | "
                     f"{_n(r.get('coverage'), 2)} | {b_req} | {_n(r.get('cpu_per_item'), 2)} "
                     f"({_n(r.get('cpu_share'), 2)}) |")
    if res.get("curve"):
        lines += ["", "curve from the cache (quality only; cost not measured cold):", "",
                  "| by | margin | kept by A | B answers · items | per answer [95 % CI] | "
                  "per summary ρ [95 % CI] |", "| --- | --- | --- | --- | --- | --- |"]
        for c in res["curve"]:
            lines.append(f"| {c['escalate_by']} | {c['margin']:g} | {_n(c['coverage'], 2)} | "
                         f"{c['n_escalated']} · {c['n_items_escalated']} | "
                         f"{_n(c['answer_agreement'])}{_ci(c['answer_ci'])} | "
                         f"{_n(c['rho'])}{_ci(c['rho_ci'])} |")
    if res.get("missing"):
        lines.append(f"\nnot measured yet: {', '.join(res['missing'])}")
    return "\n".join(lines)


__all__ = ["COLD_PARTS", "bench_escalate_cold", "check_cold", "format_cold",
           "answer_agreement", "summary_agreement"]
