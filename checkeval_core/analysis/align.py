"""Align: per-question agreement of a judge run with people, on a sample they answered.

A run (checklist version × judge) answered every question of every item. People answer the
same questions on a sample of its items (an annotation job on the run's checklist version,
drawn by :func:`align_sample`, stratified by group and system). Per question this module puts:

* ``agreement`` — share of (item, question) decisions where the judge's Yes/No equals the
  people's label (:mod:`checkeval_core.people`: a coordinator's settled answer, else the
  annotators' majority; unsettled ties and ``unsure`` left out), ``kappa`` — Cohen's κ
  of the same pairs, each with a 95 % percentile interval resampling groups (or the reason
  there is none), the ``confusion`` counts (judge / people) and the disagreeing items;
* ``phi`` (Matthews), ``fpr`` / ``fnr`` (the judge's false-positive and false-negative rates
  against people) and ``kappa_phi_gap`` (φ − κ: how much of κ's shortfall is the judge saying
  Yes more or less often than people), each with ``_ci`` and ``_reason``, from the statistics
  floor (:func:`checkeval_core.stats.agreement.confusion_figures`) on the same resamples;
* the same agreement on *consensus* items (≥ 2 annotators, all gave the same answer) and on
  *split* items (annotators disagreed; the settled answer or a majority decides);
* ``yes_rate`` — the judge's share of Yes on the part's items, ``saturated`` when ≥ 0.95 or
  ≤ 0.05 (a question that never varies cannot tell outputs apart);
* ``separates`` — the system pairs whose Yes counts on this question differ at p < 0.05
  (two-sided Fisher exact test), of ``n_pairs``;
* ``loo_delta`` — the version's agreement with the people's totals (the task's human scores,
  reference ratings or pairwise votes, :mod:`checkeval_core.analysis.proposal`) with every
  question minus the same without this question, on dev groups: positive = the question
  helps; ``loo_ci`` its paired interval (the same resampled groups).

Everything resamples groups through one function, :func:`resample_groups`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils

from checkeval_core.analysis.proposal.evidence import ProposalError, load_evidence, subset_scores
from checkeval_core.analysis.proposal.figures import STATISTIC, agreement_stat
from checkeval_core.analysis.version_readers import version_runs
from checkeval_core.annotation.jobs import create_job_once
from checkeval_core.people import people_answers
from checkeval_core.runs.jobs import get_run
from checkeval_core.stats.agreement import (
    agreement_from_counts,
    confusion_figures,
    kappa_from_counts,
)
from checkeval_core.stats.bootstrap import interval_reason, percentile_ci, resample_index
from checkeval_core.stats.draws import sampling_rng, shuffled
from checkeval_core.stats.significance import fisher_exact_p
from checkeval_core.stats.values import Figure, fmt_ci
from checkeval_core.store import NotFound, rows
from checkeval_core.task_split import check_which, in_part, members, split_note

NAN = float("nan")
N_BOOT = 200
DEFAULT_SAMPLE = 50
SATURATED = 0.95
LOO_PARTS = ("dev", "heldout", "all")
#: φ, false-positive / false-negative rates and the κ–φ gap (each with ``_ci``, ``_reason``).
CONFUSION_KEYS = ("phi", "fpr", "fnr", "kappa_phi_gap")


def _isnan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


# -- the one resampling function ----------------------------------------------------------------
def resample_groups(n_groups: int, n_boot: int, seed: int) -> tuple[np.ndarray | None,
                                                                     str | None]:
    """``(index array n_boot × n_groups, None)`` drawn by the statistics floor's one rule, or
    ``(None, reason)`` when there can be no interval (the floor's small-sample rule)."""
    why = interval_reason(n_groups, n_boot)
    return (None, why) if why else (resample_index(n_groups, n_boot, seed), None)


# -- pure statistics ---------------------------------------------------------------------------
def constant_side(confusion: dict[str, int]) -> str | None:
    """Why κ is undefined for these counts (``yes/yes``, ``yes/no``, ``no/yes``, ``no/no``:
    judge / people), or None."""
    judge = {"yes": confusion["yes/yes"] + confusion["yes/no"],
             "no": confusion["no/yes"] + confusion["no/no"]}
    people = {"yes": confusion["yes/yes"] + confusion["no/yes"],
              "no": confusion["yes/no"] + confusion["no/no"]}
    sides = [f"{who} answered {a!r} on all {sum(c.values())} decisions"
             for who, c in (("the judge", judge), ("people", people))
             for a, b in (("yes", "no"), ("no", "yes")) if c[b] == 0 and c[a]]
    if not sides:
        return None
    return ("κ undefined: " + " and ".join(sides) + " — with one side constant κ is 0 "
            "whatever the other does (observed = chance agreement)")


def agreement_figures(pairs: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0
                      ) -> dict[str, Any]:
    """Agreement and κ of ``pairs`` (columns ``group``, ``judge``, ``human``: "yes"/"no"), with
    intervals resampling groups: ``{"n", "n_groups", "agreement", "ci", "kappa", "kappa_ci",
    "confusion", "reason", "ci_reason"}`` and :data:`CONFUSION_KEYS` (each with ``_ci`` and
    ``_reason``)."""
    out: dict[str, Any] = {"n": int(len(pairs)), "n_groups": 0, "agreement": NAN,
                           "ci": [NAN, NAN], "kappa": NAN, "kappa_ci": [NAN, NAN],
                           "confusion": {"yes/yes": 0, "yes/no": 0, "no/yes": 0, "no/no": 0},
                           "reason": None, "ci_reason": None}
    if pairs.empty:
        out["reason"] = out["ci_reason"] = "no decision answered by both the judge and people"
        out.update(_confusion_fields(confusion_figures(np.zeros((0, 4)), n_boot, seed)))
        return out
    code = (pairs["judge"].eq("no").astype(int) * 2 + pairs["human"].eq("no").astype(int))
    per = pd.crosstab(pairs["group"], code).reindex(columns=range(4), fill_value=0)
    C = per.to_numpy(float)
    tot = C.sum(0)
    out.update(_confusion_fields(confusion_figures(C, n_boot, seed)))
    out["n_groups"] = int(len(C))
    out["confusion"] = dict(zip(("yes/yes", "yes/no", "no/yes", "no/no"), map(int, tot)))
    out["agreement"] = float(agreement_from_counts(tot))
    out["kappa"] = float(kappa_from_counts(tot))
    if _isnan(out["kappa"]):
        out["reason"] = constant_side(out["confusion"])
    idx, why = resample_groups(len(C), n_boot, seed)
    if idx is None:
        out["ci_reason"] = why
        return out
    drawn = C[idx].sum(1)
    out["ci"] = percentile_ci(agreement_from_counts(drawn))
    out["kappa_ci"] = percentile_ci(kappa_from_counts(drawn))
    if _isnan(out["kappa_ci"][0]) and not _isnan(out["kappa"]):
        out["ci_reason"] = ("no κ interval: fewer than 2 resamples had both answers on both "
                            "sides")
    return out


def _confusion_fields(conf: dict[str, Figure]) -> dict[str, Any]:
    """``phi``, ``fpr``, ``fnr``, ``kappa_phi_gap``, each with ``_ci`` and ``_reason``."""
    out: dict[str, Any] = {}
    for k, f in conf.items():
        b = f.brief()
        out[k], out[f"{k}_ci"], out[f"{k}_reason"] = b["value"], b["ci"], b["reason"]
    return out


def stratified_sample(items: list[dict[str, Any]], n: int, seed: int = 0) -> list[int]:
    """``n`` item pks drawn evenly over groups and systems: rounds over the groups (in a seeded
    order); in each, the item whose system has been drawn least so far (ties at random)."""
    if n < 1:
        raise ValueError(f"sample size {n}: give ≥ 1")
    rng = sampling_rng(seed)
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for it in items:
        by_group[str(it["group"])].append(it)
    for g in by_group:
        by_group[g] = [by_group[g][i] for i in shuffled(rng, len(by_group[g]))]
    order = [sorted(by_group)[i] for i in shuffled(rng, len(by_group))]
    used: dict[str, int] = defaultdict(int)
    out: list[int] = []
    while len(out) < min(n, len(items)):
        for g in order:
            if not by_group[g] or len(out) >= n:
                continue
            best = min(range(len(by_group[g])), key=lambda i: used[str(by_group[g][i]["system"])])
            it = by_group[g].pop(best)
            used[str(it["system"])] += 1
            out.append(int(it["item_pk"]))
    return out


def separated_pairs(answers: pd.DataFrame, alpha: float = 0.05) -> tuple[int, int]:
    """``(pairs separated, pairs compared)``: system pairs whose Yes counts (``system``,
    ``verdict`` columns) differ at p < ``alpha`` (two-sided Fisher exact test)."""
    counts = answers.groupby("system")["verdict"].agg(
        yes=lambda v: int((v == "yes").sum()), no=lambda v: int((v == "no").sum()))
    systems = list(counts.index)
    sep = 0
    for a, b in combinations(systems, 2):
        t = [[counts.at[a, "yes"], counts.at[a, "no"]], [counts.at[b, "yes"], counts.at[b, "no"]]]
        if fisher_exact_p(t) < alpha:
            sep += 1
    return sep, len(systems) * (len(systems) - 1) // 2


# -- what the store holds ---------------------------------------------------------------------
def _run(db: sqlite_utils.Database, run_id: int) -> dict[str, Any]:
    """The run's row (:func:`~checkeval_core.runs.jobs.get_run`), its checklist version as
    ``version``."""
    r = get_run(db, run_id)
    return {**r, "version": r["checklist_version"]}


def run_answers(db: sqlite_utils.Database, run_id: int) -> pd.DataFrame:
    """The run's Yes/No verdicts: item_pk, item_id, group, system, question_id, verdict."""
    return pd.DataFrame(rows(db, "SELECT a.item_id AS item_pk, i.item_id, i.group_id AS "
                                 "\"group\", i.system_id AS system, a.question_id, a.verdict "
                                 "FROM answer a JOIN item i ON i.id = a.item_id WHERE "
                                 "a.run_id = ? AND a.unit = '' AND a.question_id != 0",
                             [run_id]),
                        columns=["item_pk", "item_id", "group", "system", "question_id",
                                 "verdict"])


def human_labels(db: sqlite_utils.Database, task_id: int) -> pd.DataFrame:
    """Per (item, question) the people's answers (:func:`checkeval_core.people.people_answers`):
    item_pk, question_id, n_annotators (Yes/No answers), human (the settled answer, else the
    majority; None on an unsettled tie), consensus (≥ 2 annotators, all the same)."""
    out = [{"item_pk": item, "question_id": q, "n_annotators": p.n, "human": p.label,
            "consensus": p.consensus}
           for (item, q), p in people_answers(db, task_id).items()]
    return pd.DataFrame(out, columns=["item_pk", "question_id", "n_annotators", "human",
                                      "consensus"])


def _questions(db: sqlite_utils.Database, qids: list[int]) -> list[dict[str, Any]]:
    if not qids:
        return []
    return rows(db, "SELECT q.id AS question_id, q.text, d.name AS dimension FROM question q "
                    "LEFT JOIN dimension d ON d.id = q.dimension_id WHERE q.id IN "
                    f"({','.join('?' * len(qids))}) ORDER BY d.name, q.id", qids)


def _part_filter(db: sqlite_utils.Database, task: str, which: str
                 ) -> Callable[[pd.DataFrame], pd.DataFrame]:
    m = members(db, task)
    if which == "all" or m is None:
        return lambda df: df
    groups, systems = m
    return lambda df: df[[in_part(g, s, which, groups, systems)
                          for g, s in zip(df["group"], df["system"])]]


def _loo(db: sqlite_utils.Database, run_id: int, part: str, n_boot: int, seed: int
         ) -> tuple[dict[int, dict[str, Any]], dict[str, Any]]:
    """Per question ``{"loo_delta", "loo_ci", "loo_reason"}`` and what it rests on."""
    try:
        ev = load_evidence(db, [run_id])
    except ProposalError as e:
        return {}, {"statistic": None, "part": part, "reason": str(e)}
    mask = (np.ones(len(ev.items), bool) if part == "all" else ev.items[part].to_numpy(bool))
    keep = np.ones(len(ev.questions), bool)
    full = agreement_stat(ev, subset_scores(ev, keep), mask)
    groups = sorted(set(ev.items["group"][mask]))
    idx, why = resample_groups(len(groups), n_boot, seed)
    base = np.array([full.boot(i) for i in idx], float) if idx is not None else None
    out: dict[int, dict[str, Any]] = {}
    for k, q in enumerate(ev.questions):
        keep_k = keep.copy()
        keep_k[k] = False
        st = agreement_stat(ev, subset_scores(ev, keep_k), mask)
        delta = NAN if _isnan(full.value) or _isnan(st.value) else full.value - st.value
        ci, reason = [NAN, NAN], why
        if base is not None and not _isnan(delta):
            ci = percentile_ci(base - np.array([st.boot(i) for i in idx], float))
            reason = None if not _isnan(ci[0]) else "no interval: too few varied groups"
        for qid in q["ids"]:
            out[qid] = {"loo_delta": delta, "loo_ci": ci,
                        "loo_reason": reason if _isnan(delta) or _isnan(ci[0]) else None}
            if _isnan(delta):
                out[qid]["loo_reason"] = full.reason or st.reason or "undefined"
    return out, {"statistic": STATISTIC[ev.kind], "evidence": ev.kind, "part": part,
                 "value": full.value, "n_items": full.n_items, "n_groups": full.n_groups,
                 "n_systems": full.n_systems, "reason": full.reason}


def question_agreement(db: sqlite_utils.Database, run_id: int, split: str = "dev",
                       n_boot: int = N_BOOT, seed: int = 0, max_items: int = 20
                       ) -> dict[str, Any]:
    """Per question of the run (see the module doc) on ``split`` (dev / heldout / all; a task
    without a split reads all groups and says so): ``{"run", "task", "version", "judge",
    "split", "questions": [...], "headline", "human_answers", "loo"}``."""
    check_which(split)
    run = _run(db, run_id)
    task = run["task"]
    part = split if members(db, task) is not None else "all"
    keep = _part_filter(db, task, part)
    ans = keep(run_answers(db, run_id))
    lab = human_labels(db, run["task_id"])
    qinfo = {q["question_id"]: q for q in _questions(db, sorted(set(ans["question_id"])))}
    loo, loo_meta = _loo(db, run_id, part, n_boot, seed)
    merged = ans[ans["verdict"].isin(["yes", "no"])].merge(
        lab, on=["item_pk", "question_id"], how="inner")
    decided = merged.dropna(subset=["human"])
    out_q = []
    for qid in sorted(qinfo, key=lambda q: (qinfo[q]["dimension"] or "", q)):
        qa = ans[ans["question_id"] == qid]
        valid = qa[qa["verdict"].isin(["yes", "no"])]
        yes_rate = float((valid["verdict"] == "yes").mean()) if len(valid) else NAN
        sep, n_pairs = separated_pairs(valid) if len(valid) else (0, 0)
        d = decided[decided["question_id"] == qid]
        fig = agreement_figures(pd.DataFrame({"group": d["group"], "judge": d["verdict"],
                                              "human": d["human"]}), n_boot, seed)
        tied = int(((merged["question_id"] == qid) & merged["human"].isna()).sum())
        cons = d[d["consensus"]]
        spl = d[(d["n_annotators"] >= 2) & ~d["consensus"]]
        dis = d[d["verdict"] != d["human"]].head(max_items)
        out_q.append({
            "question_id": int(qid), "text": qinfo[qid]["text"],
            "dimension": qinfo[qid]["dimension"], "n": fig["n"],
            "agreement": fig["agreement"], "kappa": fig["kappa"], "ci": fig["ci"],
            "kappa_ci": fig["kappa_ci"], "confusion": fig["confusion"],
            **{k: fig[k] for k in fig if k.startswith(CONFUSION_KEYS)},
            "reason": fig["reason"], "ci_reason": fig["ci_reason"], "n_groups": fig["n_groups"],
            "agreement_consensus": _share(cons), "n_consensus": int(len(cons)),
            "agreement_split": _share(spl), "n_split": int(len(spl)), "n_no_majority": tied,
            "disagreements": [{"item_pk": int(r.item_pk), "item_id": r.item_id,
                               "judge": r.verdict, "human": r.human}
                              for r in dis.itertuples()],
            "yes_rate": yes_rate, "n_answers": int(len(valid)),
            "saturated": (None if _isnan(yes_rate) else "always yes" if yes_rate >= SATURATED
                          else "always no" if yes_rate <= 1 - SATURATED else None),
            "separates": sep, "n_pairs": n_pairs,
            **loo.get(qid, {"loo_delta": NAN, "loo_ci": [NAN, NAN],
                            "loo_reason": loo_meta.get("reason") or "no agreement to leave "
                                                                      "this question out of"})})
    return {"run": run_id, "task": task, "version": run["version"], "judge": run["judge_spec"],
            "method": run["method"], "split": {**split_note(db, task, part), "asked": split},
            "questions": out_q, "headline": headline_of(decided, n_boot, seed),
            "human_answers": _human_summary(db, run, merged), "loo": loo_meta}


def _share(d: pd.DataFrame) -> float:
    return float((d["verdict"] == d["human"]).mean()) if len(d) else NAN


def headline_of(decided: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0) -> dict[str, Any]:
    """"agrees with people on x % of decisions [CI], n answers" over every question."""
    fig = agreement_figures(pd.DataFrame({"group": decided["group"],
                                          "judge": decided["verdict"],
                                          "human": decided["human"]}), n_boot, seed)
    if fig["n"] == 0:
        text = "no human answers to this run's questions yet"
    else:
        f = Figure(fig["agreement"], fig["ci"])
        ci = "" if f.weak else " " + f.ci_text(0, percent=True)
        text = (f"agrees with people on {f.value_text(0, percent=True)} of decisions{ci}, "
                f"{fig['n']} answers ({fig['n_groups']} groups)")
        if fig["ci_reason"]:
            text += f" — {fig['ci_reason']}"
    return {"agreement": fig["agreement"], "ci": fig["ci"], "n": fig["n"],
            "n_groups": fig["n_groups"], "kappa": fig["kappa"], "ci_reason": fig["ci_reason"],
            "text": text}


def _human_summary(db: sqlite_utils.Database, run: dict[str, Any], merged: pd.DataFrame
                   ) -> dict[str, Any]:
    jobs = rows(db, "SELECT j.id, j.name FROM annotation_job j WHERE j.task_id = ? AND "
                    "j.checklist_version_id = ? ORDER BY j.id DESC",
                [run["task_id"], run["checklist_version_id"]])
    n = int(len(merged))  # (item, question) decisions people answered
    how = None if n else (
        "No one has answered this run's questions yet. Draw a sample on the Align page (stratified by "
        f"group and system, default {DEFAULT_SAMPLE} items) and assign it to annotators; they "
        "answer on the Annotate page, and per-question agreement appears here as answers "
        "arrive. Until then, the figures below rest on the judge's answers (and the task's "
        "human scores, ratings or votes, where it has them) only.")
    return {"n_answers": int(merged["n_annotators"].sum()) if n else 0, "n_decisions": n,
            "n_items": int(merged["item_pk"].nunique()) if n else 0,
            "jobs": jobs, "how_to_start": how}


def version_headlines(db: sqlite_utils.Database, task: str, n_boot: int = N_BOOT
                      ) -> list[dict[str, Any]]:
    """Per completed run of a frozen version: its headline agreement with people (all
    groups), newest version first."""
    out = []
    tid = rows(db, "SELECT id FROM task WHERE name = ?", [task])
    if not tid:
        raise NotFound(f"no task {task!r}")
    lab = human_labels(db, tid[0]["id"]).dropna(subset=["human"])
    for r in version_runs(db, task):
        ans = run_answers(db, r["run"])
        d = ans[ans["verdict"].isin(["yes", "no"])].merge(lab, on=["item_pk", "question_id"])
        out.append({"version": r["version"], "run": r["run"], "judge": r["judge"],
                    "method": r["method"], **headline_of(d, n_boot)})
    return sorted(out, key=lambda x: (-x["version"], -x["run"]))


def start_sample(db: sqlite_utils.Database, run_id: int, annotators: list[str],
                 overlap: int = 2, n: int = DEFAULT_SAMPLE, seed: int = 0,
                 name: str = "", coordinator: str = "") -> tuple[int, bool]:
    """Draw :func:`stratified_sample` of the run's items and assign it as an annotation job on
    the run's checklist version: ``(job id, created)`` (pressing twice reuses the job)."""
    run = _run(db, run_id)
    if run["version"] is None:
        raise ValueError(f"run {run_id} has no frozen checklist version to annotate")
    its = run_answers(db, run_id).drop_duplicates("item_pk")
    if its.empty:
        raise ValueError(f"run {run_id} stored no answer to a question")
    pick = stratified_sample(its.to_dict("records"), int(n), seed)
    return create_job_once(db, run["task"], annotators, int(overlap), len(pick),
                           run["version"], f"align run #{run_id}: stratified by group and system",
                           None, seed, name or f"align run #{run_id}", coordinator=coordinator,
                           item_ids=pick)



def align_rows(res: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-question table a page shows of :func:`question_agreement` (one row per
    question; blanks carry their reason in ``why``)."""
    out = []
    for q in res["questions"]:
        c = q["confusion"]
        tied = q.get("n_no_majority", 0)
        no_majority = (f"no majority: the annotators disagreed on every item ({tied})"
                       if tied and not q["n"] else
                       f"{tied} item(s) without a majority left out" if tied else None)
        why = "; ".join(dict.fromkeys(x for x in (
            no_majority, q["reason"] if q["n"] else None, q["ci_reason"] if q["n"] else None,
            *(q.get(f"{k}_reason") for k in CONFUSION_KEYS if q["n"]), q["loo_reason"]) if x))
        out.append({  # the decisions first, their intervals and counts after
            "question": q["text"], "dimension": q["dimension"], "answers": q["n"],
            "agreement": q["agreement"], "κ": q["kappa"], "φ": q["phi"], "FPR": q["fpr"],
            "FNR": q["fnr"], "κ–φ gap": q["kappa_phi_gap"], "yes-rate": q["yes_rate"],
            "saturated": q["saturated"] or "",
            "separates": f"{q['separates']} of {q['n_pairs']}", "LOO Δ": q["loo_delta"],
            "why": why,  # before the intervals and counts: on screen at 1440 px
            "agreement CI": fmt_ci(q["ci"]), "κ CI": fmt_ci(q["kappa_ci"]),
            "φ CI": fmt_ci(q["phi_ci"]), "FPR CI": fmt_ci(q["fpr_ci"]),
            "FNR CI": fmt_ci(q["fnr_ci"]), "κ–φ gap CI": fmt_ci(q["kappa_phi_gap_ci"]),
            "LOO CI": fmt_ci(q["loo_ci"]),
            "judge/people yes·yes yes·no no·yes no·no":
                f"{c['yes/yes']} · {c['yes/no']} · {c['no/yes']} · {c['no/no']}",
            "consensus items": (f"{q['agreement_consensus']:.2f} (n={q['n_consensus']})"
                                if q["n_consensus"] else "—"),
            "split items": (f"{q['agreement_split']:.2f} (n={q['n_split']})"
                            if q["n_split"] else "—"),
            "question_id": q["question_id"]})
    return out


def loo_caption(res: dict[str, Any]) -> str:
    loo = res["loo"]
    if not loo.get("statistic"):
        return f"Leave-one-out: {loo['reason']}"
    return (f"LOO Δ = the version's {loo['statistic']} on {loo['part']} groups with every "
            f"question ({loo['value']:.3f}; {loo['n_items']} items, {loo['n_groups']} groups, "
            f"{loo['n_systems']} systems) minus the same without the question: positive = the "
            "question helps. Intervals resample groups (paired).")
