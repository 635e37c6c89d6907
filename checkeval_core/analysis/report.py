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
from checkeval_core.analysis.correlation import average_levels, corr, correlations, quality_split
from checkeval_core.runs.aggregate import answer_value
from checkeval_core.store import NotFound, loads, rows, task_id


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
    agg = aggregation or loads(run["params"], {}).get("aggregation", "share_yes")
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
    """``{"dimensions": {dim: {level: {...}}}, "average": {level: {...}}}``."""
    dims: dict[str, Any] = {}
    for dim, part in df.groupby("dimension", sort=True):
        if part["human"].notna().sum() == 0:
            continue
        dims[dim] = correlations(part, n_boot=n_boot, seed=seed)
        dims[dim]["quality_split"] = quality_split(part)
    return {"dimensions": dims, "average": average_levels(dims)}


def analyze_runs(db: sqlite_utils.Database, run_ids: list[int], aggregation: str | None = None,
                 n_boot: int = 200, seed: int = 0) -> dict[str, Any]:
    """Correlations per run, agreement across the runs, stability (the CLI's JSON)."""
    out: dict[str, Any] = {"runs": {}}
    for rid in run_ids:
        df, meta = run_frame(db, rid, aggregation)
        rep = correlation_report(df, n_boot, seed)
        out["runs"][str(rid)] = {**{k: meta[k] for k in ("judge", "method", "aggregation")},
                                 **rep}
    out["agreement"] = agreement(db, run_ids)
    out["stability"] = stability(out["runs"])
    return out


def analyze_metric(db: sqlite_utils.Database, task: str, name: str, n_boot: int = 200,
                   seed: int = 0) -> dict[str, Any]:
    return correlation_report(metric_frame(db, task, name), n_boot, seed)


# -- agreement across judges ------------------------------------------------------------------
def agreement(db: sqlite_utils.Database, run_ids: list[int]) -> dict[str, Any]:
    """Across runs: Krippendorff α (nominal) and Fleiss κ on Yes/No answers per
    (item, question, unit); α (interval) on dimension scores; pairwise Cohen κ.
    One run → every statistic NaN (documented: agreement needs two coders)."""
    if len(run_ids) < 2:
        return {"krippendorff_alpha": math.nan, "fleiss_kappa": math.nan,
                "krippendorff_alpha_scores": math.nan, "pairwise_cohen": {}, "n_units": 0}
    marks = ",".join("?" * len(run_ids))
    labels: dict[tuple, dict[int, str]] = defaultdict(dict)
    for r in db.execute(f"SELECT run_id, item_id, question_id, unit, verdict FROM answer WHERE "
                        f"run_id IN ({marks}) AND verdict != 'invalid'", run_ids):
        labels[(r[1], r[2], r[3])][r[0]] = r[4]
    units = [k for k, v in labels.items() if len(v) >= 2]
    code = {"yes": 1.0, "no": 0.0}
    matrix = [[code[labels[u][rid]] if rid in labels[u] else np.nan for u in units]
              for rid in run_ids]
    alpha = krippendorff_alpha(matrix) if units else math.nan
    fk, _ = fleiss_from_labels([list(labels[u].values()) for u in units])
    pair = {}
    for a, b in combinations(run_ids, 2):
        common = [u for u in units if a in labels[u] and b in labels[u]]
        pair[f"{a}-{b}"] = cohen_kappa([labels[u][a] for u in common],
                                       [labels[u][b] for u in common])
    sc: dict[tuple, dict[int, float]] = defaultdict(dict)
    for r in db.execute(f"SELECT s.run_id, s.item_id, s.dimension, s.value FROM score s JOIN run "
                        f"ON run.id = s.run_id WHERE s.run_id IN ({marks}) AND s.aggregation = "
                        f"json_extract(run.params, '$.aggregation') AND s.value IS NOT NULL",
                        run_ids):
        sc[(r[1], r[2])][r[0]] = r[3]
    su = [k for k, v in sc.items() if len(v) >= 2]
    smat = [[sc[u].get(rid, np.nan) for u in su] for rid in run_ids]
    return {"krippendorff_alpha": alpha, "fleiss_kappa": fk,
            "krippendorff_alpha_scores": krippendorff_alpha(smat, "interval") if su else math.nan,
            "pairwise_cohen": pair, "n_units": len(units)}


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
                else math.nan, "n_runs": len(v), "values": v} for m, v in by_method.items()}


def wilcoxon_bh(pairs: dict[str, tuple[list[float], list[float]]]) -> dict[str, dict[str, float]]:
    """Wilcoxon signed-rank per comparison (paired values, e.g. correlations of the same
    judges under two methods), then Benjamini–Hochberg over the comparisons."""
    names, ps, out = [], [], {}
    for name, (a, b) in pairs.items():
        a, b = np.asarray(a, float), np.asarray(b, float)
        if len(a) < 2 or np.allclose(a, b):
            out[name] = {"statistic": math.nan, "p": math.nan, "p_bh": math.nan, "n": len(a)}
            continue
        res = stats.wilcoxon(a, b)
        out[name] = {"statistic": float(res.statistic), "p": float(res.pvalue), "n": len(a)}
        names.append(name)
        ps.append(float(res.pvalue))
    if ps:
        adj = stats.false_discovery_control(ps, method="bh")
        for n, p in zip(names, adj):
            out[n]["p_bh"] = float(p)
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


def send_to_review(db: sqlite_utils.Database, question_ids: list[int], reason: str) -> int:
    """Put flagged questions back in the review queue (status ``proposed``, with the reason)."""
    n = 0
    for qid in question_ids:
        n += db.execute("UPDATE question SET status = 'proposed', reason = ? WHERE id = ?",
                        [f"diagnostics: {reason}"[:500], qid]).rowcount
    return n
