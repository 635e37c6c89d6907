"""Two runs of one task compared item by item: did run B (a new checklist version, judge,
method or option) agree with the humans better or worse than the baseline run A, where, and
which Yes/No decisions changed?

Everything is computed on the items both runs scored (never on two different item sets):

* **items** — per (item, dimension): score A, score B, Δ = B − A and the human score. With
  human scores the rows are sorted by *regression*: ``gap = |percentile rank of the run's
  score − percentile rank of the human score|`` over the shared items of that dimension
  (scale-free, so a 0–1 checklist score and a 1–5 Likert score compare), ``regression =
  gap_B − gap_A`` (> 0: B moved away from the humans on that item). Without human scores the
  rows are sorted by |Δ|.
* **flipped** — per checklist question answered by both runs on the same item: how many
  decisions went Yes→No and No→Yes (invalid answers are not decisions and never count).
* **agreement** — the correlation with humans of A and of B at one level (default: sample
  level Spearman, averaged over dimensions, as CheckEval reports it) and Δ = B − A with a
  **paired** bootstrap interval: each resample draws groups (documents / contexts / queries)
  with replacement and computes A's and B's agreement on the *same* draw, so the interval of
  Δ is not inflated by the variation both runs share.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils

from checkeval_core.analysis.frames import run_frame
from checkeval_core.stats.bootstrap import (
    PART_WORDS,
    delta_fields,
    mean_of_groups,
    mean_of_paired,
    nanmean_rows,
    paired_group_bootstraps,
)
from checkeval_core.stats.correlation import (
    COEFFICIENTS,
    LEVELS,
    PooledLevel,
    group_correlations,
    level_value,
)
from checkeval_core.stats.values import Figure, isnan
from checkeval_core.store import NotFound, rows
from checkeval_core.task_split import check_which, filter_frame, members, split_note

NAN = float("nan")
#: Flipped items listed per question (the count is always complete).
MAX_FLIPPED_ITEMS = 20


class CompareError(ValueError):
    """The two runs cannot be compared (different tasks, no shared items, the same run)."""


def _run_meta(db: sqlite_utils.Database, run_id: int) -> dict[str, Any]:
    r = rows(db, "SELECT r.id, r.task_id, t.name AS task, r.judge_spec, r.method, r.status, "
                 "r.checklist_version_id, v.version FROM run r JOIN task t ON t.id = r.task_id "
                 "LEFT JOIN checklist_version v ON v.id = r.checklist_version_id "
                 "WHERE r.id = ?", [run_id])
    if not r:
        raise NotFound(f"no run {run_id}")
    return r[0]


def shared_frame(db: sqlite_utils.Database, run_a: int, run_b: int,
                 aggregation: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The (item, dimension) rows both runs scored: item_pk, item_id, group, system,
    dimension, score_a, score_b, human; plus both runs' metadata. Raises
    :class:`CompareError` for runs of different tasks or without a shared scored item."""
    if run_a == run_b:
        raise CompareError(f"run {run_a} given twice: compare two different runs")
    ma, mb = _run_meta(db, run_a), _run_meta(db, run_b)
    if ma["task_id"] != mb["task_id"]:
        raise CompareError(f"run {run_a} is on task {ma['task']!r} and run {run_b} on task "
                           f"{mb['task']!r}: runs of different tasks share no items and are "
                           "not comparable")
    fa, meta_a = run_frame(db, run_a, aggregation)
    fb, meta_b = run_frame(db, run_b, aggregation)
    fa, fb = fa.dropna(subset=["metric"]), fb.dropna(subset=["metric"])
    for rid, f, meta in ((run_a, fa, meta_a), (run_b, fb, meta_b)):
        if f.empty:
            raise CompareError(f"run {rid} has no scores in aggregation "
                               f"{meta['aggregation']!r}: nothing to compare"
                               + (" (give an aggregation both runs have)" if aggregation
                                  else " (is it finished?)"))
    ma.update(aggregation=meta_a["aggregation"], n_items=int(fa["item_pk"].nunique()))
    mb.update(aggregation=meta_b["aggregation"], n_items=int(fb["item_pk"].nunique()))
    df = fa.rename(columns={"metric": "score_a"}).merge(
        fb[["item_pk", "dimension", "metric"]].rename(columns={"metric": "score_b"}),
        on=["item_pk", "dimension"], how="inner")
    if df.empty:
        shared = len(set(fa["item_pk"]) & set(fb["item_pk"]))
        why = (f"they share {shared} scored item(s) but no dimension" if shared else
               "they share no scored item")
        raise CompareError(f"runs {run_a} ({ma['n_items']} scored items) and {run_b} "
                           f"({mb['n_items']} scored items) of task {ma['task']!r} cannot be "
                           f"compared: {why}")
    return df, {"a": ma, "b": mb}


def _pct(s: pd.Series) -> pd.Series:
    return s.rank(pct=True)


def item_rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Per (item, dimension): scores, Δ, human and regression, worst regression first (by
    |Δ| when no row has a human score)."""
    df = df.copy()
    df["delta"] = df["score_b"] - df["score_a"]
    df["gap_a"] = df["gap_b"] = df["regression"] = NAN
    for _, part in df[df["human"].notna()].groupby("dimension"):
        h = _pct(part["human"])
        ga = (_pct(part["score_a"]) - h).abs()
        gb = (_pct(part["score_b"]) - h).abs()
        df.loc[part.index, "gap_a"] = ga
        df.loc[part.index, "gap_b"] = gb
        df.loc[part.index, "regression"] = gb - ga
    df["_abs"] = df["delta"].abs()
    if df["human"].notna().any():
        df = df.sort_values(["regression", "_abs", "item_id", "dimension"],
                            ascending=[False, False, True, True], na_position="last")
    else:
        df = df.sort_values(["_abs", "item_id", "dimension"], ascending=[False, True, True])
    # column by column (a row-wise to_dict of 8,000 rows cost ~0.1 s)
    col = {c: df[c].tolist() for c in ("item_pk", "item_id", "group", "system", "dimension",
                                       "score_a", "score_b", "delta", "human", "regression")}
    return [{"item_pk": int(pk), "item_id": i, "group": g, "system": s, "dimension": d,
             "score_a": float(a), "score_b": float(b), "delta": float(dl),
             "human": None if isnan(h) else float(h),
             "regression": None if isnan(rg) else float(rg)}
            for pk, i, g, s, d, a, b, dl, h, rg in zip(*col.values())]


def paired_agreement(df: pd.DataFrame, level: str = "sample_level", coef: str = "spearman",
                     n_boot: int = 1000, seed: int = 0,
                     where: str = "the shared items") -> dict[str, Any]:
    """Agreement with humans of A and B on the shared rows (mean over dimensions of the
    level's coefficient), Δ = B − A and its paired percentile bootstrap interval over groups.

    ``df``: rows with group, system, dimension, score_a, score_b, human (as
    :func:`shared_frame`). Rows without a human score are left out. At sample level each
    group's correlation is computed once and a resample averages the drawn groups' values
    (a group whose correlation is undefined stays skipped), for A and B on the same draw
    (:func:`~checkeval_core.stats.bootstrap.paired_group_bootstraps`). Beside Δ and its
    interval: ``mde`` (smallest change these resamples could detect) and ``verdict`` (one
    sentence, ``where`` names the items: "better on the shared items", …)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}")
    if coef not in COEFFICIENTS:
        raise ValueError(f"coefficient must be one of {', '.join(COEFFICIENTS)}")
    hum = df.dropna(subset=["human"])
    groups = sorted(hum["group"].astype(str).unique().tolist())
    base = {"level": level, "coef": coef, "n_boot": n_boot, "seed": seed,
            "n_items": int(hum["item_pk"].nunique()) if len(hum) else 0,
            "n_groups": len(groups), "n_systems": int(hum["system"].nunique()),
            "dimensions": {}}
    if hum.empty:
        why = "no shared item has a human score: agreement with humans is undefined"
        return {**base, "a": NAN, "b": NAN, "delta": NAN, "ci": [NAN, NAN], "reason": why,
                "ci_reason": why, "mde": NAN, "verdict": f"no verdict: {why}"}
    hum = hum.assign(group=hum["group"].astype(str))
    stats: dict[str, tuple[Any, Any]] = {}
    vectorised = level == "sample_level"
    for dim, part in hum.groupby("dimension", sort=True):
        if vectorised:
            both = group_correlations(part, groups, ["score_a", "score_b"], coef)
            a, b = (float(nanmean_rows(both[c][None, :], 1)[0]) for c in ("score_a", "score_b"))
            stats[dim] = (mean_of_groups(both["score_a"]), mean_of_groups(both["score_b"]))
        else:
            a = level_value(part.rename(columns={"score_a": "metric"}), level, coef)[0]
            b = level_value(part.rename(columns={"score_b": "metric"}), level, coef)[0]
            stats[dim] = (PooledLevel(part, groups, level, coef, "score_a"),
                          PooledLevel(part, groups, level, coef, "score_b"))
        base["dimensions"][dim] = {"a": a, "b": b, "delta": b - a, "ci": [NAN, NAN],
                                   "ci_reason": None, "mde": NAN, "verdict": None,
                                   "n_items": int(part["item_pk"].nunique()),
                                   "n_groups": int(part["group"].nunique())}
    va = [d["a"] for d in base["dimensions"].values() if not isnan(d["a"])]
    vb = [d["b"] for d in base["dimensions"].values() if not isnan(d["b"])]
    a = float(np.mean(va)) if va else NAN
    b = float(np.mean(vb)) if vb else NAN
    reason = None
    if isnan(a) or isnan(b):
        reason = ("a correlation is undefined on the shared items (each group needs ≥ 2 items "
                  "whose judge and human scores vary)" if level == "sample_level" else
                  "a correlation is undefined on the shared items (too few items or constant "
                  "scores)")
    if reason:
        why = "no interval: " + reason
        return {**base, "a": a, "b": b, "delta": NAN, "ci": [NAN, NAN], "reason": reason,
                "ci_reason": why, "mde": NAN, "verdict": f"no verdict: {reason}"}
    boots = paired_group_bootstraps(len(groups), list(stats.values()), n_boot, seed,
                                    vectorised=vectorised)
    for dim, boot in zip(stats, boots):
        d = base["dimensions"][dim]
        d.update(delta_fields(d["delta"], boot, where))
        if d["ci_reason"] is None and isnan(d["ci"][0]):
            d["ci_reason"] = "no interval"
    overall = delta_fields(b - a, mean_of_paired(boots), where)
    return {**base, "a": a, "b": b, **overall, "reason": None}


def _shared_decisions(db: sqlite_utils.Database, run_a: int, run_b: int
                      ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Every checklist decision (valid Yes/No, question ≠ 0) both runs made on the same item,
    question and SEAL unit, in the order run A stored them: ``codes`` (question × 4 + A said
    Yes × 2 + B said Yes), the item pk of each flipped one, and A's dimension of each.

    One join without GROUP BY (its sort cost half the time) that returns three strings
    instead of 250,000 rows: A is scanned over the rowid range of its answers (sequential,
    not a seek per row; ``+a.run_id`` keeps the planner off the run index), B is found
    through its unique key (run_id, item_id, question_id, unit)."""
    codes, flipped, dims = db.execute(
        "SELECT group_concat(a.question_id * 4 + (a.verdict = 'yes') * 2 + "
        "(b.verdict = 'yes')), group_concat(CASE WHEN a.verdict != b.verdict THEN a.item_id "
        "END), json_group_array(a.dimension) "
        "FROM answer a CROSS JOIN answer b ON b.run_id = ? AND b.item_id = a.item_id "
        "AND b.question_id = a.question_id AND b.unit = a.unit "
        "WHERE a.id BETWEEN (SELECT min(id) FROM answer WHERE run_id = ?) AND "
        "(SELECT max(id) FROM answer WHERE run_id = ?) AND +a.run_id = ? AND "
        "a.question_id != 0 AND a.verdict IN ('yes', 'no') AND b.verdict IN ('yes', 'no')",
        [run_b, run_a, run_a, run_a]).fetchone()
    if not codes:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), []
    return (np.fromstring(codes, dtype=np.int64, sep=","),
            np.fromstring(flipped, dtype=np.int64, sep=",") if flipped else
            np.zeros(0, np.int64), json.loads(dims))


def flipped_decisions(db: sqlite_utils.Database, run_a: int, run_b: int) -> dict[str, Any]:
    """Per checklist question both runs answered on the same item (and SEAL unit): the
    decisions that flipped. ``{"questions": [...], "n_questions_shared", "n_decisions"}``,
    questions with the most flips first; only valid Yes/No answers count. A question's
    dimension is the one run A stored on its last shared decision; its items are the first
    :data:`MAX_FLIPPED_ITEMS` flipped ones in the order run A stored them, sorted by name.
    Read with one indexed join (:func:`_shared_decisions`) and counted in numpy: two runs
    of 250,000 answers cost a fraction of a second."""
    codes, flipped, dims = _shared_decisions(db, run_a, run_b)
    qids, inv = np.unique(codes >> 2, return_inverse=True)
    yes_a, yes_b = (codes >> 1) & 1, codes & 1
    n_both = np.bincount(inv, minlength=len(qids))
    y2n = np.bincount(inv[(yes_a == 1) & (yes_b == 0)], minlength=len(qids))
    n2y = np.bincount(inv[(yes_a == 0) & (yes_b == 1)], minlength=len(qids))
    last = len(inv) - 1 - np.unique(inv[::-1], return_index=True)[1]  # per question
    f_q = inv[yes_a != yes_b]  # the question of each flipped item, in stored order
    order = np.argsort(f_q, kind="stable")
    f_q, flipped = f_q[order], flipped[order]
    starts = np.searchsorted(f_q, np.arange(len(qids) + 1))
    texts = dict(db.execute("SELECT id, text FROM question WHERE id IN (SELECT value FROM "
                            "json_each(?))", [json.dumps(qids.tolist())]).fetchall())
    per = []
    for k, qid in enumerate(qids.tolist()):
        per.append({"question_id": qid, "dimension": dims[last[k]],
                    "question": texts.get(qid) or "", "n_both": int(n_both[k]),
                    "yes_to_no": int(y2n[k]), "no_to_yes": int(n2y[k]),
                    "items": flipped[starts[k]:starts[k + 1]][:MAX_FLIPPED_ITEMS].tolist()})
    flipped_qs = [q for q in per if q["yes_to_no"] or q["no_to_yes"]]
    pks = sorted({pk for q in flipped_qs for pk in q["items"]})
    names = {}
    for i in range(0, len(pks), 500):
        chunk = pks[i:i + 500]
        names.update(db.execute(f"SELECT id, item_id FROM item WHERE id IN "
                                f"({','.join('?' * len(chunk))})", chunk).fetchall())
    for q in flipped_qs:
        q["items"] = sorted(names.get(pk, str(pk)) for pk in q["items"])
    flipped_qs.sort(key=lambda q: (-(q["yes_to_no"] + q["no_to_yes"]), q["dimension"],
                                   q["question_id"]))
    return {"questions": flipped_qs, "n_questions_shared": len(per),
            "n_decisions": sum(q["n_both"] for q in per)}


def compare_runs(db: sqlite_utils.Database, run_a: int, run_b: int,
                 aggregation: str | None = None, level: str = "sample_level",
                 coef: str = "spearman", n_boot: int = 1000, seed: int = 0,
                 split: str = "all") -> dict[str, Any]:
    """Run B against the baseline run A on their shared items (the ``compare --json``
    output): ``n_common_items``, ``n_groups``, ``agreement`` {a, b, delta, ci, …},
    ``items`` (worst regression first), ``flipped`` (per question), ``runs``.

    ``split``: ``dev`` / ``heldout`` reads the agreement and the items on that part of the
    task's split only (``split`` block: which part, its groups); a version fitted on dev is
    judged on held-out groups (then a ``split`` block says which part and its groups). The
    flipped decisions count every shared item."""
    check_which(split)
    df, meta = shared_frame(db, run_a, run_b, aggregation)
    if split != "all":
        if not get_split_defined(db, meta["a"]["task"]):
            raise CompareError(f"--split {split}: task {meta['a']['task']!r} has no dev / "
                               "held-out split (make one: checkeval split --task NAME)")
        df = filter_frame(db, meta["a"]["task"], df, split)
    common = set(df["item_pk"].astype(int).tolist())
    flips = flipped_decisions(db, run_a, run_b)
    scales = None
    if meta["a"]["aggregation"] != meta["b"]["aggregation"]:
        scales = (f"the runs score in different aggregations ({meta['a']['aggregation']} vs "
                  f"{meta['b']['aggregation']}): Δ mixes scales; read the regression column "
                  "(percentile ranks) and the agreement instead")
    return {"task": meta["a"]["task"], "runs": meta,
            "n_common_items": len(common), "n_groups": int(df["group"].nunique()),
            "n_systems": int(df["system"].nunique()),
            "dimensions": sorted(df["dimension"].unique().tolist()),
            "has_human": bool(df["human"].notna().any()), "scale_note": scales,
            "agreement": paired_agreement(df, level, coef, n_boot, seed),
            "items": item_rows(df), "flipped": flips["questions"],
            "n_questions_shared": flips["n_questions_shared"],
            "n_decisions_shared": flips["n_decisions"],
            **({"split": split_note(db, meta["a"]["task"], split)} if split != "all" else {})}


def get_split_defined(db: sqlite_utils.Database, task: str) -> bool:
    """Whether ``task`` has a dev / held-out split."""
    return members(db, task) is not None


def paired_with_first(db: sqlite_utils.Database, run_ids: list[int],
                      aggregation: str | None = None, level: str = "sample_level",
                      coef: str = "spearman", n_boot: int = 200, seed: int = 0,
                      split: str = "all") -> list[dict[str, Any]]:
    """Each later run (B) against the first (A) on the items both scored (of the ``split``
    part: ``dev`` / ``heldout`` / ``all``): ``run_a``,
    ``run_b`` and :func:`paired_agreement`'s ``a``, ``b``, ``delta``, ``ci``, ``mde``,
    ``verdict``, ``n_items``, ``n_groups``… (``analyze --json``'s ``comparisons``); a pair
    that cannot be compared carries ``reason`` and ``verdict`` only."""
    out = []
    for rb in run_ids[1:]:
        base = {"run_a": run_ids[0], "run_b": rb}
        try:
            df, meta = shared_frame(db, run_ids[0], rb, aggregation)
            df = filter_frame(db, meta["a"]["task"], df, split)
        except CompareError as e:
            out.append({**base, "delta": NAN, "ci": [NAN, NAN], "mde": NAN, "reason": str(e),
                        "verdict": f"no verdict: {e}"})
            continue
        where = PART_WORDS[split] if split != "all" else "the shared items"
        out.append({**base, **paired_agreement(df, level, coef, n_boot, seed, where)})
    return out


def trace_link(run_a: int, run_b: int, item_pk: int, dimension: str | None = None) -> str:
    """The Traces page URL that opens both runs on one item (and dimension)."""
    return f"/traces?runs={run_a},{run_b}&item={item_pk}" + (
        f"&dim={dimension}" if dimension else "")


def _part_text(sp: dict[str, Any] | None) -> str:
    if not sp or sp.get("which", "all") == "all":
        return ""
    name = {"dev": "dev", "heldout": "held-out"}[sp["which"]]
    return f", read on the {sp['n_groups']} {name} groups of the task's split only"


def delta_colour(verdict: str | None) -> str:
    """How a Δ chip may be coloured: ``"normal"`` (green up / red down, by its sign) only when
    the verdict says *better* or *worse*; ``"off"`` (grey) otherwise — a Δ whose interval
    covers 0 says nothing about better."""
    return "normal" if (verdict or "").startswith(("better", "worse")) else "off"


def delta_chip(ag: dict[str, Any]) -> str:
    """The text under a Δ: its sign first (so an arrow drawn from it follows the sign), then
    the interval or why there is none: ``-0.010 · 95% CI [-0.050, +0.030]``."""
    fig = Figure.from_dict(ag, value_key="delta")
    return f"{fig.value_text(3, signed=True)} · " + fig.ci_text(3, signed=True, label="95% CI ")


def summary_lines(res: dict[str, Any]) -> list[str]:
    """The plain-text summary the CLI prints (and the page's headline)."""
    ag = res["agreement"]
    a, b = res["runs"]["a"], res["runs"]["b"]
    lines = [f"A = run {a['id']} ({a['judge_spec']} · {a['method']} · {a['aggregation']}), "
             f"B = run {b['id']} ({b['judge_spec']} · {b['method']} · {b['aggregation']}), "
             f"task {res['task']!r}",
             f"shared: {res['n_common_items']} items over {res['n_groups']} groups and "
             f"{res['n_systems']} systems (A scored {a['n_items']}, B {b['n_items']})"
             + _part_text(res.get("split"))]
    lvl = ag["level"].replace("_", " ")
    if ag["reason"]:
        lines.append(f"agreement ({lvl} {ag['coef']}): {ag['reason']}")
    else:
        ci_s = Figure.from_dict(ag, value_key="delta").ci_text(3, signed=True)
        lines.append(f"agreement ({lvl} {ag['coef']}, n = {ag['n_items']} items, "
                     f"{ag['n_groups']} groups): A {ag['a']:.3f}, B {ag['b']:.3f}, "
                     f"Δ {ag['delta']:+.3f} {ci_s} (paired bootstrap over groups, "
                     f"{ag['n_boot']} resamples): {ag['verdict']}")
    if res["scale_note"]:
        lines.append("note: " + res["scale_note"])
    return lines
