"""Agreement with humans per frozen checklist version: did an edit make the checklist better?

For a task with human evidence, every completed run of a frozen checklist version is read
against each kind of evidence the task has, per aggregation of its scores:

* ``human_scores`` — the correlation of the run's scores with the human scores per dimension
  (default: Spearman at sample level, CheckEval's per-document average), with the group
  bootstrap of :mod:`checkeval_core.stats.correlation`;
* ``annotations`` — the share of (item, question) decisions where the judge's Yes/No equals
  the people's label (:mod:`checkeval_core.people`: the settled answer, else the annotators'
  majority; unsettled ties left out), per dimension;
* ``preferences`` — pair accuracy against human pairwise votes (RocketEval: a judge tie is a
  miss; tie when ``|Δ score| < tie_margin``);
* ``reference_ratings`` — Spearman / Kendall of the systems' mean scores against the reference
  rating (list level, :func:`checkeval_core.analysis.rankings.list_level`).

Each figure is read on the task's dev and held-out groups (when the task has a split, see
:mod:`checkeval_core.task_split`) and on all groups, with its items, groups and systems
and a 95 % percentile bootstrap interval that resamples groups — or the reason it has none.
:func:`version_diff` puts the question diff of two versions (added / removed / edited, from
:func:`checkeval_core.checklists.versions.diff_versions`) beside the change in agreement of
each judge × method × aggregation run on both, with a paired group bootstrap interval where
the two runs share items.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils

from checkeval_core.analysis.frames import LEVEL_NAMES, explain_level, run_frame
from checkeval_core.analysis.rankings import item_scores, score_table
from checkeval_core.analysis.version_readers import (
    annotation_hits,
    evidence_kinds,
    preference_hits,
    run_task_name,
    version_runs,
)
from checkeval_core.annotation.preferences import rating_sources, ratings
from checkeval_core.checklists.versions import diff_versions, list_versions
from checkeval_core.runs.labels import run_label
from checkeval_core.runs.registry import primary_aggregation
from checkeval_core.runs.selection import reference_runs
from checkeval_core.stats.bootstrap import (
    PART_WORDS,
    delta_fields,
    group_bootstrap,
    interval_reason,
    mean_of_groups,
    paired_group_bootstrap,
    ratio_of_sums,
    share_ci,
)
from checkeval_core.stats.correlation import (
    COEFFICIENTS,
    bootstrap_ci,
    group_correlations,
    level_value,
    paired_bootstrap,
)
from checkeval_core.stats.ranking import DEFAULT_TIE_MARGIN, list_level
from checkeval_core.stats.values import NAN, Figure, isnan
from checkeval_core.task_split import check_which, filter_frame, get_split, members

EVIDENCE_NAMES = {"human_scores": "human scores", "annotations": "annotators' answers",
                  "preferences": "pairwise preferences", "reference_ratings": "reference ratings"}
#: The dimension label of figures that are not per dimension (rankings, preferences).
OVERALL = "overall"
#: The dimension label of the mean over a run's dimensions (correlations with human scores).
MEAN = "mean over dimensions"


# -- one figure ------------------------------------------------------------------------------
def _figure(value: float, ci: list[float], n_items: int, n_groups: int, n_systems: int,
            reason: str | None, ci_reason: str | None) -> dict[str, Any]:
    """A :class:`~checkeval_core.stats.values.Figure` in the versions report's JSON shape
    (NaN kept for the charts; ``weak``: no interval, drawn hollow / grey)."""
    f = Figure(value, ci, reason=reason if isnan(value) else None,
               ci_reason=reason if isnan(value) else ci_reason,
               n_items=n_items, n_groups=n_groups, n_systems=n_systems)
    return {**f.brief(), "n_items": f.n_items, "n_groups": f.n_groups,
            "n_systems": f.n_systems, "reason": f.reason,
            "ci_reason": None if f.ci else f.why_no_ci, "weak": f.weak}


def ratio_by_group(hits: pd.DataFrame, n_boot: int, seed: int) -> tuple[float, list[float],
                                                                         str | None]:
    """Share of hits (``group``, ``hit`` 0/1 columns) with a percentile interval resampling
    groups (a group's rows stay together): :func:`~checkeval_core.stats.bootstrap.share_ci`."""
    if hits.empty:
        return NAN, [NAN, NAN], "no decision to compare"
    g = hits.groupby("group")["hit"].agg(["sum", "count"])
    r = share_ci(g["sum"].to_numpy(float), g["count"].to_numpy(float), n_boot, seed)
    b = r.brief()
    return b["value"], b["ci"], b["reason"]


def _sample_level(df: pd.DataFrame, per_group: dict[Any, float], n_boot: int,
                  seed: int) -> tuple[float, int, list[float]]:
    """:func:`level_value` and :func:`bootstrap_ci` at sample level from per-group values
    computed once for all parts (the same resampling draw, so the same numbers)."""
    groups = list(dict.fromkeys(df["group"].tolist()))
    per = np.array([per_group[g] for g in groups], dtype=float)
    ok = per[~np.isnan(per)]
    v = float(ok.mean()) if len(ok) else NAN
    boot = group_bootstrap(len(groups), mean_of_groups(per), n_boot, seed)
    return v, int(len(per) - len(ok)), boot.ci()


def _group_values(df: pd.DataFrame, coef: str) -> dict[Any, float]:
    """Each group's correlation of ``metric`` with ``human`` (NaN where undefined)."""
    df = df.dropna(subset=["metric", "human"])
    groups = list(dict.fromkeys(df["group"].tolist()))
    return dict(zip(groups, group_correlations(df, groups, "metric", coef).tolist()))


def correlation_figure(df: pd.DataFrame, level: str, coef: str, n_boot: int, seed: int,
                       per_group: dict[Any, float] | None = None) -> dict[str, Any]:
    """One dimension's correlation with human scores (frame of :func:`run_frame`);
    ``per_group``: :func:`_group_values` of a frame containing ``df`` (sample level)."""
    df = df.dropna(subset=["metric", "human"])
    if level == "sample_level" and per_group is not None:
        v, skipped, ci = _sample_level(df, per_group, n_boot, seed)
    else:
        v, _, skipped = level_value(df, level, coef)
        ci = list(bootstrap_ci(df, level, coef, n_boot, seed))
    reason = ci_reason = None
    if isnan(v) or any(isnan(x) for x in ci):
        entry = {c: (v if c == coef else NAN) for c in COEFFICIENTS}
        entry.update(ci={c: (ci if c == coef else [NAN, NAN]) for c in COEFFICIENTS},
                     skipped=skipped)
        why = explain_level(df, level, entry, n_boot)
        reason, ci_reason = why["reasons"][coef], why["ci_reasons"][coef]
    return _figure(v, ci, len(df), df["group"].nunique(), df["system"].nunique(), reason,
                   ci_reason)


# -- per evidence ----------------------------------------------------------------------------
Part = Callable[[pd.DataFrame], pd.DataFrame]


def _human_score_rows(db: sqlite_utils.Database, run: dict[str, Any], agg: str,
                      parts: dict[str, Part], level: str, coef: str, n_boot: int,
                      seed: int) -> list[dict[str, Any]]:
    df, _ = run_frame(db, run["run"], agg)
    out = []
    per_dim: dict[str, dict[Any, float]] = {}
    for dim, part in df.groupby("dimension", sort=True):
        if part["human"].notna().sum() == 0:
            continue
        per = _group_values(part, coef) if level == "sample_level" else None
        per_dim[dim] = per or {}
        out.append({"evidence": "human_scores", "dimension": dim,
                    "statistic": f"{coef} ({LEVEL_NAMES[level]})",
                    "parts": {p: correlation_figure(f(part), level, coef, n_boot, seed, per)
                              for p, f in parts.items()}})
    if len(out) >= 2:
        out.append(_mean_row(df[df["dimension"].isin(per_dim)], out, per_dim, parts, level,
                             coef, n_boot, seed))
    return out


def _mean_row(df: pd.DataFrame, rows_: list[dict[str, Any]], per_dim: dict[str, dict],
              parts: dict[str, Part], level: str, coef: str, n_boot: int,
              seed: int) -> dict[str, Any]:
    """The mean over the run's dimensions of their correlations with human scores. At sample
    level each document's value is the mean of its per-dimension correlations and the interval
    resamples documents (one draw for all dimensions); at the other levels the mean of the
    dimensions' values, without an interval."""
    figs = {}
    for p, f in parts.items():
        sub = f(df).dropna(subset=["metric", "human"])
        n = (sub["item_pk"].nunique(), sub["group"].nunique(), sub["system"].nunique())
        vals = [r["parts"][p]["value"] for r in rows_ if not isnan(r["parts"][p]["value"])]
        if level == "sample_level" and not sub.empty:
            groups = list(dict.fromkeys(sub["group"].tolist()))
            per = {g: (float(np.nanmean(x)) if (x := [per_dim[d].get(g, NAN)
                                                       for d in per_dim])
                       and not all(isnan(v) for v in x) else NAN) for g in groups}
            v, _, ci = _sample_level(sub, per, n_boot, seed)
            figs[p] = _figure(v, ci, *n, "no dimension has a correlation in this part",
                              interval_reason(len(groups), n_boot))
        else:
            figs[p] = _figure(float(np.mean(vals)) if vals else NAN, [NAN, NAN], *n,
                              "no dimension has a correlation in this part",
                              f"no interval: at {LEVEL_NAMES[level]} the mean over dimensions "
                              "has none (each dimension has its own)")
        figs[p]["n_dimensions"] = len(vals)
    return {"evidence": "human_scores", "dimension": MEAN,
            "statistic": f"{coef} ({LEVEL_NAMES[level]}), mean over dimensions", "parts": figs}


def _annotation_rows(db: sqlite_utils.Database, run: dict[str, Any], parts: dict[str, Part],
                     n_boot: int, seed: int) -> list[dict[str, Any]]:
    ans = annotation_hits(db, run["run"])
    if ans.empty:
        return []
    out = []
    for dim, part in ans.groupby("dimension", sort=True):
        figs = {}
        for p, f in parts.items():
            sub = f(part)
            v, ci, ci_why = ratio_by_group(sub, n_boot, seed)
            figs[p] = _figure(v, ci, sub["item_pk"].nunique(), sub["group"].nunique(),
                              sub["system"].nunique(),
                              "no annotated decision in this part", ci_why)
            figs[p]["n_decisions"] = int(len(sub))
        out.append({"evidence": "annotations", "dimension": dim, "parts": figs,
                    "statistic": "agreement with people's label (settled, else majority)"})
    return out


def _pairs_in(df: pd.DataFrame, f: Part) -> pd.DataFrame:
    """The pairs of one part: both answers' systems are checked in turn."""
    sub = f(df.rename(columns={"system_a": "system"}))
    sub = f(sub.rename(columns={"system": "system_a", "system_b": "system"}))
    return sub.rename(columns={"system": "system_b"})


def _preference_rows(db: sqlite_utils.Database, run: dict[str, Any], sc: pd.DataFrame,
                     agg: str, parts: dict[str, Part], tie_margin: float, n_boot: int,
                     seed: int) -> list[dict[str, Any]]:
    df = preference_hits(db, run["run"], sc, agg, tie_margin)
    if df.empty:
        return []
    figs = {}
    for p, f in parts.items():
        sub = _pairs_in(df, f)
        v, ci, ci_why = ratio_by_group(sub, n_boot, seed)
        figs[p] = _figure(v, ci, len(set(sub["item_a"]) | set(sub["item_b"])),
                          sub["group"].nunique(),
                          len(set(sub["system_a"]) | set(sub["system_b"])),
                          "no decisive human preference between two scored answers in this "
                          "part", ci_why)
        figs[p]["n_pairs"] = int(len(sub))
    return [{"evidence": "preferences", "dimension": OVERALL,
             "statistic": f"pair accuracy (tie margin {tie_margin:g})", "parts": figs}]


def _rating_rows(db: sqlite_utils.Database, run: dict[str, Any], sc: pd.DataFrame, agg: str,
                 parts: dict[str, Part], coef: str, n_boot: int,
                 seed: int) -> list[dict[str, Any]]:
    task = run_task_name(db, run["run"])
    source = rating_sources(db, task)[0]  # arena_elo first, read through the ratings' owner
    ref = {r["system_id"]: float(r["rating"]) for r in ratings(db, task, source)}
    c = coef if coef in ("spearman", "kendall") else "spearman"
    part_all = sc[sc["aggregation"] == agg]
    figs = {}
    for p, f in parts.items():
        sub = f(part_all)
        if sub.empty:
            figs[p] = _figure(NAN, [NAN, NAN], 0, 0, 0, "no scored answer in this part", None)
            continue
        ll = list_level(score_table(sub, agg), ref, n_boot=n_boot, seed=seed)
        e = ll[c]
        figs[p] = _figure(e.value, e.brief()["ci"], len(sub), sub["group"].nunique(),
                          e.n_systems, e.reason,
                          e.brief()["reason"] or "no interval: needs ≥ 2 queries")
    return [{"evidence": "reference_ratings", "dimension": OVERALL,
             "statistic": f"{c} vs {source} (list level)", "parts": figs}]


# -- the report ------------------------------------------------------------------------------
def _parts(db: sqlite_utils.Database, task: str, split: str | None) -> dict[str, Part]:
    defined = members(db, task) is not None
    if split is None:
        names = ["dev", "heldout", "all"] if defined else ["all"]
    else:
        names = [check_which(split)]
    return {p: (lambda df, p=p: filter_frame(db, task, df, p)) for p in names}


def versions_report(db: sqlite_utils.Database, task: str, split: str | None = None,
                    level: str = "sample_level", coef: str = "spearman", n_boot: int = 200,
                    seed: int = 0, tie_margin: float = DEFAULT_TIE_MARGIN) -> dict[str, Any]:
    """Agreement with humans of every completed run of every frozen version.

    ``split``: ``dev`` / ``heldout`` / ``all`` reads that part only; None reads dev, held-out
    and all when the task has a split (else all). Returns ``{"task", "split", "parts",
    "evidence", "versions", "rows", "reason"}``; each row is one run × aggregation × evidence
    × dimension with ``parts: {part: {"value", "ci", "n_items", "n_groups", "n_systems",
    "reason", "ci_reason", "weak"}}``; ``reason`` says why there are no rows."""
    if level not in LEVEL_NAMES:
        raise ValueError(f"--level {level!r}: use {', '.join(LEVEL_NAMES)}")
    if coef not in COEFFICIENTS:
        raise ValueError(f"--coef {coef!r}: use {', '.join(COEFFICIENTS)}")
    parts = _parts(db, task, split)
    kinds = evidence_kinds(db, task)
    versions = list_versions(db, task)
    runs = version_runs(db, task)
    sp = get_split(db, task)
    out: dict[str, Any] = {
        "task": task, "parts": list(parts), "evidence": kinds,
        "split": {k: sp[k] for k in ("defined", "seed", "heldout_share", "by_system")}
        | {"n_dev_groups": len(sp["dev"]), "n_heldout_groups": len(sp["heldout"]),
           "n_unassigned_groups": len(sp["unassigned"]) if sp["defined"] else 0},
        "versions": [{k: v[k] for k in ("version", "kind", "n_questions", "note", "created_at")}
                     for v in versions], "rows": [], "reason": None, "tie_margin": tie_margin}
    if not kinds:
        out["reason"] = ("this task has no human evidence: import human scores, pairwise "
                         "preferences or reference ratings (Data / Rankings pages), or annotate "
                         "items (Annotate page)")
        return out
    if not runs:
        out["reason"] = ("no completed run of a frozen checklist version yet: freeze a version "
                         "(Checklist review) and run it (Run page)")
        return out
    refs = {r["run"]: r for r in reference_runs(db, task)}
    out["reference_runs"] = [{k: r[k] for k in ("version", "judge", "method", "run", "n_items",
                                                "pinned", "why", "others")}
                             for r in refs.values() if r["version"] is not None]
    for run in runs:
        sc = item_scores(db, run["run"])
        aggs = sorted(sc["aggregation"].unique().tolist())
        base = {"version": run["version"], "run": run["run"], "judge": run["judge"],
                "method": run["method"], "run_label": run_label(run),
                "reference": run["run"] in refs}
        for agg in aggs:
            found: list[dict[str, Any]] = []
            if "human_scores" in kinds:
                found += _human_score_rows(db, run, agg, parts, level, coef, n_boot, seed)
            if "preferences" in kinds:
                found += _preference_rows(db, run, sc, agg, parts, tie_margin, n_boot, seed)
            if "reference_ratings" in kinds:
                found += _rating_rows(db, run, sc, agg, parts, coef, n_boot, seed)
            out["rows"] += [{**base, "aggregation": agg,
                             "primary": agg == primary_aggregation(run), **r} for r in found]
        if "annotations" in kinds:
            out["rows"] += [{**base, "aggregation": "answers", "primary": True, **r}
                            for r in _annotation_rows(db, run, parts, n_boot, seed)]
    if not out["rows"]:
        out["reason"] = ("no run of a frozen version scored an item that has human evidence "
                         f"({', '.join(EVIDENCE_NAMES[k] for k in kinds)})")
    return out


def series_key(row: dict[str, Any]) -> str:
    """What stays fixed along a version history: judge · method · aggregation."""
    return f"{row['judge']} · {row['method']} · {row['aggregation']}"


def reference_rows(report: dict[str, Any], primary_only: bool = False) -> list[dict[str, Any]]:
    """One row per version × series × evidence × dimension: the reference run's (the pinned
    run of that version × judge × method, else the one covering the most items — see
    :mod:`checkeval_core.runs.selection`), so a small run never replaces a full one and every
    aggregation of a version comes from one run; with ``primary_only`` only each run's own
    (primary) aggregation."""
    seen, out = set(), []
    for r in sorted(report["rows"], key=lambda r: -r["run"]):
        if primary_only and not r.get("primary", True):
            continue
        if not r.get("reference", True):
            continue
        k = (r["version"], series_key(r), r["evidence"], r["dimension"])
        if k not in seen:
            seen.add(k)
            out.append(r)
    return sorted(out, key=lambda r: (r["evidence"], r["dimension"], series_key(r),
                                      r["version"]))


def table_rows(report: dict[str, Any], part: str, primary_only: bool = False
               ) -> list[dict[str, Any]]:
    """Display rows of one part: each value with its N and interval, or why it has none."""
    out = []
    for r in reference_rows(report, primary_only):
        f = r["parts"].get(part)
        if f is None:
            continue
        ci = Figure.from_dict(f).ci_text(2)
        out.append({"version": r["version"], "run": r.get("run_label", r["run"]),
                    "judge": r["judge"],
                    "method": r["method"], "aggregation": r["aggregation"],
                    "evidence": EVIDENCE_NAMES[r["evidence"]], "dimension": r["dimension"],
                    "statistic": r["statistic"], "value": f["value"], "95% CI": ci,
                    "items": f["n_items"], "groups": f["n_groups"], "systems": f["n_systems"],
                    "note": f["reason"] or ""})
    return out


def _paired_delta(db: sqlite_utils.Database, task: str, ra: dict[str, Any],
                  rb: dict[str, Any], part: str, level: str, coef: str, n_boot: int,
                  seed: int, frames: dict[tuple, Any]) -> dict[str, Any]:
    """Δ = b − a of one dimension's correlation on the items both runs scored, with a paired
    bootstrap over their shared groups (``frames``: run frames already read)."""
    for r in (ra, rb):
        if (r["run"], r["aggregation"]) not in frames:
            frames[(r["run"], r["aggregation"])] = run_frame(db, r["run"], r["aggregation"])[0]
    fa = filter_frame(db, task, frames[(ra["run"], ra["aggregation"])], part)
    fb = filter_frame(db, task, frames[(rb["run"], rb["aggregation"])], part)
    fa = fa[fa["dimension"] == ra["dimension"]].dropna(subset=["metric", "human"])
    fb = fb[fb["dimension"] == rb["dimension"]].dropna(subset=["metric", "human"])
    common = set(fa["item_pk"]) & set(fb["item_pk"])
    fa, fb = fa[fa["item_pk"].isin(common)], fb[fb["item_pk"].isin(common)]
    n_groups = fa["group"].nunique()
    out = {"n_common_items": len(common), "n_common_groups": int(n_groups)}
    d, boot = _paired(fa, fb, level, coef, n_boot, seed)
    if n_groups < 2:  # one document's Δ is that document's, not the part's
        d = NAN
    res = {**out, **delta_fields(d, boot, where=PART_WORDS.get(part, part)),
           "delta_common": d}
    del res["delta"]  # the row's "delta" is of the two runs' own items
    if res["ci_reason"]:
        res["ci_reason"] = res["ci_reason"].replace("no interval", "no paired interval", 1)
    return res


def paired_delta_ci(fa: pd.DataFrame, fb: pd.DataFrame, level: str, coef: str, n_boot: int,
                    seed: int) -> tuple[float, list[float]]:
    """``(Δ, [lo, hi])``: Δ = correlation of ``fb`` − of ``fa`` over the same items, and a
    percentile interval from resampling groups — the same draw for both sides (paired,
    :func:`~checkeval_core.stats.correlation.paired_bootstrap`; groups in order of item)."""
    d, boot = _paired(fa, fb, level, coef, n_boot, seed)
    return d, boot.ci()


def _paired(fa: pd.DataFrame, fb: pd.DataFrame, level: str, coef: str, n_boot: int,
            seed: int) -> tuple[float, Any]:
    fa = fa.sort_values("item_pk").reset_index(drop=True)
    fb = fb.sort_values("item_pk").reset_index(drop=True)
    return paired_bootstrap(fa, fb, level, coef, n_boot, seed)


def version_diff(db: sqlite_utils.Database, task: str, a: int, b: int,
                 report: dict[str, Any] | None = None, level: str = "sample_level",
                 coef: str = "spearman", n_boot: int = 200,
                 seed: int = 0) -> dict[str, Any]:
    """Questions added / removed / edited from version ``a`` to ``b`` beside the change in
    agreement: per series × evidence × dimension × part run on both versions, ``a``, ``b``,
    ``delta`` (b − a, each on its own items) and, for correlations with human scores,
    annotations and preferences, ``delta_common``: the Δ on the items (decisions, pairs)
    both runs judged, with a paired group bootstrap ``ci`` (else ``ci_reason``)."""
    diff = diff_versions(db, task, a, b)
    report = report or versions_report(db, task, level=level, coef=coef, n_boot=n_boot,
                                       seed=seed)
    by: dict[tuple, dict[int, dict[str, Any]]] = defaultdict(dict)
    for r in reference_rows(report):
        by[(series_key(r), r["evidence"], r["dimension"])][r["version"]] = r
    deltas = []
    frames: dict[tuple, Any] = {}
    for (series, evidence, dim), vs in sorted(by.items()):
        if a not in vs or b not in vs:
            continue
        ra, rb = vs[a], vs[b]
        for part in report["parts"]:
            fa, fb = ra["parts"][part], rb["parts"][part]
            d = (NAN if isnan(fa["value"]) or isnan(fb["value"])
                 else fb["value"] - fa["value"])
            row = {"series": series, "evidence": evidence, "dimension": dim, "part": part,
                   "statistic": ra["statistic"], "run_a": ra["run"], "run_b": rb["run"],
                   "a": fa, "b": fb, "delta": d,
                   "reason": None if not isnan(d) else (fa["reason"] or fb["reason"]
                                                         or "undefined")}
            if evidence == "human_scores" and dim == MEAN:
                row.update(ci=[NAN, NAN], ci_reason="no paired interval for the mean over "
                                                    "dimensions (each dimension has its own)")
            elif evidence == "human_scores":
                row.update(_paired_delta(db, task, ra, rb, part, level, coef, n_boot, seed,
                                         frames))
            elif evidence in ("annotations", "preferences"):
                ha, hb = (_hits(db, task, r, part, report.get("tie_margin", DEFAULT_TIE_MARGIN),
                                frames) for r in (ra, rb))
                row.update(paired_ratio_ci(ha, hb, n_boot, seed, PART_WORDS.get(part, part)))
            else:
                row.update(ci=[NAN, NAN], ci_reason="no paired interval for list-level rank "
                                                    "correlations (the Δ is of two point "
                                                    "values)", mde=NAN,
                           verdict="no verdict: a list-level Δ has no paired interval")
            deltas.append(row)
    return {"task": task, "a": a, "b": b, "diff": diff, "n_added": len(diff["added"]),
            "n_removed": len(diff["removed"]), "n_edited": len(diff["edited"]),
            "deltas": deltas,
            "reason": None if deltas else (f"no judge × method × aggregation has a completed "
                                           f"run on both version {a} and version {b}")}


def _hits(db: sqlite_utils.Database, task: str, r: dict[str, Any], part: str,
          tie_margin: float, cache: dict[tuple, Any]) -> pd.DataFrame:
    """One run's hit table (annotations or preferences) on one part and dimension, with a
    ``unit`` key shared across runs."""
    key = ("hits", r["run"], r["evidence"], r["aggregation"])
    if key not in cache:
        if r["evidence"] == "annotations":
            h = annotation_hits(db, r["run"])
            h = h.assign(unit=list(zip(h["item_pk"], h["question_id"])),
                         items=[(i,) for i in h["item_pk"]])
        else:
            h = preference_hits(db, r["run"], item_scores(db, r["run"]), r["aggregation"],
                                tie_margin)
            h = h.assign(unit=list(zip(h["item_a"], h["item_b"])),
                         items=list(zip(h["item_a"], h["item_b"])))
        cache[key] = h
    h = cache[key]
    f: Part = lambda df: filter_frame(db, task, df, part)  # noqa: E731
    if r["evidence"] == "annotations":
        return f(h[h["dimension"] == r["dimension"]])
    return _pairs_in(h, f)


def paired_ratio_ci(ha: pd.DataFrame, hb: pd.DataFrame, n_boot: int,
                    seed: int, where: str = "held-out") -> dict[str, Any]:
    """Δ share of hits (b − a) on the units both runs judged (``unit``, ``group``, ``hit``,
    ``items`` columns), with a percentile interval resampling groups — one draw for both."""
    m = ha[["unit", "group", "hit", "items"]].merge(hb[["unit", "hit"]], on="unit",
                                                   suffixes=("_a", "_b"))
    n_groups = int(m["group"].nunique())
    out: dict[str, Any] = {"n_common_items": len({i for t in m["items"] for i in t}),
                           "n_common_groups": n_groups, "n_common_units": int(len(m))}
    if m.empty:
        why = "no paired interval: the two runs share no judged decision"
        return {**out, "delta_common": NAN, "ci": [NAN, NAN], "ci_reason": why, "mde": NAN,
                "verdict": f"no verdict: {why.removeprefix('no paired interval: ')}"}
    g = m.groupby("group")[["hit_a", "hit_b"]].agg(["sum", "count"])
    sa, sb = g[("hit_a", "sum")].to_numpy(float), g[("hit_b", "sum")].to_numpy(float)
    c = g[("hit_a", "count")].to_numpy(float)
    d = float((sb.sum() - sa.sum()) / c.sum())
    boot = paired_group_bootstrap(n_groups, ratio_of_sums(sa, c), ratio_of_sums(sb, c),
                                  n_boot, seed)
    res = {**out, **delta_fields(d, boot, where), "delta_common": d}
    del res["delta"]
    if res["ci_reason"]:
        res["ci_reason"] = res["ci_reason"].replace("no interval", "no paired interval", 1)
    return res


def delta_rows(diff: dict[str, Any], part: str) -> list[dict[str, Any]]:
    """Display rows of :func:`version_diff`'s Δ agreement on one part: both values with their
    N, Δ, its verdict (beside Δ, where a 1440 px screen shows it), and Δ on the shared items
    with its paired interval (or why it has none)."""

    def val(f: dict[str, Any]) -> str:
        if isnan(f["value"]):
            return f"— ({f['reason']})"
        return f"{f['value']:.3f} (n {f['n_items']} items / {f['n_groups']} groups)"

    out = []
    for x in diff["deltas"]:
        if x["part"] != part:
            continue
        paired = ""
        if "delta_common" in x and not isnan(x["delta_common"]):
            paired = f"{x['delta_common']:+.3f} on {x['n_common_items']} shared items"
            fig = Figure(x["delta_common"], x["ci"])
            if not fig.weak:
                paired += ", " + fig.ci_text(2, signed=True, label="95% CI ")
        out.append({"judge · method · aggregation": x["series"],
                    "evidence": EVIDENCE_NAMES[x["evidence"]], "dimension": x["dimension"],
                    f"v{diff['a']}": val(x["a"]), f"v{diff['b']}": val(x["b"]),
                    "Δ": x["delta"], "verdict": x.get("verdict") or "",
                    "Δ on shared items (paired)": paired or x["ci_reason"] or "",
                    "note": x["reason"] or ""})
    return out


def touched_dimensions(db: sqlite_utils.Database, task: str, a: int, b: int) -> list[str]:
    """The dimensions whose questions changed (added, removed or edited) from version ``a``
    to ``b``, sorted — what a page opens on to show what the change did."""
    diff = diff_versions(db, task, a, b)
    return sorted({x["dimension"] for k in ("added", "removed", "edited") for x in diff[k]})
