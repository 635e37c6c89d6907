"""The analysis behind the Analysis page and ``checkeval analyze``: correlations with humans,
agreement across judges, stability, significance and per-question diagnostics.

Everything is computed from the stored answers and scores, so every number can be traced
down to Yes/No decisions (the page links each chart to the Traces page).
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils
from scipy import stats

from checkeval_core.analysis.agreement import cohen_kappa, fleiss_from_labels, krippendorff_alpha
from checkeval_core.analysis.correlation import (
    COEFFICIENTS,
    LEVELS,
    average_levels,
    corr,
    correlations,
    quality_split,
)
from checkeval_core.runs.registry import primary_aggregation
from checkeval_core.runs.score_math import answer_value
from checkeval_core.store import NotFound, rows, task_id


def _human(db: sqlite_utils.Database, tid: int) -> pd.DataFrame:
    return pd.DataFrame(rows(db, "SELECT hs.item_id AS item_pk, hs.dimension, hs.value AS human "
                                 "FROM human_score hs JOIN item i ON i.id = hs.item_id WHERE "
                                 "i.task_id = ? AND hs.annotator = ''", [tid]),
                        columns=["item_pk", "dimension", "human"])


def run_frame(db: sqlite_utils.Database, run_id: int,
              aggregation: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Scores of one run joined with human scores: item_pk, item_id, group, system,
    dimension, metric, human."""
    run = rows(db, "SELECT id, task_id, judge_spec, method, params FROM run WHERE id = ?",
               [run_id])
    if not run:
        raise NotFound(f"no run {run_id}")
    run = run[0]
    agg = aggregation or primary_aggregation(run)
    sc = pd.DataFrame(rows(db, "SELECT s.item_id AS item_pk, i.item_id, i.group_id AS "
                               '"group", i.system_id AS system, s.dimension, s.value AS metric '
                               "FROM score s JOIN item i ON i.id = s.item_id WHERE s.run_id = ? "
                               "AND s.aggregation = ?", [run_id, agg]),
                      columns=["item_pk", "item_id", "group", "system", "dimension", "metric"])
    df = sc.merge(_human(db, run["task_id"]), on=["item_pk", "dimension"], how="left")
    return df, {"run": run_id, "judge": run["judge_spec"], "method": run["method"],
                "aggregation": agg, "task_id": run["task_id"]}


def metric_frame(db: sqlite_utils.Database, task: str, name: str) -> pd.DataFrame:
    tid = task_id(db, task)
    sc = pd.DataFrame(rows(db, "SELECT e.item_id AS item_pk, i.item_id, i.group_id AS "
                               '"group", i.system_id AS system, e.dimension, e.value AS metric '
                               "FROM external_score e JOIN external_metric m ON m.id = "
                               "e.metric_id JOIN item i ON i.id = e.item_id WHERE m.task_id = ? "
                               "AND m.name = ?", [tid, name]),
                      columns=["item_pk", "item_id", "group", "system", "dimension", "metric"])
    if sc.empty:
        raise NotFound(f"task {task!r} has no metric {name!r}")
    return sc.merge(_human(db, tid), on=["item_pk", "dimension"], how="left")


def correlation_report(df: pd.DataFrame, n_boot: int = 200, seed: int = 0) -> dict[str, Any]:
    """``{"dimensions": {dim: {level: {...}}}, "average": {level: {...}}}``.

    Next to every NaN value sits its explanation: each level entry carries ``reasons``
    (``{coef: why the value is undefined}``) and ``ci_reasons`` (``{coef: why there is no
    interval}``), each quality-split subset a ``reason`` — see :func:`explain_level`."""
    dims: dict[str, Any] = {}
    for dim, part in df.groupby("dimension", sort=True):
        if part["human"].notna().sum() == 0:
            continue
        dims[dim] = correlations(part, n_boot=n_boot, seed=seed)
        for level in LEVELS:
            dims[dim][level].update(explain_level(part, level, dims[dim][level], n_boot))
        dims[dim]["quality_split"] = quality_split(part)
        for sub in dims[dim]["quality_split"].values():
            sub["reason"] = None if not _isnan(sub["spearman"]) else (
                f"needs ≥ 2 items (n={sub['n']})" if sub["n"] < 2
                else f"scores constant in this subset (n={sub['n']})")
    average = average_levels(dims)
    for level, entry in average.items():
        entry["reasons"] = {c: (f"no dimension has a {c} value at {LEVEL_NAMES[level]}"
                                if _isnan(entry[c]) else None) for c in COEFFICIENTS}
    return {"dimensions": dims, "average": average}


# -- why a statistic is undefined (the pages show these next to the blank) ----------------------
LEVEL_NAMES = {"sample_level": "sample level", "dataset_level": "dataset level",
               "system_level": "system level"}
#: What ``n`` counts at each level.
LEVEL_UNITS = {"sample_level": "documents", "dataset_level": "items",
               "system_level": "systems"}


def _isnan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _constant_reason(metric: pd.Series, human: pd.Series, where: str) -> str | None:
    if metric.nunique() <= 1:
        return (f"the judge gave every {where} the same score ({metric.iloc[0]:g}) — try "
                "another aggregation (e.g. mean_p_yes) or judge")
    if human.nunique() <= 1:
        return f"the human scores are all equal ({human.iloc[0]:g}) on every {where}"
    return None


def explain_level(part: pd.DataFrame, level: str, entry: dict[str, Any],
                  n_boot: int) -> dict[str, dict[str, str | None]]:
    """``{"reasons": {coef: str | None}, "ci_reasons": {coef: str | None}}`` for one
    dimension's level entry (``None`` where the value / interval exists)."""
    df = part.dropna(subset=["metric", "human"])
    n_groups = df["group"].nunique()
    if df.empty:
        why = "no item has both a judge score and a human score"
    elif level == "sample_level":
        sizes = df.groupby("group").size()
        if sizes.max() < 2:
            why = (f"needs ≥ 2 items per document; each of the {n_groups} document(s) has "
                   "1 — run on more items per document")
        else:
            why = (f"within every document the judge or the human scores are constant "
                   f"({entry.get('skipped', n_groups)} of {n_groups} document(s) skipped)")
    elif level == "dataset_level":
        why = (f"needs ≥ 2 items (n={len(df)})" if len(df) < 2
               else _constant_reason(df["metric"], df["human"], "item"))
    else:
        sys_means = df.groupby("system")[["metric", "human"]].mean()
        why = (f"needs ≥ 2 systems (n={len(sys_means)}) — include outputs of more systems"
               if len(sys_means) < 2 else
               _constant_reason(sys_means["metric"], sys_means["human"], "system (mean)"))
    if n_boot <= 0:
        ci_why = "no interval: bootstrap switched off (0 resamples)"
    elif n_groups < 2:
        ci_why = f"no interval: needs ≥ 2 documents (n={n_groups})"
    else:
        ci_why = "no interval: fewer than 2 resamples had a value (too few varied documents)"
    return {"reasons": {c: (why or "undefined") if _isnan(entry[c]) else None
                        for c in COEFFICIENTS},
            "ci_reasons": {c: ci_why if any(_isnan(x) for x in entry["ci"][c]) else None
                           for c in COEFFICIENTS}}


def format_ci(entry: dict[str, Any], coef: str, digits: int = 2) -> str:
    """``[0.12, 0.55]``, or the reason there is no interval."""
    lo, hi = entry["ci"][coef]
    if _isnan(lo) or _isnan(hi):
        return (entry.get("ci_reasons") or {}).get(coef) or "no interval"
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def correlation_table(per_run: dict[str, Any], level: str, coef: str) -> list[dict[str, Any]]:
    """The page's / CSV's correlation rows: each value with its n, its interval (or why
    none) and, for a blank value, why."""
    unit = LEVEL_UNITS[level]
    out = []
    for r in per_run.values():
        for dim, d in r["dimensions"].items():
            e = d[level]
            out.append({"run": r.get("label", ""), "dimension": dim, coef: e[coef],
                        "95% CI": format_ci(e, coef), f"n {unit}": e["n"],
                        "skipped documents": e.get("skipped", 0),
                        "note": (e.get("reasons") or {}).get(coef) or ""})
        avg = r["average"][level]
        ns = [d[level]["n"] for d in r["dimensions"].values()]
        out.append({"run": r.get("label", ""), "dimension": "AVERAGE", coef: avg[coef],
                    "95% CI": "", f"n {unit}": max(ns, default=0), "skipped documents": 0,
                    "note": (avg.get("reasons") or {}).get(coef)
                    or f"mean over {avg['n']} dimension(s)"})
    return out


def quality_rows(per_run: dict[str, Any]) -> list[dict[str, Any]]:
    """The high- vs low-quality split (human ≥ 3 vs < 3) of every run and dimension, each
    blank correlation with its reason (``note``)."""
    return [{"run": r.get("label", ""), "dimension": dim, "subset": name, "items": v["n"],
             "mean judge score": v["mean_metric"], "spearman": v["spearman"],
             "note": v.get("reason") or ""}
            for r in per_run.values() for dim, d in r["dimensions"].items()
            for name, v in d["quality_split"].items()]


def interval_note(per_run: dict[str, Any], level: str, coef: str) -> str | None:
    """Above the chart: how many bars have no error bar, and why (None if all have one)."""
    missing, total, why = 0, 0, []
    for r in per_run.values():
        for d in r["dimensions"].values():
            if _isnan(d[level][coef]):
                continue
            total += 1
            reason = (d[level].get("ci_reasons") or {}).get(coef)
            if reason:
                missing += 1
                why.append(reason.removeprefix("no interval: "))
    if not missing:
        return None
    return (f"{missing} of {total} bars have no error bar — no interval: "
            f"{'; '.join(dict.fromkeys(why))}. A value without an interval rests on too few "
            "documents to mean much on its own (its sign may be chance): the intervals resample "
            "documents, so include items from more documents in the run (Run page).")


def correlation_chart_note(per_run: dict[str, Any], level: str, coef: str) -> str | None:
    """Why the correlation chart would be empty (then the page shows this instead), else None."""
    reasons = []
    for r in per_run.values():
        for dim, d in r["dimensions"].items():
            if not _isnan(d[level][coef]):
                return None
            reasons.append(f"{dim}: {(d[level].get('reasons') or {}).get(coef)}")
    if not reasons:
        return ("No correlation to draw: no item of the selected runs has a human score for "
                "its dimensions — import human scores on the Data page.")
    unit = LEVEL_UNITS[level]
    ns = sorted({d[level]["n"] for r in per_run.values() for d in r["dimensions"].values()})
    return (f"No {coef} correlation to draw at {LEVEL_NAMES[level]} (n = "
            f"{', '.join(map(str, ns))} {unit}): " + "; ".join(dict.fromkeys(reasons)))


def analyze_runs(db: sqlite_utils.Database, run_ids: list[int], aggregation: str | None = None,
                 n_boot: int = 200, seed: int = 0, split: str = "all") -> dict[str, Any]:
    """Correlations per run, agreement across the runs, stability (the CLI's JSON).

    ``split``: read only the task's ``dev`` or ``heldout`` items (``all``: every item); the
    result's ``split`` block says which part was read and how many groups it has."""
    from checkeval_core.analysis.split import check_which, filter_frame, split_note, task_of_run

    check_which(split)
    tasks = list(dict.fromkeys(task_of_run(db, rid) for rid in run_ids))
    if split != "all" and len(tasks) > 1:
        raise ValueError(f"--split {split}: the runs belong to different tasks "
                         f"({', '.join(tasks)}); a split is a task's")
    out: dict[str, Any] = {"runs": {}}
    kept: set[int] = set()
    for rid in run_ids:
        df, meta = run_frame(db, rid, aggregation)
        if split != "all":
            df = filter_frame(db, tasks[0], df, split)
            kept |= set(df["item_pk"].tolist())
        rep = correlation_report(df, n_boot, seed)
        out["runs"][str(rid)] = {**{k: meta[k] for k in ("judge", "method", "aggregation")},
                                 **rep}
    out["agreement"] = agreement(db, run_ids, item_pks=None if split == "all" else kept)
    out["stability"] = stability(out["runs"])
    out["split"] = split_note(db, tasks[0], split) if tasks else {"which": split}
    return out


def scores_stamp(db: sqlite_utils.Database) -> str:
    """Changes whenever a score is written (the page's cache key for :func:`analyze_runs`)."""
    return str(db.execute("SELECT MAX(id) FROM score").fetchone()[0])


def analyze_metric(db: sqlite_utils.Database, task: str, name: str, n_boot: int = 200,
                   seed: int = 0, split: str = "all") -> dict[str, Any]:
    """Correlations of an external metric with human scores (on one part of the task's
    split: then the result has a ``split`` block too)."""
    df = metric_frame(db, task, name)
    if split == "all":
        return correlation_report(df, n_boot, seed)
    from checkeval_core.analysis.split import filter_frame, split_note

    return {**correlation_report(filter_frame(db, task, df, split), n_boot, seed),
            "split": split_note(db, task, split)}


def page_report(db: sqlite_utils.Database, task: str, run_ids: list[int],
                metrics: list[str] | tuple[str, ...] = (), aggregation: str | None = None,
                ensemble: bool = False, mode: str = "mean", n_boot: int = 100,
                split: str = "all") -> dict[str, Any]:
    """What the Analysis page shows: :func:`analyze_runs` of the runs, plus (optionally) their
    ensemble and each external metric as one more entry of ``runs``; every entry gets a
    ``label`` (``#12 fake · checkeval``, ``ensemble of #1, #2``, the metric's name).
    ``split``: every figure reads the task's ``dev`` / ``heldout`` items (``split`` block)."""
    from checkeval_core.analysis.split import split_note

    out = analyze_runs(db, list(run_ids), aggregation, n_boot=n_boot, split=split) \
        if run_ids else {"runs": {}, "agreement": agreement(db, []), "stability": {},
                         "split": split_note(db, task, split)}
    for k, r in out["runs"].items():
        r["label"] = f"#{k} {r['judge']} · {r['method']}"
    if ensemble and len(run_ids) >= 2:
        from checkeval_core.analysis.ensemble import analyze_ensemble

        ens = analyze_ensemble(db, list(run_ids), aggregation, n_boot=n_boot, mode=mode,
                               split=split)
        out["runs"]["ensemble:" + "+".join(map(str, run_ids))] = {
            "judge": "ensemble", "method": "ensemble", "aggregation": aggregation or "each run's",
            **ens, "label": "ensemble of " + ", ".join(f"#{r}" for r in run_ids)}
    for m in metrics:
        out["runs"][f"metric:{m}"] = {"judge": m, "method": "external", "aggregation": m,
                                      **analyze_metric(db, task, m, n_boot=n_boot, split=split),
                                      "label": f"metric:{m}"}
    return out


# -- agreement across judges ------------------------------------------------------------------
def agreement(db: sqlite_utils.Database, run_ids: list[int],
              item_pks: set[int] | None = None) -> dict[str, Any]:
    """Across runs: Krippendorff α (nominal) and Fleiss κ on Yes/No answers per
    (item, question, unit); α (interval) on dimension scores; pairwise Cohen κ.
    One run → every statistic NaN (documented: agreement needs two coders).

    ``reasons`` says why each NaN statistic is undefined (or what makes a defined one
    misleading, e.g. a judge answering the same everywhere); ``pairwise`` gives each pair's
    κ with its number of units, raw agreement and such a note. ``item_pks``: only answers
    and scores of these items (a dev / held-out part of the task)."""
    if len(run_ids) < 2:
        why = (f"needs ≥ 2 runs (judges); {len(run_ids)} selected — select another run of "
               "the same task")
        return {"krippendorff_alpha": math.nan, "fleiss_kappa": math.nan,
                "krippendorff_alpha_scores": math.nan, "pairwise_cohen": {}, "n_units": 0,
                "pairwise": {}, "reasons": {"krippendorff_alpha": why, "fleiss_kappa": why,
                                            "krippendorff_alpha_scores": why}}
    marks = ",".join("?" * len(run_ids))
    labels: dict[tuple, dict[int, str]] = defaultdict(dict)
    for r in db.execute(f"SELECT run_id, item_id, question_id, unit, verdict FROM answer WHERE "
                        f"run_id IN ({marks}) AND verdict != 'invalid'", run_ids):
        if item_pks is None or r[1] in item_pks:
            labels[(r[1], r[2], r[3])][r[0]] = r[4]
    units = [k for k, v in labels.items() if len(v) >= 2]
    code = {"yes": 1.0, "no": 0.0}
    matrix = [[code[labels[u][rid]] if rid in labels[u] else np.nan for u in units]
              for rid in run_ids]
    alpha = krippendorff_alpha(matrix) if units else math.nan
    fk, _ = fleiss_from_labels([list(labels[u].values()) for u in units])
    pair, detail = {}, {}
    for a, b in combinations(run_ids, 2):
        common = [u for u in units if a in labels[u] and b in labels[u]]
        la, lb = [labels[u][a] for u in common], [labels[u][b] for u in common]
        pair[f"{a}-{b}"] = cohen_kappa(la, lb)
        detail[f"{a}-{b}"] = {"kappa": pair[f"{a}-{b}"], "n": len(common),
                              "agree": sum(x == y for x, y in zip(la, lb)),
                              "reason": _kappa_note({a: la, b: lb}, pair[f"{a}-{b}"])}
    sc: dict[tuple, dict[int, float]] = defaultdict(dict)
    for r in db.execute(f"SELECT s.run_id, s.item_id, s.dimension, s.value FROM score s JOIN run "
                        f"ON run.id = s.run_id WHERE s.run_id IN ({marks}) AND s.aggregation = "
                        f"json_extract(run.params, '$.aggregation') AND s.value IS NOT NULL",
                        run_ids):
        if item_pks is None or r[1] in item_pks:
            sc[(r[1], r[2])][r[0]] = r[3]
    su = [k for k, v in sc.items() if len(v) >= 2]
    smat = [[sc[u].get(rid, np.nan) for u in su] for rid in run_ids]
    alpha_s = krippendorff_alpha(smat, "interval") if su else math.nan
    by_run = {rid: [labels[u][rid] for u in units if rid in labels[u]] for rid in run_ids}
    yes_no = _kappa_note(by_run, alpha, exact=False)
    agree = sum(len(set(labels[u].values())) == 1 for u in units)
    reasons = {"krippendorff_alpha": yes_no, "fleiss_kappa": _kappa_note(by_run, fk, exact=False),
               "krippendorff_alpha_scores": None}
    if not units:
        reasons["krippendorff_alpha"] = reasons["fleiss_kappa"] = (
            "the runs share no (item, question) answered Yes/No by two of them — select runs "
            "over the same items")
    elif _isnan(fk) and not _isnan(alpha) and not reasons["fleiss_kappa"]:
        reasons["fleiss_kappa"] = ("needs the same number of runs answering every unit "
                                   f"(raw agreement {agree}/{len(units)})")
    if _isnan(alpha_s):
        reasons["krippendorff_alpha_scores"] = (
            "the runs share no scored (item, dimension)" if not su else
            "every run gave the same score everywhere: α undefined")
    return {"krippendorff_alpha": alpha, "fleiss_kappa": fk,
            "krippendorff_alpha_scores": alpha_s, "pairwise_cohen": pair, "n_units": len(units),
            "n_agree": agree, "pairwise": detail, "reasons": reasons}


def _kappa_note(by_rater: dict[Any, list[str]], value: float, exact: bool = True) -> str | None:
    """Why a chance-corrected agreement is undefined or 0 by construction: a rater who gave
    one answer everywhere (chance agreement then explains all of their agreement)."""
    n = min((len(v) for v in by_rater.values()), default=0)
    if n == 0:
        return "no unit answered by both — select runs over the same items"
    constant = {r: v[0] for r, v in by_rater.items() if len(set(v)) == 1}
    if not constant:
        return None
    lists = list(by_rater.values())
    raw = ""
    if len(lists) == 2 and len(lists[0]) == len(lists[1]):
        agree = sum(x == y for x, y in zip(*lists))
        raw = f"; raw agreement {agree}/{len(lists[0])}"
    who = ", ".join(f"#{r} always {v!r}" for r, v in constant.items())
    if len(constant) == len(by_rater) or _isnan(value):
        return f"every answer is the same ({who}): chance agreement is 1, κ undefined{raw}"
    if exact:
        return (f"a judge answered the same everywhere ({who}): κ is 0 by construction, "
                f"whatever the other answers{raw}")
    return (f"a judge answered the same everywhere ({who}): chance-corrected agreement is "
            f"pulled towards 0{raw}")


# -- stability and significance -----------------------------------------------------------------
def stability(per_run: dict[str, Any], level: str = "sample_level",
              coef: str = "spearman") -> dict[str, Any]:
    """Mean and variance of the runs' average correlation, per method (CheckEval Fig. 2)."""
    by_method: dict[str, list[float]] = defaultdict(list)
    for r in per_run.values():
        v = r["average"][level][coef]
        if not math.isnan(v):
            by_method[r["method"]].append(v)
    return {m: {"mean": float(np.mean(v)), "variance": float(np.var(v, ddof=1)) if len(v) > 1
                else math.nan, "n_runs": len(v), "values": v,
                "reason": None if len(v) > 1 else
                "variance needs ≥ 2 runs of this method (different judges); 1 selected"}
            for m, v in by_method.items()}


def stability_note(per_run: dict[str, Any], level: str = "sample_level",
                   coef: str = "spearman") -> str | None:
    """Why the stability chart would say nothing (then the page shows this instead): it
    compares runs of one method across judges, so it needs ≥ 2 runs of some method."""
    counts: dict[str, int] = defaultdict(int)
    for r in per_run.values():
        if r.get("method") not in ("external", "ensemble"):
            counts[r["method"]] += 1
    if any(n >= 2 for n in counts.values()):
        return None
    have = ", ".join(f"{m} ×{n}" for m, n in sorted(counts.items())) or "none"
    return ("Stability across judges needs ≥ 2 runs of the same method with different judges "
            f"(selected: {have}) — run the same method with another judge and select both.")


def method_significance(per_run: dict[str, Any], level: str = "sample_level",
                        coef: str = "spearman") -> dict[str, dict[str, Any]]:
    """Method vs method over judges, per dimension: Wilcoxon on the paired correlations (the
    same judge under both methods), BH-corrected (empty with fewer than 2 methods)."""
    runs = [r for r in per_run.values() if r["method"] not in ("external", "ensemble")]
    methods = sorted({r["method"] for r in runs})
    dims = sorted({d for r in runs for d in r["dimensions"]})
    by = {(r["method"], r["judge"]): r for r in runs}
    pairs = {}
    for a, b in combinations(methods, 2):
        judges = sorted({j for m, j in by if m == a} & {j for m, j in by if m == b})
        for dim in dims:
            va = [by[(a, j)]["dimensions"].get(dim, {}).get(level, {}).get(coef) for j in judges]
            vb = [by[(b, j)]["dimensions"].get(dim, {}).get(level, {}).get(coef) for j in judges]
            ok = [(x, y) for x, y in zip(va, vb) if not _isnan(x) and not _isnan(y)]
            pairs[f"{a} vs {b} · {dim}"] = ([x for x, _ in ok], [y for _, y in ok])
    return wilcoxon_bh(pairs)


def wilcoxon_bh(pairs: dict[str, tuple[list[float], list[float]]]) -> dict[str, dict[str, float]]:
    """Wilcoxon signed-rank per comparison (paired values, e.g. correlations of the same
    judges under two methods), then Benjamini–Hochberg over the comparisons."""
    names, ps, out = [], [], {}
    for name, (a, b) in pairs.items():
        a, b = np.asarray(a, float), np.asarray(b, float)
        if len(a) < 2 or np.allclose(a, b):
            why = (f"needs ≥ 2 judges run with both methods (n={len(a)})" if len(a) < 2
                   else "the paired values are identical: nothing to test")
            out[name] = {"statistic": math.nan, "p": math.nan, "p_bh": math.nan, "n": len(a),
                         "reason": why}
            continue
        res = stats.wilcoxon(a, b)
        out[name] = {"statistic": float(res.statistic), "p": float(res.pvalue), "n": len(a),
                     "reason": None}
        names.append(name)
        ps.append(float(res.pvalue))
    if ps:
        adj = stats.false_discovery_control(ps, method="bh")
        for n, p in zip(names, adj):
            out[n]["p_bh"] = float(p)
    return out


def significance_rows(sig: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Display rows of :func:`wilcoxon_bh`'s result: the outcome in words, or why none."""
    out = []
    for name, v in sig.items():
        if v.get("reason"):
            result = v["reason"]
        else:
            result = f"W = {v['statistic']:g}, p = {v['p']:.3g}, p (BH) = {v['p_bh']:.3g}"
        out.append({"comparison": name, "judges": v["n"], "result": result})
    return out


def paired_bootstrap(df_a: pd.DataFrame, df_b: pd.DataFrame, level: str = "sample_level",
                     coef: str = "spearman", n_boot: int = 500, seed: int = 0) -> dict[str, Any]:
    """Difference of one dimension's correlation between two runs on the same items, with a
    group-resampled CI and the share of resamples where the sign flips."""
    from checkeval_core.analysis.correlation import level_value

    groups = sorted(set(df_a["group"]) & set(df_b["group"]))
    diff = level_value(df_a, level, coef)[0] - level_value(df_b, level, coef)[0]
    rng = np.random.default_rng(seed)
    ba, bb = dict(tuple(df_a.groupby("group"))), dict(tuple(df_b.groupby("group")))
    ds = []
    for _ in range(n_boot):
        pick = [groups[i] for i in rng.integers(0, len(groups), len(groups))]
        a = pd.concat([ba[g].assign(group=f"{g}#{k}") for k, g in enumerate(pick)])
        b = pd.concat([bb[g].assign(group=f"{g}#{k}") for k, g in enumerate(pick)])
        d = level_value(a, level, coef)[0] - level_value(b, level, coef)[0]
        if not math.isnan(d):
            ds.append(d)
    if not ds:
        return {"difference": diff, "ci": [math.nan, math.nan], "p": math.nan}
    p = 2 * min(np.mean(np.array(ds) <= 0), np.mean(np.array(ds) >= 0))
    return {"difference": diff, "ci": [float(np.quantile(ds, 0.025)),
                                       float(np.quantile(ds, 0.975))], "p": float(min(1.0, p))}


# -- question diagnostics ---------------------------------------------------------------------
def question_diagnostics(db: sqlite_utils.Database, run_ids: list[int]) -> list[dict[str, Any]]:
    """Per question over the runs: yes-rate, invalid rate, discrimination (Spearman of its
    answer values with the dimension's human score), agreement across judges (share of items
    where all runs agree), agreement with human annotations; and flags."""
    if not run_ids:
        return []
    marks = ",".join("?" * len(run_ids))
    ans = rows(db, f"SELECT a.run_id, a.item_id, a.question_id, a.dimension, a.verdict, a.p_yes, "
                   f"q.text FROM answer a JOIN question q ON q.id = a.question_id WHERE "
                   f"a.run_id IN ({marks}) AND a.question_id != 0 AND a.unit = ''", run_ids)
    human = {(r[0], r[1]): r[2] for r in db.execute(
        "SELECT item_id, dimension, value FROM human_score WHERE annotator = ''")}
    ann: dict[tuple[int, int], list[str]] = defaultdict(list)
    for r in db.execute("SELECT item_id, question_id, value FROM annotation WHERE kind = 'answer'"
                        " AND value IN ('yes', 'no')"):
        ann[(r[0], r[1])].append(r[2])
    by_q: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for a in ans:
        by_q[a["question_id"]].append(a)
    out = []
    for qid, lst in by_q.items():
        valid = [a for a in lst if a["verdict"] != "invalid"]
        yes_rate = np.mean([a["verdict"] == "yes" for a in valid]) if valid else math.nan
        xs, ys = [], []
        for a in valid:
            h = human.get((a["item_id"], a["dimension"]))
            if h is not None:
                xs.append(answer_value(a["verdict"], a["p_yes"]))
                ys.append(h)
        disc = corr(xs, ys, "spearman")
        per_item: dict[int, set[str]] = defaultdict(set)
        for a in valid:
            per_item[a["item_id"]].add(a["verdict"])
        multi = {i: v for i, v in per_item.items()
                 if sum(1 for a in valid if a["item_id"] == i) >= 2}
        judge_agree = np.mean([len(v) == 1 for v in multi.values()]) if multi else math.nan
        hum = [(a["verdict"], max(set(ann[(a["item_id"], qid)]), key=ann[(a["item_id"],
                                                                            qid)].count))
               for a in valid if ann.get((a["item_id"], qid))]
        human_agree = np.mean([x == y for x, y in hum]) if hum else math.nan
        flags = []
        if valid and len({a["verdict"] for a in valid}) == 1:
            flags.append("never varies")
        if not math.isnan(disc) and disc < -0.1:
            flags.append("anti-correlates with humans")
        if not math.isnan(judge_agree) and judge_agree < 0.6:
            flags.append("judges disagree")
        out.append({"question_id": qid, "dimension": lst[0]["dimension"], "question":
                    lst[0]["text"], "n": len(lst), "yes_rate": float(yes_rate),
                    "invalid_rate": 1 - len(valid) / len(lst), "discrimination": disc,
                    "judge_agreement": float(judge_agree), "human_agreement": float(human_agree),
                    "flags": flags})
    return sorted(out, key=lambda d: (d["dimension"], d["question_id"]))


def diagnostics_notes(diag: list[dict[str, Any]], n_runs: int) -> list[str]:
    """One sentence per diagnostics column that has blanks, saying why and what to do."""
    notes = []

    def blank(col: str) -> bool:
        return any(_isnan(d[col]) for d in diag)

    if blank("yes_rate"):
        notes.append("Blank yes-rate: every answer to the question was invalid.")
    if blank("discrimination"):
        notes.append("Blank discrimination: the question's answers never vary, or its items "
                     "have no human score (needs ≥ 2 items with different answers).")
    if blank("judge_agreement"):
        notes.append("Blank judge agreement: needs ≥ 2 runs answering the same item — select "
                     "another run." if n_runs < 2 else
                     "Blank judge agreement: no item was answered by two of the runs.")
    if blank("human_agreement"):
        notes.append("Blank human agreement: no annotator answered the question yet (Annotate "
                     "page).")
    return notes


def items_behind(db: sqlite_utils.Database, run_id: int, dimension: str,
                 aggregation: str | None = None) -> pd.DataFrame:
    """The items behind one bar (run × dimension) with a human score, largest rank
    disagreement (|percentile rank of judge − of human|) first."""
    df, _ = run_frame(db, run_id, aggregation)
    part = df[df["dimension"] == dimension].dropna(subset=["human"]).copy()
    part["gap"] = (part["metric"].rank(pct=True) - part["human"].rank(pct=True)).abs()
    return part.sort_values("gap", ascending=False)


def send_to_review(db: sqlite_utils.Database, question_ids: list[int], reason: str) -> int:
    """Put flagged questions back in the review queue (status ``proposed``, with the reason)."""
    n = 0
    for qid in question_ids:
        n += db.execute("UPDATE question SET status = 'proposed', reason = ? WHERE id = ?",
                        [f"diagnostics: {reason}"[:500], qid]).rowcount
    return n
