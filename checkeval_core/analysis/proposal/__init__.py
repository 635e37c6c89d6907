"""Propose a revised checklist from evidence: chosen on dev groups, proven on held-out groups.

A researcher improving a checklist looks at the questions, drops the ones that carry no signal
and keeps the ones that agree with people. This package does that from the *stored* answers of
one or more completed runs of one checklist version, so the revised checklist's agreement is
known before any new judge call (a subset of the questions needs none).

**Split discipline.** Everything that is chosen — which questions stay, their weights — reads
only the *dev* part of the task's split (:mod:`checkeval_core.task_split`); the held-out
part is read once, at the end, to report the agreement before → after. A task without a split
is refused. In the **ranking setting** (the evidence is a reference rating of the systems and
the split is by system) the questions are chosen on the dev systems' answers, labelled with
those systems' ratings (list-level labels, RocketEval's supervised idea), and the ranking of
the held-out systems is reported. Per-query questions are only answered on their own query, so
choosing them needs the same queries on both sides; no held-out system's answer or rating is
read while choosing. One question asked with the same text of several queries is one question:
chosen on dev queries, it applies to held-out queries too.

The steps, one module each in this package (:func:`propose` puts them together):

* :mod:`~checkeval_core.analysis.proposal.evidence` — the runs' answers, the human evidence,
  the parts, the scores of a question subset;
* :mod:`~checkeval_core.analysis.proposal.selection` — which questions stay (dev only);
* :mod:`~checkeval_core.analysis.proposal.weights` — their weights (optional, dev only);
* :mod:`~checkeval_core.analysis.proposal.figures` — agreement before → after per part, with
  intervals, Δ, minimum detectable effect and verdict;
* :mod:`~checkeval_core.analysis.proposal.new_questions` — new questions (only when asked),
  their cost first.

**Review**: :func:`checkeval_core.checklists.review.to_review` queues the proposal (dropped
questions back to ``proposed`` with their evidence as the reason, new questions ``proposed``,
each with a line in the question's review history) in one transaction; nothing is applied
until a person decides on the Checklist review page and freezes a version.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sqlite_utils

from checkeval_core.analysis.proposal.evidence import (
    Evidence,
    ProposalError,
    load_evidence,
    question_ref,
    subset_scores,
)
from checkeval_core.analysis.proposal.figures import part_figures
from checkeval_core.analysis.proposal.new_questions import (
    generate_new_questions,
    new_question_plan,
)
from checkeval_core.analysis.proposal.selection import (
    EPSILON,
    INVALID_SHARE,
    SIMILARITY,
    VARY_EPS,
    select,
    too_few_dev,
)
from checkeval_core.analysis.proposal.weights import RIDGE, fit_weights
from checkeval_core.analysis.version_readers import version_runs
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.runs.registry import per_question_methods
from checkeval_core.stats.bootstrap import PART_WORDS
from checkeval_core.stats.ranking import DEFAULT_TIE_MARGIN
from checkeval_core.stats.values import fmt, fmt_ci

N_BOOT = 200


def propose(db: sqlite_utils.Database, run_ids: list[int], evidence: str | None = None,
            weights: bool = False, epsilon: float = EPSILON, n_boot: int = N_BOOT,
            seed: int = 0, new_questions: int = 0, judge: str | None = None,
            judge_obj: Any = None, tie_margin: float = DEFAULT_TIE_MARGIN) -> dict[str, Any]:
    """The proposal: ``{"task", "version", "runs", "evidence", "setting", "kept",
    "dropped", "weights", "weights_reason", "dev", "heldout", "notes", "selection"}``.

    ``kept`` / ``dropped[*].question``: ``{"id", "text", "dimension"[, "group_id"]}``;
    ``dropped[*]``: also ``reason`` (the evidence) and ``rule``; ``weights``: ``{question
    id: weight}`` or None; ``dev`` / ``heldout``: :func:`part_figures`. ``new_questions > 0``
    adds ``new_questions``: :func:`new_question_plan` (what they would cost), and with a
    ``judge`` also ``questions`` (:func:`generate_new_questions`) — nothing is asked without
    a judge."""
    ev = load_evidence(db, run_ids, evidence)
    ev.tie_margin = float(tie_margin)
    keep, dropped, notes = select(ev, epsilon=epsilon)
    w, w_reason = (fit_weights(ev, keep) if weights else (None, "no weights asked for"))
    if weights and too_few_dev(ev):
        w, w_reason = None, too_few_dev(ev)
    before = subset_scores(ev, np.ones(len(ev.questions), bool))
    after = subset_scores(ev, keep, w)
    parts = {p: part_figures(ev, before, after, ev.items[p].to_numpy(bool), n_boot, seed,
                             PART_WORDS.get(p, p))
             for p in ("dev", "heldout")}
    if weights and w is not None:
        parts["dev"]["note"] = "after: weights fitted on these dev items (in-sample)"
    out: dict[str, Any] = {
        "task": ev.task, "version": ev.version, "runs": ev.runs, "evidence": ev.kind,
        "setting": "ranking (dev systems → held-out systems)" if ev.ranking else
        "groups (dev groups → held-out groups)",
        "kept": [question_ref(ev, k) for k in np.where(keep)[0]],
        "dropped": dropped,
        "weights": None if w is None else {str(ev.questions[k]["id"]): float(w[k])
                                           for k in np.where(keep)[0]},
        "weights_reason": w_reason, **parts, "notes": notes,
        "selection": {"invalid_share": INVALID_SHARE, "vary_eps": VARY_EPS,
                      "similarity": SIMILARITY, "epsilon": epsilon,
                      "method": "greedy backward drop-one on dev agreement",
                      "ridge": RIDGE if weights else None}}
    out["rerun"] = rerun_cost(ev, keep)
    if new_questions:
        plan = new_question_plan(db, ev, keep, w, new_questions)
        if judge or judge_obj is not None:
            plan["questions"] = generate_new_questions(db, ev, plan, judge or "fake", judge_obj)
        out["new_questions"] = plan
    elif judge:
        raise ProposalError("--judge writes new questions: give --new-questions N too")
    return out


def rerun_cost(ev: Evidence, keep: np.ndarray) -> dict[str, Any]:
    """What a run of the revised version (same judge, same items) asks the judge for at most,
    the kept questions' earlier answers coming from the response cache: ``{"method",
    "judge_calls", "reused_answers", "note"}`` (items with identical texts share cached
    answers, so a run may ask fewer). A method asking one question per prompt (``rocketeval``)
    keeps a kept question's prompt unchanged (0 calls); a ``grouped`` method of the registry
    (``checkeval``) asks a sub-dimension's questions in one prompt, so every prompt of a
    sub-dimension that lost a question is new."""
    answered = ev.answered > 0
    reused = int(answered[:, keep].sum())
    method = ev.methods[0] if ev.methods else None
    grouped = method_entry(method).grouped if method else True
    calls = 0
    if grouped:
        units = [(q["dimension"], q["sub"], q["group_id"]) for q in ev.questions]
        changed = {u for u, k in zip(units, keep) if not k}
        cols = np.array([u in changed for u in units]) & keep
        reused -= int(answered[:, cols].sum())
        for u in changed:
            m = np.array([x == u for x in units]) & keep
            calls += int(answered[:, m].any(1).sum())
    return {"method": method, "judge_calls": calls, "reused_answers": reused,
            "note": "same judge and options as the run(s): kept answers come from the response "
                    "cache" + ("; a prompt holds a sub-dimension's questions, so a sub-dimension "
                               "that lost one is asked again" if grouped else
                               "; new questions add their own calls")}


# -- what a page shows ------------------------------------------------------------------------
def proposal_runs(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    """Completed Yes/No runs of a frozen version of ``task`` (newest first), with a label."""
    return [{**r, "label": f"#{r['run']} · v{r['version']} · {r['judge']} · {r['method']}"}
            for r in version_runs(db, task) if r["method"] in per_question_methods()]


_num = fmt


def display_rows(proposal: dict[str, Any]) -> dict[str, Any]:
    """The proposal as table rows: ``figures`` (dev and held-out before → after, each with N
    and interval or why none), ``dropped`` (question, rule, reason), ``kept``, ``cost``
    (a sentence on the new questions, or None) and ``nothing_dropped`` (the sentence for an
    empty drop list, None when the notes already say why nothing is dropped)."""
    figs = []
    for part, name in (("dev", "dev (chosen here)"), ("heldout", "held-out (reported only)")):
        f = proposal[part]

        def ci(k: str, f: dict[str, Any] = f) -> str:
            return fmt_ci(f["ci"][k], reason=f["ci_reason"])

        figs.append({"part": name, "before": _num(f["before"]), "95% CI before": ci("before"),
                     "after": _num(f["after"]), "95% CI after": ci("after"),
                     "Δ": _num(f["delta"]), "95% CI of Δ (paired)": ci("delta"),
                     "verdict": f.get("verdict") or "",
                     "items": f["n_items"], "groups": f["n_groups"], "systems": f["n_systems"],
                     "note": f["reason"] or f.get("note") or ""})
    nq = proposal.get("new_questions")
    rc = proposal["rerun"]
    rerun = (f"A {rc['method']} run of the revised version on the same items asks the judge at "
             f"most {rc['judge_calls']} time(s) and reuses {rc['reused_answers']} stored "
             f"answer(s) ({rc['note']}).")
    cost = None
    if nq:
        cost = (f"{nq['n']} new question(s) from dev disagreements: {nq['generation_calls']} "
                f"call(s) to write them, then {nq['judge_calls']} judge call(s) "
                f"{nq['judge_calls_note']}." + (f" {nq['reason']}." if nq["reason"] else ""))
    return {"figures": figs,
            "dropped": [{"id": d["question"]["id"], "question": d["question"]["text"],
                         "dimension": d["question"]["dimension"], "rule": d["rule"],
                         "reason": d["reason"]} for d in proposal["dropped"]],
            "kept": [{"id": q["id"], "question": q["text"], "dimension": q["dimension"],
                      "weight": (proposal["weights"] or {}).get(str(q["id"]))}
                     for q in proposal["kept"]],
            "new": [{"question": q["text"], "dimension": q["dimension"],
                     "problem": q["problem"] or ""} for q in (nq or {}).get("questions", [])],
            "cost": cost, "rerun": rerun,
            # said once: when no proposal may be made, its note already says every question
            # is kept, and "every question … helps on dev" would not be true
            "nothing_dropped": None if proposal["dropped"] or any(
                n.startswith("no proposal") for n in proposal["notes"]) else
            "Nothing to drop: every question varies, is answered and helps on dev."}
