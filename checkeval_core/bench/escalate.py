"""``checkeval bench escalate``: the cascade of a small judge and a stronger one on a benchmark
with a held-out split fixed in advance.

* ``mtbench_pairs`` — the first ``queries`` MT-Bench human pairs, RocketEval's six fixed
  questions; units are pairs (the score margin is the confidence, the human vote the label);
  dev = the pairs of the first half of the questions (file order), held out = the second half.
* ``summeval`` — the first ``docs`` documents × 16 systems, the authors' seed questions; units
  are answers (the expert score above / below the document's median on the question's
  dimension is the label); dev = the first half of the documents, held out = the second.

Both judges' answers come from ``bench quality`` / ``bench rankings`` runs in the same bench
database (reused, resumed and served from the request cache); the cascade runs (the fitted
threshold and two fixed margins) are then executed from that cache, so they cost no judge time
here. Judge time is read from each request's recorded latency (the seconds the judge took for
the answers a cascade uses); the CPU time of the two full runs is reported beside it.
Every agreement is on held-out units with a 95 % interval over resampled held-out groups.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from checkeval_core.analysis.escalation_view import escalation_curve
from checkeval_core.bench import quality as Q
from checkeval_core.bench.quality import _find_run
from checkeval_core.judges.registry import parse_spec
from checkeval_core.people import answer_labels, people_pair_labels
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.escalation.options import escalation_params
from checkeval_core.runs.escalation.units import people_label, run_units
from checkeval_core.runs.jobs import get_run
from checkeval_core.stats import escalation as E
from checkeval_core.stats.values import fmt, fmt_ci
from checkeval_core.store import db_path, open_db, task_id
from checkeval_core.task_split import members, set_explicit_split

ESCALATE_BENCHMARKS = ("mtbench_pairs", "summeval")
DEFAULT_MARGINS = {"mtbench_pairs": (0.05, 0.2), "summeval": (0.1, 0.3)}


def _halves_split(db: Any, benchmark: str, task: str) -> tuple[list[str], list[str]]:
    tid = task_id(db, task)
    table = "preference" if benchmark == "mtbench_pairs" else "item"
    groups = [g for (g,) in db.execute(f"SELECT group_id FROM {table} WHERE task_id = ? GROUP "
                                       "BY group_id ORDER BY MIN(rowid)", [tid])]
    h = len(groups) // 2
    set_explicit_split(db, task, groups[h:])
    return groups[:h], groups[h:]


def _cascade_run(db: Any, task: str, judge: str, params: dict[str, Any],
                 progress: bool) -> int:
    """The completed cascade run with these options (reused), else a new one executed."""
    rid = _find_run(db, task, judge, "rocketeval", params)
    if rid is None or get_run(db, rid)["status"] != "completed":
        rid = rid or create_run(db, task, judge, "rocketeval", params=params)
        execute_run(db_path(db), rid)
    return rid


def _item_scores(db: Any, run_id: int) -> dict[int, float]:
    return {int(pk): float(v) for pk, v in db.execute(
        "SELECT item_id, AVG(COALESCE(p_yes, verdict = 'yes')) FROM answer WHERE run_id = ? "
        "AND verdict != 'invalid' GROUP BY item_id", [run_id])}


def _ensemble(db: Any, run_a: int, run_b: int, held: set[str]) -> dict[str, Any]:
    """Both judges on every question, their p(Yes) averaged: agreement on held-out units."""
    ua = run_units(db, get_run(db, run_a))
    agree, groups = [], []
    if ua.kind == "pair":
        sa, sb = _item_scores(db, run_a), _item_scores(db, run_b)
        labels = people_pair_labels(db, task_id(db, get_run(db, run_a)["task"]),
                                    get_run(db, run_a)["item_ids"])
        for (a, b), (winner, g) in labels.items():
            if g not in held or any(k not in s for s in (sa, sb) for k in (a, b)):
                continue
            gap = (sa[a] + sb[a]) / 2 - (sa[b] + sb[b]) / 2
            agree.append(float(gap != 0 and (gap > 0) == (winner == "a")))
            groups.append(g)
    else:
        pb = {(r[0], r[1], r[2]): r[3] for r in db.execute(
            "SELECT item_id, question_id, unit, p_yes FROM answer WHERE run_id = ?", [run_b])}
        pa = {(r[0], r[1], r[2]): (r[3], r[4]) for r in db.execute(
            "SELECT item_id, question_id, unit, p_yes, dimension FROM answer WHERE run_id = ?",
            [run_a])}
        by_q, by_dim, _ = answer_labels(db, task_id(db, get_run(db, run_a)["task"]),
                                        get_run(db, run_a)["item_ids"])
        for k, g, ok_a in zip(ua.keys, ua.groups, ua.agree_a):
            if g not in held or math.isnan(ok_a) or pa[k][0] is None or pb.get(k) is None:
                continue
            label = people_label(by_q, by_dim, {"key": k, "dimension": pa[k][1]})
            v = "yes" if (pa[k][0] + pb[k]) / 2 >= 0.5 else "no"
            agree.append(float(v == label))
            groups.append(g)
    a = np.asarray(agree, float)
    ci = E.percentile_ci(E.resample_groups(groups, lambda ix: float(a[ix].mean())
                                           if len(ix) else math.nan))
    return {"agreement": float(a.mean()) if len(a) else math.nan, "ci": ci, "n": len(a),
            "n_groups": len(set(groups))}


def _judge_seconds(db: Any, run_id: int) -> float:
    return float(db.execute("SELECT COALESCE(SUM(latency_ms), 0) FROM answer WHERE run_id = ?",
                            [run_id]).fetchone()[0]) / 1000


def _share_at_target(db: Any, rid: int, target: float, n_boot: int, seed: int) -> float:
    """Share of group resamples of the held-out units in which the cascade's agreement on the
    decided units is at or above ``target``."""
    run = get_run(db, rid)
    esc = run["params"]["escalation"]
    u = run_units(db, run)
    m = members(db, run["task"])[0]
    arr = u.arrays()
    mask = ~np.isnan(arr["agree_a"]) & np.array([m.get(g) == "heldout" for g in u.groups])
    t = math.inf if esc.get("threshold") is None else float(esc["threshold"])
    ca, aa, cb, ab = (arr[k][mask] for k in ("conf_a", "agree_a", "conf_b", "agree_b"))
    bt = esc.get("b_threshold")
    vals = E.resample_groups([g for g, k in zip(u.groups, mask) if k], lambda ix: E.cascade_outcome(
        ca[ix], aa[ix], t, cb[ix], ab[ix], bt)["agreement"], n_boot, seed)
    return float(np.mean(vals >= target)) if len(vals) else math.nan


def bench_escalate(benchmark: str, data: str | Path | None = None, judge: str = "embedded",
                   escalate_to: str = "embedded:quality", queries: int = 50, docs: int = 32,
                   target: float = 0.8, delta: float = E.DEFAULT_DELTA,
                   margins: tuple[float, ...] | None = None, db_file: str | Path | None = None,
                   n_boot: int = 200, seed: int = 0, progress: bool = False,
                   first_only: bool = False, estimate: bool = False) -> dict[str, Any]:
    """Both judges alone, their ensemble, and the cascade at the fitted threshold (with and
    without abstention) and at ``margins`` — every figure on held-out units (module doc).
    ``first_only``: run the first judge only and report what needs no second judge — its
    threshold fitted on dev, and on held-out the share it keeps and its agreement there (the
    guaranteed part), at the fitted threshold and at ``margins``. ``estimate``: only what the
    judges' runs still need, asked of none; the cascade rows add no call (each asks A's and
    B's requests again, all in the cache by then)."""
    if benchmark not in ESCALATE_BENCHMARKS:
        raise ValueError(f"--benchmark {benchmark!r}: use one of {', '.join(ESCALATE_BENCHMARKS)}")
    if parse_spec(judge).spec == parse_spec(escalate_to).spec:
        raise ValueError(f"--escalate-to {escalate_to}: the second judge must differ from "
                         "--judge")
    E.check_target(target)
    E.check_delta(delta)
    margins = tuple(margins if margins is not None else DEFAULT_MARGINS[benchmark])
    for mg in margins:
        if not math.isfinite(mg) or mg < 0:
            raise ValueError(f"--margin {mg}: give a confidence ≥ 0")
    if benchmark == "mtbench_pairs":
        if queries < 4:
            raise ValueError(f"--queries {queries}: give ≥ 4 pairs")
        judges = [judge] if first_only else [judge, escalate_to]
        res = Q.bench_rankings("mtbench_pairs", data, judges, queries=queries,
                               checklist="fixed", db_file=db_file, progress=progress,
                               estimate=estimate)
    else:
        if docs < 4:
            raise ValueError(f"--docs {docs}: give ≥ 4 documents (≥ 2 in each half)")
        judges = [judge] if first_only else [judge, escalate_to]
        res = Q.bench_quality("summeval", data, judges, "rocketeval", docs=docs,
                              db_file=db_file, progress=progress, estimate=estimate)
    if estimate:
        res["notes"] = [*res["notes"], "the cascade rows ask A's and B's requests again: all "
                        "in the cache after the two judges' runs, no further call"]
        return res
    db = open_db(res["db"])
    task = res["task"]
    dev, held = _halves_split(db, benchmark, task)
    if first_only:
        return _first_only(db, res, benchmark, dev, held, target, delta, margins, n_boot, seed)
    run_a, run_b = (int(r["run"]) for r in res["runs"][:2])
    a, b = res["runs"][0]["judge"], res["runs"][1]["judge"]
    out: dict[str, Any] = {"benchmark": benchmark, "task": task, "db": res["db"],
                           "judge_a": a, "judge_b": b, "dev_groups": len(dev),
                           "heldout_groups": len(held), "target": target, "delta": delta,
                           "n_boot": n_boot, "rows": [],
                           "runs": {"a": run_a, "b": run_b},
                           "cpu_s": {"a": res["runs"][0].get("cpu_s"),
                                     "b": res["runs"][1].get("cpu_s")},
                           "run_wall_s": {"a": res["runs"][0].get("run_wall_s"),
                                          "b": res["runs"][1].get("run_wall_s")}}
    sec_a, sec_b = _judge_seconds(db, run_a), _judge_seconds(db, run_b)
    variants = [("cascade, fitted threshold", escalation_params(b, target_agreement=target,
                                                                delta=delta)),
                ("cascade, fitted, with abstention", escalation_params(
                    b, target_agreement=target, delta=delta, abstain=True))]
    variants += [(f"cascade, margin {mg:g}", escalation_params(b, margin=mg)) for mg in margins]
    first = None
    for name, params in variants:
        rid = _cascade_run(db, task, a, params, progress)
        view = escalation_curve(db, rid, "heldout", n_boot=n_boot, seed=seed)
        esc = get_run(db, rid)["params"]["escalation"]
        p = view["run_point"] or {}
        t = esc.get("threshold")
        b_sec = float(db.execute("SELECT COALESCE(SUM(latency_ms), 0) FROM answer WHERE "
                                 "run_id = ? AND judge = ?", [rid, b]).fetchone()[0]) / 1000
        row = {"name": name, "run": rid, "threshold": t, "coverage_heldout": p.get("coverage"),
               "agreement": p.get("agreement"), "ci": p.get("ci"),
               "decided": esc.get("heldout", {}).get("decided"),
               "agreement_decided": esc.get("heldout", {}).get("agreement"),
               "n_units": view["n_units"], "n_groups": view["n_groups"],
               "judge_s": sec_a + b_sec, "fit": esc.get("fit")}
        if "abstention" in name:
            row["share_resamples_at_target"] = _share_at_target(db, rid, target, n_boot, seed)
        out["rows"].append(row)
        first = first or view
    out["unit"], out["label_source"] = first["unit"], first["label_source"]
    for key, name, sec in (("a_alone", f"A alone: {a}", sec_a), ("b_alone", f"B alone: {b}",
                                                                   sec_b)):
        p = first[key] or {}
        out["rows"].insert(len(out["rows"]) if key == "b_alone" else 0, {
            "name": name, "coverage_heldout": p.get("coverage"), "agreement": p.get("agreement"),
            "ci": p.get("ci"), "n_units": first["n_units"], "n_groups": first["n_groups"],
            "judge_s": sec})
    ens = _ensemble(db, run_a, run_b, set(held))
    out["rows"].append({"name": "ensemble A + B (mean p(Yes))", "agreement": ens["agreement"],
                        "ci": ens["ci"], "n_units": ens["n"], "n_groups": ens["n_groups"],
                        "judge_s": sec_a + sec_b})
    out["curve"] = first["points"]
    return out


def _first_only(db: Any, res: dict[str, Any], benchmark: str, dev: list[str], held: list[str],
                target: float, delta: float, margins: tuple[float, ...], n_boot: int,
                seed: int) -> dict[str, Any]:
    """The rows that need the first judge only (see :func:`bench_escalate`)."""
    run_a = int(res["runs"][0]["run"])
    run = get_run(db, run_a)
    u = run_units(db, run)
    arr = u.arrays()
    lab = ~np.isnan(arr["agree_a"])
    is_dev = lab & np.isin(np.asarray(u.groups, dtype=object), dev)
    is_held = lab & np.isin(np.asarray(u.groups, dtype=object), held)
    fit = E.fit_threshold(arr["conf_a"][is_dev], arr["agree_a"][is_dev] == 1, target, delta)
    ca, aa = arr["conf_a"][is_held], arr["agree_a"][is_held]
    groups = [g for g, k in zip(u.groups, is_held) if k]
    rows = []
    for name, t in [("A alone", 0.0), ("A kept at the fitted threshold", fit.threshold)] + \
            [(f"A kept at margin {mg:g}", mg) for mg in margins]:
        keep = ca >= t
        vals = E.resample_groups(groups, lambda ix, t=t: float(aa[ix][ca[ix] >= t].mean())
                                 if (ca[ix] >= t).any() else math.nan, n_boot, seed)
        rows.append({"name": name, "threshold": None if math.isinf(t) else float(t),
                     "coverage_heldout": float(keep.mean()) if len(keep) else None,
                     "agreement": float(aa[keep].mean()) if keep.any() else math.nan,
                     "ci": E.percentile_ci(vals), "n_units": int(keep.sum()),
                     "n_groups": len({g for g, k in zip(groups, keep) if k}),
                     "judge_s": _judge_seconds(db, run_a)})
    return {"benchmark": benchmark, "task": res["task"], "db": res["db"],
            "judge_a": res["runs"][0]["judge"], "judge_b": None, "first_only": True,
            "unit": u.kind, "label_source": u.label_source, "dev_groups": len(dev),
            "heldout_groups": len(held), "target": target, "delta": delta, "n_boot": n_boot,
            "fit": fit.to_dict(), "rows": rows, "runs": {"a": run_a, "b": None},
            "cpu_s": {"a": res["runs"][0].get("cpu_s"), "b": None},
            "run_wall_s": {"a": res["runs"][0].get("run_wall_s"), "b": None}}


_num = fmt  # a number with d decimals, "—" when undefined


def format_escalate(res: dict[str, Any]) -> str:
    """The rows as a Markdown table (held-out agreement [95 % CI], coverage, judge time)."""
    lines = [f"{res['benchmark']} · A = {res['judge_a']}, B = {res['judge_b']} · units: "
             f"{res['unit']}s, labels: {res['label_source']} · dev {res['dev_groups']} / "
             f"held-out {res['heldout_groups']} groups · target {res['target']:g} at "
             f"1 − δ = {1 - res['delta']:g} · {res['n_boot']} group resamples", "",
             "| row | threshold | held-out agreement [95 % CI] | kept by A | decided "
             "(agreement on decided) | units · groups | judge s |", "| --- | --- | --- | --- | "
             "--- | --- | --- |"]
    for r in res["rows"]:
        ci = " " + fmt_ci(r["ci"]) if r.get("ci") else ""
        dec = (f"{_num(r.get('decided'), 2)} ({_num(r.get('agreement_decided'))})"
               if r.get("decided") is not None else "")
        if r.get("share_resamples_at_target") is not None:
            dec += f"; ≥ target in {_num(r['share_resamples_at_target'], 2)} of resamples"
        thr = "" if "threshold" not in r else ("none passed" if r["threshold"] is None
                                                else _num(r["threshold"]))
        lines.append(f"| {r['name']} | {thr} | {_num(r['agreement'])}{ci} | "
                     f"{_num(r.get('coverage_heldout'), 2)} | {dec} | {r['n_units']} · "
                     f"{r['n_groups']} | {_num(r['judge_s'], 0)} |")
    if res.get("first_only"):
        f = res["fit"]
        lines.append(f"\nfirst judge only (no second judge run): threshold "
                     f"{'none passed' if f['threshold'] is None else _num(f['threshold'])} "
                     f"on {f['n_dev']} labelled dev units, {f['n_kept']} kept. {f['reason']}")
    lines.append(f"\nfull runs: A run {res['runs']['a']} ({_num(res['run_wall_s']['a'], 0)} s "
                 f"wall), B run {res['runs']['b']} ({_num(res['run_wall_s']['b'], 0)} s wall)")
    return "\n".join(lines)
