"""Pairwise votes collected in the app: two answers to one query, the annotator picks A, B or
a tie.

A team ranking its own models needs human evidence on *its* systems; imported preference
files (:mod:`checkeval_core.annotation.preferences`) only cover public benchmarks. This
module decides which pairs an annotator sees (:func:`pair_sequence`: within each query,
pairs of two systems' answers, spread evenly over systems and queries, deterministic for a
seed and annotator), in which order (:func:`shown_order`: randomised per annotator and pair,
so a position bias cannot favour one system), and stores each vote in the same
``preference`` table as imported votes (source :data:`APP_SOURCE`, the annotator's name),
where :mod:`checkeval_core.analysis.rankings` reads every row: app votes enter the human Elo
and the judges' pair accuracy without any extra step.

Storage: the row's ``item_a`` is the smaller item id, ``winner`` is relative to that order
(``a``/``b``/``tie``); ``shown_first`` keeps which answer was shown as A. A vote is an upsert
per (task, pair, annotator) among the app's votes: voting again replaces the choice, the same
choice twice changes nothing, and nothing here deletes a vote. Its ``vote_id`` is
:func:`~checkeval_core.annotation.preferences.derived_vote_id` of ``app``, the annotator and
the two item ids in canonical order: the app asks an annotator about a pair once (in one
shown order), so one annotator has one app vote per pair, and an export of the votes imported
into the same database is recognised vote by vote.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from itertools import combinations
from typing import Any

import sqlite_utils

from checkeval_core.annotation.preferences import derived_vote_id
from checkeval_core.checklists.review import record_event
from checkeval_core.store import NotFound, now_iso, rows, task_id, transaction
from checkeval_core.team import guarded

APP_SOURCE = "app"
CHOICES = ("A", "B", "tie")
DEFAULT_PAIRS = 20


def pairwise_tasks(db: sqlite_utils.Database) -> list[str]:
    """Tasks with at least one query answered by two different systems (by name)."""
    return [r[0] for r in db.execute(
        "SELECT t.name FROM task t WHERE EXISTS (SELECT 1 FROM item i WHERE i.task_id = t.id "
        "AND i.system_id != '' GROUP BY i.group_id HAVING COUNT(DISTINCT i.system_id) >= 2) "
        "ORDER BY t.name")]


def _candidates(db: sqlite_utils.Database, tid: int) -> dict[str, list[tuple[int, int]]]:
    """Per query, every pair of items of two different systems, ``(smaller pk, larger pk)``;
    one answer per system and query (the first imported) so a system is not compared with
    itself."""
    per: dict[str, dict[str, int]] = {}
    for g, s, pk in db.execute("SELECT group_id, system_id, id FROM item WHERE task_id = ? "
                               "AND system_id != '' ORDER BY position, id", [tid]):
        per.setdefault(g, {}).setdefault(s, pk)
    return {g: [tuple(sorted(p)) for p in combinations(sorted(by.values()), 2)]
            for g, by in per.items() if len(by) >= 2}


def pair_sequence(db: sqlite_utils.Database, task: str, annotator: str, seed: int = 0
                  ) -> list[tuple[int, int]]:
    """Every candidate pair of ``task`` in the order ``annotator`` sees them.

    Queries take turns (round robin in a shuffled order); within a query the next pair is
    the one whose two systems have been shown least so far (ties broken by a shuffled order),
    so any prefix of the sequence spreads evenly over systems and queries. Deterministic for
    (task, annotator, seed); independent of the votes already given, so voting never
    reshuffles the queue."""
    tid = task_id(db, task)
    return _sequence(_candidates(db, tid), _systems(db, tid), task, annotator, seed)


def _systems(db: sqlite_utils.Database, tid: int) -> dict[int, str]:
    """Item id → system id, for the task's items that have a system."""
    return {r[0]: r[1] for r in db.execute("SELECT id, system_id FROM item WHERE task_id = ? "
                                           "AND system_id != ''", [tid])}


def _sequence(cand: dict[str, list[tuple[int, int]]], system: dict[int, str], task: str,
              annotator: str, seed: int) -> list[tuple[int, int]]:
    """:func:`pair_sequence` from the candidate pairs and the items' systems."""
    rng = random.Random(f"{seed}|{task}|{annotator}")
    groups = sorted(cand)
    rng.shuffle(groups)
    left = {}
    for g in groups:
        ps = list(cand[g])
        rng.shuffle(ps)
        left[g] = ps
    seen: Counter[str] = Counter()
    out: list[tuple[int, int]] = []
    while any(left.values()):
        for g in groups:
            if not left[g]:
                continue
            # least-shown systems first; list position breaks ties (already shuffled)
            i = min(range(len(left[g])), key=lambda k: (
                seen[system[left[g][k][0]]] + seen[system[left[g][k][1]]],
                max(seen[system[left[g][k][0]]], seen[system[left[g][k][1]]]), k))
            a, b = left[g].pop(i)
            seen[system[a]] += 1
            seen[system[b]] += 1
            out.append((a, b))
    return out


def shown_order(annotator: str, a: int, b: int, seed: int = 0) -> tuple[int, int]:
    """``(shown as A, shown as B)`` for the pair of items ``a``, ``b``: a coin flip seeded by
    the annotator, the pair and ``seed`` (the same annotator always sees a pair the same way;
    different annotators see it in different orders)."""
    lo, hi = sorted((a, b))
    h = hashlib.sha256(f"{seed}|{annotator}|{lo}|{hi}".encode()).digest()
    return (lo, hi) if h[0] % 2 == 0 else (hi, lo)


def _my_votes(db: sqlite_utils.Database, tid: int, annotator: str
              ) -> dict[tuple[int, int], dict[str, Any]]:
    return {(r["item_a"], r["item_b"]): r for r in rows(
        db, "SELECT id, item_a, item_b, winner, shown_first, created_at FROM preference WHERE "
            "task_id = ? AND source = ? AND annotator = ?", [tid, APP_SOURCE, annotator])}


@guarded("annotate", self_param="annotator")
def record_vote(db: sqlite_utils.Database, task: str, annotator: str, shown_a: int,
                shown_b: int, choice: str) -> dict[str, Any]:
    """Store ``annotator``'s vote on the pair shown as (``shown_a``, ``shown_b``).

    ``choice`` is ``A``, ``B`` or ``tie`` as shown; it is stored relative to the canonical
    order (``item_a`` = the smaller item id) with ``shown_first`` = ``shown_a``. Voting again
    on the same pair replaces the choice (same choice: nothing changes, not even the time);
    the vote it replaces is appended to the history (``review_event``, ``change_vote``).
    Returns the stored vote with both systems (see :func:`vote_detail`)."""
    annotator = (annotator or "").strip()
    if not annotator:
        raise ValueError("a vote needs the annotator's name")
    if choice not in CHOICES:
        raise ValueError(f"choice {choice!r}: use one of {', '.join(CHOICES)}")
    tid = task_id(db, task)
    found = {r["id"]: r for r in rows(
        db, "SELECT id, item_id, group_id, system_id FROM item WHERE task_id = ? AND id IN "
            "(?, ?)",
        [tid, shown_a, shown_b])}
    for pk in (shown_a, shown_b):
        if pk not in found:
            raise NotFound(f"task {task!r} has no item with id {pk}")
    ra, rb = found[shown_a], found[shown_b]
    if shown_a == shown_b or ra["group_id"] != rb["group_id"] or not ra["system_id"] \
            or not rb["system_id"] or ra["system_id"] == rb["system_id"]:
        raise ValueError("a pairwise vote compares two systems' answers to the same query")
    lo, hi = sorted((shown_a, shown_b))
    winner = "tie" if choice == "tie" else \
        ("a" if (shown_a if choice == "A" else shown_b) == lo else "b")
    vid = derived_vote_id(APP_SOURCE, annotator, found[lo]["item_id"], found[hi]["item_id"])
    with transaction(db):
        was = db.execute("SELECT winner, shown_first, created_at FROM preference WHERE "
                         "task_id = ? AND item_a = ? AND item_b = ? AND annotator = ? AND "
                         "source = ?", [tid, lo, hi, annotator, APP_SOURCE]).fetchone()
        if was and (was[0], was[1]) != (winner, shown_a):  # the vote it replaces stays on record
            record_event(db, tid, "annotator", "change_vote", actor=annotator,
                         detail={"item_a": lo, "item_b": hi, "was": was[0],
                                 "shown_first": was[1], "given_at": was[2], "now": winner})
        db.execute(
            "INSERT INTO preference (task_id, group_id, item_a, item_b, winner, source, "
            "annotator, created_at, shown_first, vote_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (task_id, item_a, item_b, annotator) WHERE source = 'app' DO UPDATE "
            "SET created_at = CASE WHEN winner = excluded.winner AND shown_first IS "
            "excluded.shown_first THEN created_at ELSE excluded.created_at END, "
            "winner = excluded.winner, shown_first = excluded.shown_first",
            [tid, ra["group_id"], lo, hi, winner, APP_SOURCE, annotator, now_iso(), shown_a,
             vid])
    return vote_detail(db, task, annotator, lo, hi)


def vote_detail(db: sqlite_utils.Database, task: str, annotator: str, a: int, b: int
                ) -> dict[str, Any]:
    """One app vote with what was shown: ``{item_a, item_b, winner, shown_first, choice,
    system_a_shown, system_b_shown, preferred, group_id, created_at}`` (``preferred``: the
    system voted for, or ``tie``); raises :class:`NotFound` if there is none."""
    tid = task_id(db, task)
    lo, hi = sorted((a, b))
    r = rows(db, "SELECT p.group_id, p.item_a, p.item_b, p.winner, p.shown_first, "
                 "p.created_at, ia.system_id AS system_a, ib.system_id AS system_b, "
                 "ia.item_id AS item_a_id, ib.item_id AS item_b_id FROM preference p "
                 "JOIN item ia ON ia.id = p.item_a JOIN item ib ON ib.id = p.item_b "
                 "WHERE p.task_id = ? AND p.item_a = ? AND p.item_b = ? AND p.source = ? AND "
                 "p.annotator = ?", [tid, lo, hi, APP_SOURCE, annotator])
    if not r:
        raise NotFound(f"{annotator!r} has no vote on items {lo} and {hi} of task {task!r}")
    v = r[0]
    first_is_a = v["shown_first"] in (None, v["item_a"])
    v["system_a_shown"], v["system_b_shown"] = ((v["system_a"], v["system_b"]) if first_is_a
                                                else (v["system_b"], v["system_a"]))
    v["choice"] = _shown_choice(v["winner"], v["shown_first"], v["item_a"])
    v["preferred"] = "tie" if v["winner"] == "tie" else \
        (v["system_a"] if v["winner"] == "a" else v["system_b"])
    return v


def _answer(db: sqlite_utils.Database, pk: int) -> dict[str, Any]:
    # neither the system id nor the item id (which often names the system): the systems
    # stay hidden until the vote is stored
    return rows(db, "SELECT id, group_id, source, context, fact, reference, output FROM item "
                    "WHERE id = ?", [pk])[0]


def _choices(voted: dict[tuple[int, int], dict[str, Any]]) -> dict[str, int]:
    """How often the annotator chose the answer shown as A, as B, or a tie (a strong lean to
    one side over many votes is a position bias)."""
    out = {c: 0 for c in CHOICES}
    for (a, _), v in voted.items():
        out[_shown_choice(v["winner"], v["shown_first"], a)] += 1
    return out


def _shown_choice(winner: str, shown_first: int | None, item_a: int) -> str:
    """The side the annotator clicked (``A``, ``B`` or ``tie``) for a stored winner
    (``a``/``b``/``tie`` in item order), given which item was shown as A (None: item_a)."""
    if winner == "tie":
        return "tie"
    first_is_a = shown_first in (None, item_a)
    return "A" if (winner == "a") == first_is_a else "B"


def pair_queue(db: sqlite_utils.Database, task: str, annotator: str,
               n_pairs: int = DEFAULT_PAIRS, seed: int = 0) -> dict[str, Any]:
    """What the pairwise page shows ``annotator``: the first ``n_pairs`` of
    :func:`pair_sequence` with progress, and the next pair not yet voted on.

    ``{"task", "annotator", "seed", "n_pairs", "n_candidates", "n_voted", "n_queries",
    "n_systems", "choices", "next"}`` (``choices``: this annotator's votes on the task by
    the side chosen, ``A``/``B``/``tie``); ``next`` is None when every assigned pair has a vote, else
    ``{"position", "query": {source, context, reference}, "a": answer, "b": answer}`` with
    ``a``/``b`` in the annotator's shown order and no system ids (blind)."""
    if n_pairs < 1:
        raise ValueError("n_pairs must be ≥ 1")
    tid = task_id(db, task)
    cand, system = _candidates(db, tid), _systems(db, tid)
    seq = _sequence(cand, system, task, annotator, seed)
    assigned = seq[:n_pairs]
    voted = _my_votes(db, tid, annotator)
    todo = [i for i, p in enumerate(assigned) if p not in voted]
    out: dict[str, Any] = {
        "task": task, "annotator": annotator, "seed": seed, "n_pairs": len(assigned),
        "n_candidates": len(seq), "n_voted": len(assigned) - len(todo),
        "n_votes_total": len(voted), "n_queries": len(cand),
        "n_systems": len(set(system.values())), "choices": _choices(voted), "next": None}
    if todo:
        a, b = shown_order(annotator, *assigned[todo[0]], seed=seed)
        ia, ib = _answer(db, a), _answer(db, b)
        out["next"] = {"position": todo[0] + 1, "group_id": ia["group_id"],
                       "query": {k: ia[k] for k in ("source", "context", "fact", "reference")},
                       "a": ia, "b": ib}
    return out


EXPORT_COLUMNS = ["vote_id", "group_id", "item_a", "item_b", "winner", "annotator", "source",
                  "shown_first", "created_at"]


@guarded("answers.export", audit=False)
def export_votes(db: sqlite_utils.Database, task: str, source: str | None = None
                 ) -> list[dict[str, Any]]:
    """Every preference of ``task`` (app votes and imported ones, or only ``source``) as rows
    of :data:`EXPORT_COLUMNS` with item ids, in the item-id shape that ``checkeval
    preferences import`` reads back (``shown_first``: the item id shown as A, empty for
    imported votes; ``vote_id``: the vote's stable id, so importing the file into the same
    database stores nothing twice)."""
    tid = task_id(db, task)
    where, args = ("AND p.source = ?", [source]) if source is not None else ("", [])
    return rows(db, "SELECT p.vote_id, p.group_id, ia.item_id AS item_a, ib.item_id AS item_b, p.winner, "
                    "p.annotator, p.source, COALESCE(isf.item_id, '') AS shown_first, "
                    "p.created_at FROM preference p JOIN item ia ON ia.id = p.item_a "
                    "JOIN item ib ON ib.id = p.item_b LEFT JOIN item isf ON isf.id = "
                    f"p.shown_first WHERE p.task_id = ? {where} ORDER BY p.id", [tid, *args])
