"""A run's (or an external metric's) scores beside the human scores, one row per item and
dimension, and the correlations computed from such a frame; the runs' Yes/No answers and
dimension scores side by side (:class:`YesNoAnswers`, :func:`run_scores`), what the agreement
across judges reads. The base every analysis reads (report, diagnostics, ensemble, compare,
versions), kept apart so none of them imports another's module."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils

from checkeval_core.runs.registry import primary_aggregation
from checkeval_core.stats.agreement import binary_group_sums, fleiss_from_counts
from checkeval_core.stats.bootstrap import interval_reason
from checkeval_core.stats.correlation import (
    COEFFICIENTS,
    LEVELS,
    NAN,
    average_levels,
    correlations,
    is_constant,
    level_value,
    quality_split,
)
from checkeval_core.stats.values import isnan
from checkeval_core.store import NotFound, rows, task_id


def human_frame(db: sqlite_utils.Database, tid: int) -> pd.DataFrame:
    """The dataset's own human scores (annotator '') of task ``tid``: item_pk, dimension,
    human."""
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
    df = sc.merge(human_frame(db, run["task_id"]), on=["item_pk", "dimension"], how="left")
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
    return sc.merge(human_frame(db, tid), on=["item_pk", "dimension"], how="left")


def correlation_report(df: pd.DataFrame, n_boot: int = 200, seed: int = 0) -> dict[str, Any]:
    """``{"dimensions": {dim: {level: {...}}}, "average": {level: {...}}}``.

    ``support`` (and each dimension's ``support``) counts what the numbers rest on: items,
    groups and systems with both scores. Next to every NaN value sits its explanation: each
    level entry carries ``reasons`` (``{coef: why the value is undefined}``) and
    ``ci_reasons`` (``{coef: why there is no interval}``), each quality-split subset a
    ``reason`` — see :func:`explain_level`."""
    dims: dict[str, Any] = {}
    for dim, part in df.groupby("dimension", sort=True):
        if part["human"].notna().sum() == 0:
            continue
        dims[dim] = correlations(part, n_boot=n_boot, seed=seed)
        dims[dim]["support"] = support(part)
        for level in LEVELS:
            dims[dim][level].update(explain_level(part, level, dims[dim][level], n_boot))
        dims[dim]["quality_split"] = quality_split(part)
        for sub in dims[dim]["quality_split"].values():
            sub["reason"] = None if not isnan(sub["spearman"]) else (
                f"needs ≥ 2 items (n={sub['n']})" if sub["n"] < 2
                else f"scores constant in this subset (n={sub['n']})")
    average = average_levels(dims)
    for level, entry in average.items():
        entry["reasons"] = {c: (f"no dimension has a {c} value at {LEVEL_NAMES[level]}"
                                if isnan(entry[c]) else None) for c in COEFFICIENTS}
    return {"dimensions": dims, "average": average, "support": support(df)}


#: What a point figure's interval says while it is still being computed.
PENDING = "interval being computed…"


def correlation_points(df: pd.DataFrame, level: str, coef: str) -> dict[str, Any]:
    """The point figures of :func:`correlation_report` for one level and coefficient, without
    resampling (a page draws them before their intervals): ``{"dimensions": {dim: {level:
    {coef, "n", "skipped", "reasons", "ci" (NaN), "ci_reasons" (:data:`PENDING`)},
    "support"}}, "support"}`` — the same dimensions, values, n, support and reasons as the
    report (the same :func:`~checkeval_core.stats.correlation.level_value` of each
    dimension's rows)."""
    dims: dict[str, Any] = {}
    for dim, part in df.groupby("dimension", sort=True):
        if part["human"].notna().sum() == 0:
            continue
        v, n, skipped = level_value(part, level, coef)
        why = None
        if isnan(v):
            why = undefined_reason(part.dropna(subset=["metric", "human"]), level,
                                   skipped) or "undefined"
        dims[dim] = {level: {coef: v, "n": n, "skipped": skipped, "ci": {coef: [NAN, NAN]},
                             "reasons": {coef: why}, "ci_reasons": {coef: PENDING}},
                     "support": support(part)}
    return {"dimensions": dims, "support": support(df)}


def support(df: pd.DataFrame) -> dict[str, int]:
    """What a correlation rests on: the items with both a judge (metric) and a human score,
    and the groups (documents / contexts / queries) and systems they come from."""
    both = df.dropna(subset=["metric", "human"]) if len(df) else df
    if not len(both):
        return {"n_items": 0, "n_groups": 0, "n_systems": 0}
    # a frame without item keys (built by hand) has one row per item
    items = both["item_pk"].nunique() if "item_pk" in both else len(both)
    return {"n_items": int(items), "n_groups": int(both["group"].nunique()),
            "n_systems": int(both["system"].nunique())}


# -- why a statistic is undefined (the pages show these next to the blank) ----------------------
LEVEL_NAMES = {"sample_level": "sample level", "dataset_level": "dataset level",
               "system_level": "system level"}
#: What ``n`` counts at each level.
LEVEL_UNITS = {"sample_level": "documents", "dataset_level": "items",
               "system_level": "systems"}



def _constant_reason(metric: pd.Series, human: pd.Series, where: str) -> str | None:
    if is_constant(metric):
        return (f"the judge gave every {where} the same score ({metric.iloc[0]:g}) — try "
                "another aggregation (e.g. mean_p_yes) or judge")
    if is_constant(human):
        return f"the human scores are all equal ({human.iloc[0]:g}) on every {where}"
    return None


def undefined_reason(df: pd.DataFrame, level: str, skipped: int) -> str | None:
    """Why a level's correlation of ``df`` (rows with both scores) is undefined, or None
    (``skipped``: the documents the sample level left out)."""
    n_groups = df["group"].nunique()
    if df.empty:
        return "no item has both a judge score and a human score"
    if level == "sample_level":
        sizes = df.groupby("group").size()
        if sizes.max() < 2:
            return (f"needs ≥ 2 items per document; each of the {n_groups} document(s) has "
                    "1 — run on more items per document")
        return (f"within every document the judge or the human scores are constant "
                f"({skipped} of {n_groups} document(s) skipped)")
    if level == "dataset_level":
        return (f"needs ≥ 2 items (n={len(df)})" if len(df) < 2
                else _constant_reason(df["metric"], df["human"], "item"))
    sys_means = df.groupby("system")[["metric", "human"]].mean()
    return (f"needs ≥ 2 systems (n={len(sys_means)}) — include outputs of more systems"
            if len(sys_means) < 2 else
            _constant_reason(sys_means["metric"], sys_means["human"], "system (mean)"))


def explain_level(part: pd.DataFrame, level: str, entry: dict[str, Any],
                  n_boot: int) -> dict[str, dict[str, str | None]]:
    """``{"reasons": {coef: str | None}, "ci_reasons": {coef: str | None}}`` for one
    dimension's level entry (``None`` where the value / interval exists)."""
    df = part.dropna(subset=["metric", "human"])
    n_groups = df["group"].nunique()
    why = undefined_reason(df, level, entry.get("skipped", n_groups))
    ci_why = interval_reason(n_groups, n_boot)
    if ci_why is None:
        ci_why = "no interval: fewer than 2 resamples had a value (too few varied documents)"
    return {"reasons": {c: (why or "undefined") if isnan(entry[c]) else None
                        for c in COEFFICIENTS},
            "ci_reasons": {c: ci_why if any(isnan(x) for x in entry["ci"][c]) else None
                           for c in COEFFICIENTS}}


# -- the runs' answers and scores side by side (agreement across judges) ------------------------
class YesNoAnswers:
    """The runs' valid Yes/No answers as a units × runs array (1 yes, 0 no, -1 none), the
    pairable units — (item, question, unit) answered by ≥ 2 of the runs — in the order they
    are first read, as the agreement across judges
    (:func:`checkeval_core.analysis.report.agreement`) has always listed them: every statistic
    gets the very labels, in the very order, that a dict of dicts built row by row gave it (one
    answer per run and unit: the answer table's unique key), without a Python object per
    answer. ``item_pks``: only answers on these items."""

    def __init__(self, db: sqlite_utils.Database, run_ids: list[int],
                 item_pks: set[int] | None = None) -> None:
        marks = ",".join("?" * len(run_ids))
        cur = db.execute(f"SELECT run_id, item_id, question_id, unit, verdict = 'yes' FROM "
                         f"answer WHERE run_id IN ({marks}) AND verdict != 'invalid'", run_ids)
        df = pd.DataFrame(cur.fetchall(), columns=["run", "item", "question", "unit", "yes"])
        if item_pks is not None:
            df = df[df["item"].isin(item_pks)]
        self.runs = list(run_ids)
        col: dict[int, int] = {}
        for k, rid in enumerate(self.runs):  # a run listed twice: one column, two coders
            col.setdefault(rid, k)
        key = df.groupby(["item", "question", "unit"], sort=False).ngroup().to_numpy()
        v = np.full((int(key.max()) + 1 if len(key) else 0, len(self.runs)), -1, dtype=np.int8)
        v[key, df["run"].map(col).to_numpy()] = df["yes"].to_numpy(np.int8)
        first = np.unique(key, return_index=True)[1]  # each key's first row, in key order
        pairable = (v >= 0).sum(axis=1) >= 2
        self.v = v[pairable]
        #: the item of each pairable unit, in unit order
        self.items: list[int] = df["item"].to_numpy()[first][pairable].tolist()
        self.n = len(self.items)

    def matrix(self) -> np.ndarray:
        """Runs × units, 1.0 / 0.0 / NaN (Krippendorff's reliability data)."""
        t = self.v.T[[self.runs.index(r) for r in self.runs]]
        return np.where(t >= 0, t.astype(float), np.nan)

    @staticmethod
    def _words(codes: np.ndarray) -> list[str]:
        return np.where(codes == 1, "yes", "no").tolist()

    def of_run(self, rid: int) -> list[str]:
        """The run's labels over the units it answered, in unit order."""
        c = self.v[:, self.runs.index(rid)]
        return self._words(c[c >= 0])

    def pair(self, a: int, b: int) -> tuple[list[str], list[str], int]:
        """Both runs' labels on the units both answered, and how many agree."""
        ca, cb = self.v[:, self.runs.index(a)], self.v[:, self.runs.index(b)]
        both = (ca >= 0) & (cb >= 0)
        return self._words(ca[both]), self._words(cb[both]), int((ca[both] == cb[both]).sum())

    def all_agree(self) -> int:
        """Units whose answers are all the same."""
        yes, m = self.counts()
        return int(((yes == 0) | (yes == m)).sum())

    def counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Per unit: Yes answers and answers."""
        return (self.v == 1).sum(axis=1), (self.v >= 0).sum(axis=1)

    def fleiss(self) -> float:
        """:func:`~checkeval_core.stats.agreement.fleiss_from_labels` of the units' labels,
        from their counts (categories "no", "yes")."""
        yes, m = self.counts()
        return fleiss_from_counts(np.column_stack([m - yes, yes]))[0]

    def group_sums(self, group_of_unit: list[Any]) -> np.ndarray:
        """:func:`~checkeval_core.stats.agreement.binary_group_sums` of the units' counts."""
        yes, m = self.counts()
        return binary_group_sums(yes, m, group_of_unit)


def run_scores(db: sqlite_utils.Database, run_ids: list[int],
               item_pks: set[int] | None = None) -> dict[tuple[int, str], dict[int, float]]:
    """``{(item pk, dimension): {run: score}}`` of each run's own aggregation (its ``params``'
    ``aggregation``), scored values only; ``item_pks``: only these items."""
    marks = ",".join("?" * len(run_ids))
    out: dict[tuple[int, str], dict[int, float]] = {}
    for r in db.execute(f"SELECT s.run_id, s.item_id, s.dimension, s.value FROM score s JOIN run "
                        f"ON run.id = s.run_id WHERE s.run_id IN ({marks}) AND s.aggregation = "
                        f"json_extract(run.params, '$.aggregation') AND s.value IS NOT NULL",
                        run_ids):
        if item_pks is None or r[1] in item_pks:
            out.setdefault((r[1], r[2]), {})[r[0]] = r[3]
    return out
