"""Propose a revised checklist from evidence: chosen on dev groups, proven on held-out groups.

A researcher improving a checklist looks at the questions, drops the ones that carry no signal
and keeps the ones that agree with people. This module does that from the *stored* answers of
one or more completed runs of one checklist version, so the revised checklist's agreement is
known before any new judge call (a subset of the questions needs none).

**Split discipline.** Everything that is chosen — which questions stay, their weights — reads
only the *dev* part of the task's split (:mod:`checkeval_core.analysis.split`); the held-out
part is read once, at the end, to report the agreement before → after. A task without a split
is refused. Parts: an item is in a part when its group is (and, on a split by system, its
system is too) — except in the **ranking setting** (the evidence is a reference rating of the
systems and the split is by system), where a part is its *systems* on every query: the
questions are chosen on the dev systems' answers, labelled with those systems' ratings
(list-level labels, RocketEval's supervised idea), and the ranking of the held-out systems is
reported. Per-query questions are only answered on their own query, so choosing them needs the
same queries on both sides; no held-out system's answer or rating is read while choosing. One
question asked with the same text of several queries (a ``"*"`` row of a per-query checklist,
RocketEval's fixed list) is one question (:func:`shared_columns`): chosen on dev queries, it
applies to held-out queries too.

**Evidence** (first one the task has, or ``evidence=``): ``human_scores`` — mean over
dimensions of the sample-level (per group) Spearman of the score with the human score;
``reference_ratings`` — Spearman of the systems' mean scores with their rating (Kendall beside
it); ``preferences`` — pair accuracy against human pairwise votes (a judge tie is a miss).

**Scores** of a question subset: per item and dimension, the (weighted) mean of the answers'
values (p(Yes) when stored, else 1/0 from the verdict; invalid answers left out) — the run's
``mean_p_yes`` aggregation when every question is kept. Several runs are averaged per
(item, question).

**Selection, in this order, on dev answers only:**

1. *mostly invalid*: more than :data:`INVALID_SHARE` of its dev answers are invalid;
2. *never varies*: one verdict on every dev answer and p(Yes) spanning less than
   :data:`VARY_EPS`;
3. *near-copy*: character-sequence similarity ≥ :data:`SIMILARITY`
   (:func:`checkeval_core.checklists.filtering.similar_pairs`) to another question of the same
   dimension (per-query: of the same query); the one whose own dev agreement is lower goes;
4. *lowers dev agreement*: greedy backward elimination — remove the question whose removal
   raises dev agreement most, while that raise exceeds :data:`EPSILON`; every dimension (and
   query) keeps at least one question.

**Weights** (optional): non-negative ridge per dimension on dev items — NNLS on the within-group
centred answers stacked over ``sqrt(λ)·I`` (λ = :data:`RIDGE` × items), target the human score
or the system's rating centred within its group; from pairwise votes, NNLS of the vote (±1) on
the two answers' difference per question over dev pairs. In the ranking setting per-query questions
get weights per query, fitted on the dev systems' answers to that query (RocketEval's per-query
supervised predictor, labels: the systems' ratings). Otherwise weights need questions shared by
the groups (a held-out query has no dev answer to fit its own on) and human scores or ratings;
without them, null with the reason.

**New questions** (only when asked): where the kept questions order a dev pair of answers
against the evidence (largest label gap first), a judge is shown the better- and worse-rated
answer and the kept questions and writes one question (prompt in
:mod:`checkeval_core.prompts.proposal`). Their cost — generation calls, then judge calls on
the task's items — is reported before anything is asked.

**Review**: :func:`to_review` queues the proposal (dropped questions back to ``proposed`` with
their evidence as the reason, new questions ``proposed``) in one transaction; nothing is
applied until a person decides on the Checklist review page and freezes a version.

Every figure carries its items, groups (and systems) and a 95 % percentile bootstrap interval
resampling groups; the change after − before has a paired interval (same resampled groups).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import sqlite_utils
from scipy import stats
from scipy.optimize import nnls

from checkeval_core.analysis.split import in_part, members
from checkeval_core.analysis.versions import evidence_kinds
from checkeval_core.annotation.preferences import ratings
from checkeval_core.checklists.filtering import similar_pairs
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.runs.registry import per_question_methods
from checkeval_core.runs.score_math import answer_value
from checkeval_core.stats.bootstrap import (
    PART_WORDS,
    enough_groups,
    interval_reason,
    minimum,
    paired_group_bootstrap,
    percentile_ci,
    verdict,
)
from checkeval_core.stats.ranking import DEFAULT_TIE_MARGIN, judge_outcome
from checkeval_core.stats.values import fmt, isnan
from checkeval_core.store import NotFound, rows, task_id

NAN = float("nan")
INVALID_SHARE = 0.5
VARY_EPS = 0.05
SIMILARITY = 0.75
EPSILON = 0.005
RIDGE = 0.1
N_BOOT = 200
EVIDENCE = ("human_scores", "reference_ratings", "preferences")
STATISTIC = {"human_scores": "Spearman with human scores (sample level, mean over dimensions)",
             "reference_ratings": "Spearman of system mean scores with the reference rating",
             "preferences": "pair accuracy against human pairwise votes"}


class ProposalError(ValueError):
    """A proposal that cannot be made (the message says why and what to do)."""


# -- what the runs stored ----------------------------------------------------------------------
@dataclass
class Evidence:
    """The runs' answers as an items × questions matrix, and the task's human evidence."""

    task: str
    version: int
    runs: list[int]
    kind: str
    ranking: bool
    items: pd.DataFrame                 # item_pk, group, system, dev, heldout (row order of V)
    questions: list[dict[str, Any]]     # id, text, dimension, group_id (column order of V)
    V: np.ndarray                        # answer values, NaN = not answered or invalid
    answered: np.ndarray                 # items × questions: number of answers stored
    invalid: np.ndarray                  # items × questions: number of invalid answers
    verdicts: dict[tuple[int, int], set[str]]
    human: dict[str, np.ndarray] = field(default_factory=dict)   # dimension → per item
    ratings: dict[str, float] = field(default_factory=dict)
    pairs: pd.DataFrame | None = None    # a, b (row indices), winner, group
    methods: list[str] = field(default_factory=list)
    tie_margin: float = DEFAULT_TIE_MARGIN  # preferences: a score gap below this is a tie


def _runs(db: sqlite_utils.Database, run_ids: list[int]) -> list[dict[str, Any]]:
    if not run_ids:
        raise ProposalError("give at least one run (--run RUN_ID)")
    out = []
    for rid in dict.fromkeys(int(r) for r in run_ids):
        r = rows(db, "SELECT r.id, r.status, r.method, r.checklist_version_id AS vid, t.name AS "
                     "task, v.version FROM run r JOIN task t ON t.id = r.task_id LEFT JOIN "
                     "checklist_version v ON v.id = r.checklist_version_id WHERE r.id = ?", [rid])
        if not r:
            raise NotFound(f"no run {rid}")
        r = r[0]
        if r["status"] != "completed":
            raise ProposalError(f"run {rid} is {r['status']}: a proposal reads completed runs "
                                "only")
        if r["method"] not in per_question_methods():
            raise ProposalError(f"run {rid} uses method {r['method']}: a proposal needs Yes/No "
                                "answers to checklist questions "
                                f"({' or '.join(per_question_methods())})")
        out.append(r)
    if len({r["task"] for r in out}) > 1 or len({r["vid"] for r in out}) > 1:
        raise ProposalError("the runs must be of one task and one checklist version; got "
                            + ", ".join(f"run {r['id']}: {r['task']} v{r['version']}"
                                        for r in out))
    return out


def shared_columns(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One column per question, except that per-query copies of one question — the same text
    and dimension asked of two or more queries (a ``"*"`` row, RocketEval's fixed list) — are
    one column: each item answers only its own query's copy, so the copies never collide, and
    a choice made on dev queries then applies to held-out queries too. A column keeps the
    first copy's id in ``id`` and every copy's in ``ids``; a shared column's ``group_id`` is
    ``""``. Order: by first id."""
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        if q["group_id"]:
            by_key[(q["dimension"], q["text"])].append(q)
    shared = {k: v for k, v in by_key.items() if len({q["group_id"] for q in v}) > 1}
    out, seen = [], set()
    for q in sorted(questions, key=lambda q: q["id"]):
        key = (q["dimension"], q["text"])
        if q["group_id"] and key in shared:
            if key in seen:
                continue
            seen.add(key)
            out.append({**q, "group_id": "", "ids": [c["id"] for c in shared[key]]})
        else:
            out.append({**q, "ids": [q["id"]]})
    return out


def load_evidence(db: sqlite_utils.Database, run_ids: list[int],
                  evidence: str | None = None) -> Evidence:
    """Read the runs' answers and the task's evidence; refuse a task without a split."""
    runs = _runs(db, run_ids)
    task = runs[0]["task"]
    m = members(db, task)
    if m is None:
        raise ProposalError(f"task {task!r} has no dev / held-out split: a proposal is chosen on "
                            f"dev groups and proven on held-out ones — make one with "
                            f"`checkeval split --task {task}` (or on the Versions page)")
    groups, systems = m
    kinds = [k for k in evidence_kinds(db, task) if k in EVIDENCE]
    if evidence is not None:
        if evidence not in EVIDENCE:
            raise ProposalError(f"--evidence {evidence!r}: use {', '.join(EVIDENCE)}")
        if evidence not in kinds:
            raise ProposalError(f"task {task!r} has no {evidence.replace('_', ' ')}")
        kind = evidence
    elif kinds:
        kind = kinds[0]
    else:
        raise ProposalError(f"task {task!r} has no human evidence a proposal can fit on: "
                            "import human scores, pairwise preferences or reference ratings")
    ranking = kind == "reference_ratings" and systems is not None
    ids = [r["id"] for r in runs]
    marks = ",".join("?" * len(ids))
    ans = rows(db, f"SELECT a.item_id, a.question_id, a.verdict, a.p_yes FROM answer a WHERE "
                   f"a.run_id IN ({marks}) AND a.unit = '' AND a.question_id != 0", ids)
    if not ans:
        raise ProposalError(f"run(s) {', '.join(map(str, ids))} stored no answer to a question")
    qids = sorted({a["question_id"] for a in ans})
    qrows = {q["id"]: q for q in rows(
        db, f"SELECT q.id, q.text, q.group_id, d.name AS dimension, s.name AS sub FROM question "
            f"q LEFT JOIN dimension d ON d.id = q.dimension_id LEFT JOIN sub_dimension s ON "
            f"s.id = q.sub_dimension_id WHERE q.id IN ({','.join('?' * len(qids))})", qids)}
    items = pd.DataFrame(rows(db, f"SELECT DISTINCT i.id AS item_pk, i.group_id AS \"group\", "
                                  f"i.system_id AS system FROM item i JOIN answer a ON "
                                  f"a.item_id = i.id WHERE a.run_id IN ({marks}) ORDER BY i.id",
                              ids))

    def part(g: str, s: str, which: str) -> bool:
        if ranking:
            return systems.get(str(s)) == which  # type: ignore[union-attr]
        return in_part(g, s, which, groups, systems)

    items["dev"] = [part(g, s, "dev") for g, s in zip(items["group"], items["system"])]
    items["heldout"] = [part(g, s, "heldout") for g, s in zip(items["group"], items["system"])]
    row = {pk: k for k, pk in enumerate(items["item_pk"])}
    cols = shared_columns([{"id": q, "text": qrows.get(q, {}).get("text", f"#{q}"),
                            "dimension": qrows.get(q, {}).get("dimension") or "overall",
                            "group_id": qrows.get(q, {}).get("group_id") or "",
                            "sub": qrows.get(q, {}).get("sub") or ""} for q in qids])
    col = {q: k for k, c in enumerate(cols) for q in c["ids"]}
    S = np.zeros((len(items), len(cols)))
    answered = np.zeros_like(S)
    invalid = np.zeros_like(S)
    verdicts: dict[tuple[int, int], set[str]] = defaultdict(set)
    for a in ans:
        r, c = row[a["item_id"]], col[a["question_id"]]
        answered[r, c] += 1
        v = answer_value(a["verdict"], a["p_yes"])
        if v is None:
            invalid[r, c] += 1
        else:
            S[r, c] += v
            verdicts[(r, c)].add(a["verdict"])
    valid = answered - invalid
    with np.errstate(invalid="ignore", divide="ignore"):
        V = np.where(valid > 0, S / np.maximum(valid, 1), NAN)
    ev = Evidence(task, runs[0]["version"] or 0, ids, kind, ranking, items, cols, V, answered,
                  invalid, verdicts, methods=sorted({r["method"] for r in runs}))
    if kind == "human_scores":
        for r in db.execute(f"SELECT h.item_id, h.dimension, h.value FROM human_score h WHERE "
                            f"h.annotator = '' AND h.item_id IN (SELECT DISTINCT item_id FROM "
                            f"answer WHERE run_id IN ({marks}))", ids):
            ev.human.setdefault(r[1], np.full(len(items), NAN))[row[r[0]]] = float(r[2])
    elif kind == "reference_ratings":
        # the first source (arena_elo first), read through the ratings' owner
        ev.ratings = {r["system_id"]: float(r["rating"]) for r in ratings(db, task)}
    else:
        prefs = [(row.get(p["item_a"]), row.get(p["item_b"]), p["winner"], p["group_id"])
                 for p in rows(db, "SELECT item_a, item_b, winner, group_id FROM preference "
                                   "WHERE task_id = (SELECT id FROM task WHERE name = ?) AND "
                                   "winner != 'tie'", [task])]
        ev.pairs = pd.DataFrame([p for p in prefs if p[0] is not None and p[1] is not None],
                                columns=["a", "b", "winner", "group"])
    return ev


# -- scores of a question subset --------------------------------------------------------------
def subset_scores(ev: Evidence, keep: np.ndarray, weights: np.ndarray | None = None
                  ) -> dict[str, np.ndarray]:
    """Per dimension, each item's (weighted) mean of the kept questions' values (NaN: none)."""
    w = np.where(keep, 1.0 if weights is None else weights, 0.0)
    out = {}
    for dim in dict.fromkeys(q["dimension"] for q in ev.questions):
        cols = np.array([q["dimension"] == dim for q in ev.questions]) & keep
        valid = ~np.isnan(ev.V[:, cols])
        num = (np.nan_to_num(ev.V[:, cols]) * w[cols]).sum(1)
        den = (valid * w[cols]).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[dim] = np.where(den > 0, num / np.where(den > 0, den, 1), NAN)
    return out


def _item_score(ev: Evidence, sc: dict[str, np.ndarray]) -> np.ndarray:
    """One score per item (mean over its dimensions) for rankings and preferences."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.column_stack(list(sc.values())), axis=1)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return NAN
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    return float(np.corrcoef(rx, ry)[0, 1])


@dataclass
class Stat:
    """One part's agreement: the value, per-group pieces to resample, and its N."""

    value: float
    boot: Any            # callable(index array over groups) → value
    n_items: int
    n_groups: int
    n_systems: int
    reason: str | None
    kendall: float = NAN


def _stat(ev: Evidence, sc: dict[str, np.ndarray], mask: np.ndarray) -> Stat:
    """The agreement of scores ``sc`` on the items of ``mask`` with the evidence."""
    items = ev.items
    # the resampling units: every group of the part, in one order for before and after
    groups = sorted(set(items["group"][mask]))
    if ev.kind == "human_scores":
        dims = [d for d in sc if d in ev.human]
        G = np.full((len(groups), len(dims)), NAN)
        used = np.zeros(len(items), bool)
        gcol = items["group"].to_numpy()
        for j, d in enumerate(dims):
            ok = mask & ~np.isnan(sc[d]) & ~np.isnan(ev.human[d])
            used |= ok
            for i, g in enumerate(groups):
                m = ok & (gcol == g)
                G[i, j] = _spearman(sc[d][m], ev.human[d][m])

        def agg(M: np.ndarray) -> float:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                per_dim = np.nanmean(M, axis=-2)
                return np.nanmean(per_dim, axis=-1)

        value = float(agg(G)) if G.size else NAN
        reason = None if not isnan(value) else (
            "no group with ≥ 2 scored items whose scores and human scores both vary")
        return Stat(value, lambda idx: agg(G[idx]), int(used.sum()),
                    len(set(gcol[used])), len(set(items["system"][used])), reason)
    score = _item_score(ev, sc)
    if ev.kind == "reference_ratings":
        sub = items[mask & ~np.isnan(score)].assign(score=score[mask & ~np.isnan(score)])
        table = sub.groupby(["group", "system"])["score"].mean().unstack("system")
        table = table.reindex(groups)
        systems = [s for s in table.columns if s in ev.ratings]
        T = table[systems].to_numpy(float)
        ref = np.array([ev.ratings[s] for s in systems])

        def rho(M: np.ndarray, kind: str = "spearman") -> float:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                means = np.nanmean(M, axis=0)
            if len(means) < 3 or np.isnan(means).any():
                return NAN
            if kind == "kendall":
                return float(stats.kendalltau(means, ref)[0])
            return _spearman(means, ref)

        value = rho(T) if T.size else NAN
        st = Stat(value, lambda idx: rho(T[idx]), len(sub), sub["group"].nunique(),
                  len(systems),
                  None if not isnan(value) else
                  f"needs ≥ 3 systems with a rating and a score in this part (n={len(systems)})")
        st.kendall = rho(T, "kendall") if T.size else NAN
        return st
    pairs = ev.pairs if ev.pairs is not None else pd.DataFrame(columns=["a", "b", "winner",
                                                                        "group"])
    p = pairs[[bool(mask[a] and mask[b] and not np.isnan(score[a]) and not np.isnan(score[b]))
               for a, b in zip(pairs["a"], pairs["b"])]]
    hits = np.array([judge_outcome(score[a], score[b], ev.tie_margin) == w
                     for a, b, w in zip(p["a"], p["b"], p["winner"])], dtype=float)
    gi = {g: k for k, g in enumerate(groups)}
    gcol = items["group"].to_numpy()
    H = np.zeros((len(groups), 2))
    for h, a in zip(hits, p["a"]):
        H[gi[gcol[a]]] += (h, 1)

    def acc(M: np.ndarray) -> float:
        tot = M[..., 1].sum(-1)
        return np.where(tot > 0, M[..., 0].sum(-1) / np.where(tot > 0, tot, 1), NAN)

    value = float(acc(H)) if len(p) else NAN
    used = set(p["a"]) | set(p["b"])
    return Stat(value, lambda idx: acc(H[idx]), len(used), int((H[:, 1] > 0).sum()),
                len(set(items["system"].iloc[list(used)])) if used else 0,
                None if len(p) else "no decisive human preference between two scored answers "
                                    "in this part")


def part_figures(ev: Evidence, before: dict[str, np.ndarray], after: dict[str, np.ndarray],
                 mask: np.ndarray, n_boot: int, seed: int,
                 where: str = "held-out") -> dict[str, Any]:
    """``{before, after, delta, n_items, n_groups, n_systems, ci: {before, after, delta},
    ci_reason, reason, mde, verdict}`` of one part (the paired interval resamples the same
    groups; ``mde`` and ``verdict`` of Δ as
    :func:`~checkeval_core.stats.bootstrap.delta_fields`, ``where`` naming the part)."""
    b, a = _stat(ev, before, mask), _stat(ev, after, mask)
    n_groups = max(b.n_groups, a.n_groups)
    n_units = len(set(ev.items["group"][mask]))
    ci = {"before": [NAN, NAN], "after": [NAN, NAN], "delta": [NAN, NAN]}
    ci_reason = interval_reason(n_groups, n_boot)
    pb = None
    if ci_reason is None and not (isnan(a.value) and isnan(b.value)):
        # resample every group of the part (one order for before and after), not only the
        # groups with a value: the same draw as the other figures of this part
        pb = paired_group_bootstrap(n_units, b.boot, a.boot, n_boot, seed, vectorised=False)
        ci = {"before": percentile_ci(pb.a), "after": percentile_ci(pb.b),
              "delta": pb.ci()}
    if ci_reason is None and any(isnan(x) for x in ci["after"] + ci["before"]):
        ci_reason = ("no interval: " + (a.reason or b.reason) if a.reason or b.reason else
                     "no interval: fewer than 2 resamples had a value")
    delta = NAN if isnan(a.value) or isnan(b.value) else a.value - b.value
    m = pb.mde() if pb is not None and not isnan(ci["delta"][0]) else NAN
    out = {"before": b.value, "after": a.value,
           "delta": delta,
           "n_items": max(a.n_items, b.n_items), "n_groups": n_groups,
           "n_systems": max(a.n_systems, b.n_systems), "ci": ci, "ci_reason": ci_reason,
           "reason": a.reason or b.reason, "statistic": STATISTIC[ev.kind], "mde": m,
           "verdict": verdict(delta, ci["delta"], m, n_groups, where, ci_reason)}
    if ev.kind == "reference_ratings":
        out["kendall"] = {"before": b.kendall, "after": a.kendall}
    return out


# -- the selection ----------------------------------------------------------------------------
def _unit(q: dict[str, Any]) -> tuple[str, str]:
    """What must keep ≥ 1 question, and within which near-copies are compared."""
    return (q["dimension"], q["group_id"])


def _fmt(x: float) -> str:
    return "undefined" if isnan(x) else f"{x:.3f}"


def too_few_dev(ev: Evidence) -> str | None:
    """Why no proposal (no drop, no weights) may be made: the answered dev items come from
    fewer groups than the floor's :data:`~checkeval_core.stats.bootstrap.MIN_GROUPS`."""
    answered_dev = ev.items["dev"].to_numpy(bool) & (ev.answered.sum(1) > 0)
    n = int(ev.items["group"][answered_dev].nunique())
    if enough_groups(n):
        return None
    return (f"no proposal: the dev answers come from {n} groups (documents / contexts / "
            f"queries), fewer than the {minimum()} a proposal needs — every question is kept")


def select(ev: Evidence, epsilon: float = EPSILON, similarity: float = SIMILARITY,
           invalid_share: float = INVALID_SHARE, vary_eps: float = VARY_EPS
           ) -> tuple[np.ndarray, list[dict[str, Any]], list[str]]:
    """``(keep mask, dropped [{question, reason, rule}], notes)`` from dev answers only.

    Nothing is dropped when the answered dev items come from fewer than the floor's
    :data:`~checkeval_core.stats.bootstrap.MIN_GROUPS` groups (the small-sample rule: no
    proposal from a handful of documents); ``notes`` says so."""
    dev = ev.items["dev"].to_numpy(bool)
    nq = len(ev.questions)
    keep = np.ones(nq, bool)
    dropped: list[dict[str, Any]] = []
    notes: list[str] = []
    few = too_few_dev(ev)
    if few:
        notes.append(few)
        return keep, dropped, notes
    dev_answers = ev.answered[dev].sum(0)
    no_dev = [k for k in range(nq) if dev_answers[k] == 0]
    if no_dev:
        notes.append(f"{len(no_dev)} question(s) have no dev answer (per-query questions of "
                     "held-out queries): kept as they are, nothing on dev can judge them")
    active = np.array([dev_answers[k] > 0 for k in range(nq)])
    units: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, q in enumerate(ev.questions):
        units[_unit(q)].append(k)

    def drop(k: int, rule: str, reason: str) -> None:
        keep[k] = False
        dropped.append({"question": _qout(ev, k), "rule": rule, "reason": reason})

    def last_in_unit(k: int) -> bool:
        return sum(keep[j] for j in units[_unit(ev.questions[k])]) <= 1

    dev_rows = np.where(dev)[0]
    for k in np.where(active)[0]:
        inv = ev.invalid[dev, k].sum() / dev_answers[k]
        if inv > invalid_share and not last_in_unit(k):
            drop(k, "mostly invalid", f"{inv:.0%} of its {int(dev_answers[k])} dev answers are "
                                      f"invalid (> {invalid_share:.0%})")
    for k in np.where(active & keep)[0]:
        vs = set().union(*[ev.verdicts.get((r, k), set()) for r in dev_rows])
        vals = ev.V[dev, k]
        vals = vals[~np.isnan(vals)]
        spread = float(np.ptp(vals)) if len(vals) else 0.0
        if len(vs) <= 1 and spread < vary_eps and not last_in_unit(k):
            what = next(iter(vs)) if vs else "no valid answer"
            drop(k, "never varies", f"answered {what!r} on all {len(vals)} valid dev answers "
                                    f"(p(Yes) spread {spread:.3f} < {vary_eps})")

    def own(k: int) -> float:
        one = np.zeros(nq, bool)
        one[k] = True
        return _stat(ev, subset_scores(ev, one), dev).value

    for members_ in units.values():
        ks = [k for k in members_ if keep[k] and active[k]]
        for i, j, sim in similar_pairs([ev.questions[k]["text"] for k in ks], similarity):
            a, b = ks[i], ks[j]
            if not (keep[a] and keep[b]):
                continue
            va, vb = own(a), own(b)
            ra, rb = (-math.inf if isnan(va) else va), (-math.inf if isnan(vb) else vb)
            loser, winner = (b, a) if (ra, -a) >= (rb, -b) else (a, b)
            vl, vw = (vb, va) if loser == b else (va, vb)
            drop(loser, "near-copy",
                 f"near-copy (similarity {sim:.2f} ≥ {similarity}) of #{ev.questions[winner]['id']}"
                 f" {ev.questions[winner]['text']!r}, whose own dev agreement is higher or equal "
                 f"({_fmt(vw)} vs {_fmt(vl)})")

    fast = _FastHuman(ev, dev) if ev.kind == "human_scores" else None

    def value(trial: np.ndarray, k: int | None = None) -> float:
        if fast is not None:
            return fast.value(trial) if k is None else fast.without(k)
        if k is not None:
            trial = trial.copy()
            trial[k] = False
        return _stat(ev, subset_scores(ev, trial), dev).value

    current = value(keep)
    while True:
        best, best_v = None, current
        for k in np.where(keep & active)[0]:
            if last_in_unit(k):
                continue
            v = value(keep, k)
            if isnan(v):
                continue
            if v > best_v:
                best, best_v = k, v
        # an undefined dev agreement gives nothing to compare a drop with: stop there
        if best is None or isnan(current) or best_v - current <= epsilon:
            break
        drop(best, "lowers dev agreement",
             f"dropping it raises dev agreement from {_fmt(current)} to {_fmt(best_v)} "
             f"(> ε {epsilon})")
        current = value(keep)
    return keep, dropped, notes


class _FastHuman:
    """Dev agreement with human scores as :func:`_stat` computes it, for the greedy search:
    dropping one question only changes its own dimension, so only that one is recomputed."""

    def __init__(self, ev: Evidence, mask: np.ndarray) -> None:
        gcol = ev.items["group"].to_numpy()
        self.human = ev.human
        self.rows = [np.where(mask & (gcol == g))[0] for g in sorted(set(gcol[mask]))]
        self.col_dim = np.array([q["dimension"] for q in ev.questions])
        self.dims = [d for d in dict.fromkeys(self.col_dim.tolist()) if d in ev.human]
        self.Vz, self.valid = np.nan_to_num(ev.V), (~np.isnan(ev.V)).astype(float)
        self.keep = np.ones(len(ev.questions), bool)
        self.per: dict[str, np.ndarray] = {}

    def _dim(self, d: str, cols: np.ndarray) -> np.ndarray:
        num, den = self.Vz[:, cols].sum(1), self.valid[:, cols].sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.where(den > 0, num / np.where(den > 0, den, 1), NAN)
        return np.array([_spearman(s[r], self.human[d][r]) for r in self.rows])

    @staticmethod
    def _agg(per: dict[str, np.ndarray]) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            v = np.nanmean([np.nanmean(x) if len(x) else NAN for x in per.values()]) \
                if per else NAN
        return float(v)

    def value(self, keep: np.ndarray) -> float:
        self.keep = keep.copy()
        self.per = {d: self._dim(d, keep & (self.col_dim == d)) for d in self.dims}
        return self._agg(self.per)

    def without(self, k: int) -> float:
        d = self.col_dim[k]
        if d not in self.per:
            return self._agg(self.per)
        cols = self.keep & (self.col_dim == d)
        cols[k] = False
        return self._agg({**self.per, d: self._dim(d, cols)})


def fit_weights(ev: Evidence, keep: np.ndarray, penalty: float = RIDGE
                ) -> tuple[np.ndarray | None, str | None]:
    """Non-negative ridge weights of the kept questions on dev items (see the module doc):
    per dimension, and per query for per-query questions in the ranking setting (RocketEval's
    per-query predictor: the dev systems' answers to that query, labelled with their rating)."""
    per_query = any(q["group_id"] for q in ev.questions)
    if per_query and not ev.ranking:
        return None, ("no weights: per-query questions are each answered on one query only, "
                      "so a held-out query has no dev answer to fit its weights on")
    if ev.kind == "preferences":
        return _pair_weights(ev, keep, penalty)
    dev = ev.items["dev"].to_numpy(bool)
    groups = ev.items["group"].to_numpy()
    w = np.zeros(len(ev.questions))
    for dim, gid in dict.fromkeys(_unit(q) for q in ev.questions):
        cols = np.where(keep & np.array([_unit(q) == (dim, gid) for q in ev.questions]))[0]
        if ev.kind == "human_scores":
            y = ev.human.get(dim, np.full(len(dev), NAN))
        else:
            y = ev.items["system"].map(ev.ratings).to_numpy(float)
        ok = dev & ~np.isnan(y) & ((groups == gid) if gid else True)
        if ok.sum() < 3 or not len(cols):
            w[cols] = 1.0
            continue
        X = ev.V[np.ix_(ok, cols)]
        with warnings.catch_warnings():  # an all-invalid column is expected: it becomes 0.5
            warnings.simplefilter("ignore", RuntimeWarning)
            col = np.nan_to_num(np.nanmean(X, axis=0), nan=0.5)
        X = np.where(np.isnan(X), col, X)
        yy, g = y[ok].copy(), groups[ok]
        for gv in set(g):
            m = g == gv
            X[m] -= X[m].mean(0)
            yy[m] -= yy[m].mean()
        lam = penalty * len(yy)
        A = np.vstack([X, math.sqrt(lam) * np.eye(len(cols))])
        b = np.concatenate([yy, np.zeros(len(cols))])
        coef, _ = nnls(A, b)
        w[cols] = coef if coef.sum() > 0 else 1.0
    return w, None


def _pair_weights(ev: Evidence, keep: np.ndarray, penalty: float
                  ) -> tuple[np.ndarray | None, str | None]:
    """Weights from pairwise votes: NNLS of the vote (+1: the first answer won, −1: the
    second) on the difference of the two answers' values per kept question, over the dev
    pairs, stacked over ``sqrt(λ)·I`` (λ = ``penalty`` × pairs); a missing value counts as no
    difference. All zero: equal weights."""
    pairs = ev.pairs if ev.pairs is not None else pd.DataFrame(columns=["a", "b", "winner"])
    dev = ev.items["dev"].to_numpy(bool)
    p = pairs[[bool(dev[a] and dev[b]) for a, b in zip(pairs["a"], pairs["b"])]]
    cols = np.where(keep)[0]
    if len(p) < 3:
        return None, f"no weights: {len(p)} decisive dev pair(s), fewer than 3 to fit on"
    V = ev.V[:, cols]
    X = np.nan_to_num(V[p["a"].to_numpy(int)] - V[p["b"].to_numpy(int)])
    y = np.where(p["winner"].to_numpy() == "a", 1.0, -1.0)
    lam = penalty * len(y)
    coef, _ = nnls(np.vstack([X, math.sqrt(lam) * np.eye(len(cols))]),
                   np.concatenate([y, np.zeros(len(cols))]))
    w = np.zeros(len(ev.questions))
    w[cols] = coef if coef.sum() > 0 else 1.0
    return w, None


def _qout(ev: Evidence, k: int) -> dict[str, Any]:
    q = ev.questions[k]
    return {"id": q["id"], "text": q["text"], "dimension": q["dimension"],
            **({"group_id": q["group_id"]} if q["group_id"] else {}),
            **({"ids": q["ids"]} if len(q.get("ids", ())) > 1 else {})}


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
        "kept": [_qout(ev, k) for k in np.where(keep)[0]],
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


# -- new questions ----------------------------------------------------------------------------
MAX_NEW = 20
EXCERPT = 1500  # characters of each answer shown to the question writer


def _disagreements(ev: Evidence, keep: np.ndarray, weights: np.ndarray | None
                   ) -> list[tuple[str, str, int, int]]:
    """Dev groups the kept questions explain worst, as ``(dimension, group, better row,
    worse row)``: the pair of dev answers with the largest label gap that the kept
    questions' score orders the wrong way (or ties), largest gap first."""
    dev = ev.items["dev"].to_numpy(bool)
    sc = subset_scores(ev, keep, weights)
    gcol = ev.items["group"].to_numpy()
    out = []
    for dim, s in sc.items():
        if ev.kind == "human_scores":
            label = ev.human.get(dim)
            if label is None:
                continue
        elif ev.kind == "reference_ratings":
            label = ev.items["system"].map(ev.ratings).to_numpy(float)
        else:
            continue
        for g in sorted(set(gcol[dev])):
            rows_ = np.where(dev & (gcol == g) & ~np.isnan(label) & ~np.isnan(s))[0]
            best = None
            for i in rows_:
                for j in rows_:
                    gap = label[i] - label[j]
                    if gap > 0 and s[i] <= s[j] and (best is None or gap > best[0]):
                        best = (gap, i, j)
            if best:
                out.append((best[0], dim, g, best[1], best[2]))
    return [(d, g, int(i), int(j)) for _, d, g, i, j in sorted(out, key=lambda x: -x[0])]


def _per_query(ev: Evidence) -> bool:
    """Whether the checklist is per query (a new question then goes to its source's query):
    a question of one query, or one asked of every query as a copy per query."""
    return any(q["group_id"] or len(q.get("ids", ())) > 1 for q in ev.questions)


def new_question_plan(db: sqlite_utils.Database, ev: Evidence, keep: np.ndarray,
                      weights: np.ndarray | None, n: int) -> dict[str, Any]:
    """Where ``n`` new questions would come from and what they cost, before anything is asked:
    ``{"n", "sources": [{dimension, group, better, worse}], "generation_calls",
    "judge_calls", "judge_calls_note", "reason"}`` (``judge_calls``: answers a run of the
    revised version needs for them — only these are new, the kept ones are answered)."""
    if not 0 <= n <= MAX_NEW:
        raise ProposalError(f"--new-questions {n}: ask for 0 to {MAX_NEW}")
    pairs = _disagreements(ev, keep, weights)[:n] if n else []
    per_query = _per_query(ev)
    tid = task_id(db, ev.task)
    calls = 0
    for _dim, g, _i, _j in pairs:
        calls += db.execute("SELECT COUNT(*) FROM item WHERE task_id = ?" + (
            " AND group_id = ?" if per_query else ""),
            [tid, g] if per_query else [tid]).fetchone()[0]
    pk = ev.items["item_pk"].to_numpy()
    return {"n": len(pairs), "asked": n,
            "sources": [{"dimension": d, "group": g, "better_item": int(pk[i]),
                         "worse_item": int(pk[j])} for d, g, i, j in pairs],
            "generation_calls": len(pairs), "judge_calls": calls,
            "judge_calls_note": ("per run of the revised version: each new question on "
                                 + ("its query's items" if per_query else "every item of the "
                                    "task") + "; kept questions are already answered"),
            "reason": None if len(pairs) >= n else (
                f"only {len(pairs)} dev group(s) have a pair of answers the kept questions "
                "order against the evidence")}


def generate_new_questions(db: sqlite_utils.Database, ev: Evidence, plan: dict[str, Any],
                           judge: str, judge_obj: Any = None) -> list[dict[str, Any]]:
    """Ask ``judge`` for one question per planned source; ``[{text, dimension, group_id,
    source, problem}]`` (a question that is not Yes/No or copies a kept one has a problem and
    is not queued)."""
    from checkeval_core.checklists.augment import near_copy, subject_noun
    from checkeval_core.checklists.parse import question_flags
    from checkeval_core.judges.base import GenerateRequest
    from checkeval_core.judges.registry import get_judge
    from checkeval_core.prompts import proposal as PP
    from checkeval_core.tasks import get_task

    j = judge_obj or get_judge(judge, db)
    noun = subject_noun(get_task(db, ev.task)["kind"])
    per_query = _per_query(ev)
    out = []
    for src in plan["sources"]:
        it = {r["id"]: r for r in rows(db, "SELECT id, output, context, source FROM item "
                                           "WHERE id IN (?, ?)",
                                       [src["better_item"], src["worse_item"]])}
        better, worse = it[src["better_item"]], it[src["worse_item"]]
        kept = [q["text"] for q in ev.questions
                if q["dimension"] == src["dimension"]
                and (not per_query or q["group_id"] in ("", src["group"]))]
        query = (f"Query: {better['context'] or better['source']}\n\n"[:EXCERPT + 10]
                 if (better["context"] or better["source"]) else "")
        user = PP.PROPOSE_QUESTION.format(
            dimension=src["dimension"], query=query, better=better["output"][:EXCERPT],
            worse=worse["output"][:EXCERPT], noun=noun,
            kept="\n".join(f"- {t}" for t in kept) or "(nothing yet)")
        req = GenerateRequest.chat(PP.PROPOSE_SYSTEM.format(noun=noun), user, max_tokens=80,
                                   purpose="propose_question",
                                   payload={"better": better["output"], "worse":
                                            worse["output"], "noun": noun,
                                            "dimension": src["dimension"]})
        res = j.generate([req])[0]
        text = " ".join((res.text or "").split()).lstrip("-*0123456789. ").strip()
        problem = res.error or None
        if not problem and not text:
            problem = "the judge returned an empty answer"
        elif not problem and "not_yes_no" in question_flags(text):
            problem = "not a yes/no question"
        elif not problem and near_copy(text, set(kept) | {o["text"] for o in out}):
            problem = "a near-copy of a question already there"
        out.append({"text": text, "dimension": src["dimension"],
                    "group_id": src["group"] if per_query else "", "source": src,
                    "problem": problem, "judge": judge, "prompt_version": PP.PROMPT_VERSION})
    return out


def _fake_propose(req: Any) -> str:
    """The fake judge's question: about a word the better answer has and the worse lacks."""
    p = req.payload
    worse = set(str(p.get("worse", "")).lower().split())
    words = [w.strip(".,;:!?\"'()").lower() for w in str(p.get("better", "")).split()]
    new = [w for w in words if len(w) > 3 and w not in worse] or ["detail"]
    return f"Does the {p.get('noun', 'text')} mention {new[0]}?"


def _register_fake() -> None:
    from checkeval_core.judges.fake import register_fake_generator

    register_fake_generator("propose_question", _fake_propose)


_register_fake()


# -- the review queue -------------------------------------------------------------------------
PREFIX = "proposal: drop — "


def to_review(db: sqlite_utils.Database, proposal: dict[str, Any]) -> dict[str, Any]:
    """Queue the proposal for a person, in one transaction; nothing is applied.

    Each dropped question that is kept goes back to ``proposed`` with its evidence as the
    reason (the Checklist review page keeps or rejects it); each new question without a
    problem is added as ``proposed`` with origin ``proposal`` (and a ``proposal`` flag). Pressing
    twice adds nothing twice. Returns ``{"queued", "added", "skipped"}``."""
    from checkeval_core.checklists.editing import add_question, norm
    from checkeval_core.store import task_id, transaction

    tid = task_id(db, proposal["task"])
    queued, added, skipped = 0, [], []
    with transaction(db):
        for d in proposal["dropped"]:
            why = (PREFIX + d["reason"])[:500]
            # a question asked of every query is dropped from each query's copy
            for qid in d["question"].get("ids") or [d["question"]["id"]]:
                q = db.execute("SELECT status, reason FROM question WHERE id = ? AND "
                               "task_id = ?", [qid, tid]).fetchone()
                if q is None or q[0] == "rejected":
                    skipped.append(qid)
                    continue
                if q[0] == "kept":
                    db.execute("UPDATE question SET status = 'proposed', reason = ? WHERE "
                               "id = ?", [why, qid])
                queued += 1
        for nq in proposal.get("new_questions", {}).get("questions", []):
            if nq["problem"]:
                continue
            dim = db.execute("SELECT id FROM dimension WHERE task_id = ? AND name = ?",
                             [tid, nq["dimension"]]).fetchone()
            like = db.execute("SELECT q.id, q.sub_dimension_id FROM question q WHERE "
                              "q.task_id = ? AND q.dimension_id IS ? AND q.group_id = ? "
                              "ORDER BY q.id LIMIT 1",
                              [tid, dim[0] if dim else None, nq["group_id"]]).fetchone()
            same = db.execute("SELECT id FROM question WHERE task_id = ? AND text = ? AND "
                              "group_id = ?", [tid, norm(nq["text"]), nq["group_id"]]).fetchone()
            if same:
                continue
            src = nq["source"]
            qid = add_question(db, tid, dim[0] if dim else None, like[1] if like else None,
                               nq["text"], origin="proposal", status="proposed",
                               model=nq["judge"], prompt_version=nq["prompt_version"],
                               flags=["proposal"], group_id=nq["group_id"],
                               reason=f"proposal: new — the kept questions order dev items "
                                      f"#{src['better_item']} (rated better) and "
                                      f"#{src['worse_item']} the wrong way")
            added.append(qid)
    return {"queued": queued, "added": added, "skipped": skipped}


# -- what a page shows ------------------------------------------------------------------------
def proposal_runs(db: sqlite_utils.Database, task: str) -> list[dict[str, Any]]:
    """Completed Yes/No runs of a frozen version of ``task`` (newest first), with a label."""
    from checkeval_core.analysis.versions import version_runs

    return [{**r, "label": f"#{r['run']} · v{r['version']} · {r['judge']} · {r['method']}"}
            for r in version_runs(db, task) if r["method"] in per_question_methods()]


_num = fmt


def display_rows(proposal: dict[str, Any]) -> dict[str, Any]:
    """The proposal as table rows: ``figures`` (dev and held-out before → after, each with N
    and interval or why none), ``dropped`` (question, rule, reason), ``kept`` and ``cost``
    (a sentence on the new questions, or None)."""
    figs = []
    for part, name in (("dev", "dev (chosen here)"), ("heldout", "held-out (reported only)")):
        f = proposal[part]

        def ci(k: str, f: dict[str, Any] = f) -> str:
            lo, hi = f["ci"][k]
            return f["ci_reason"] or ("no interval" if isnan(lo) else f"[{lo:.2f}, {hi:.2f}]")

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
            "cost": cost, "rerun": rerun}
