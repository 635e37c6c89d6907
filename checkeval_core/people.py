"""What people said about a decision: the one reader of the annotators' Yes/No answers and of
their pairwise votes, for every view (Align, Versions, the escalation fit and curve,
calibration, the question diagnostics, Traces, the agreement report, Rankings, ``checkeval
questions``).

**Answers** (the ``annotation`` table, ``kind = 'answer'``), per (item, question):

* every annotator's answer — one per annotator: an annotator who answered the same question
  in several jobs counts once, with their latest answer;
* ``unsure`` is not an answer for either side: an annotator whose latest answer is
  ``unsure`` is left out of the answers and of the majority (as in the agreement report);
* the **majority** of the Yes/No answers; **a tie is no label** (None), never decided by order;
* the **coordinator's settled answer wins** (the ``adjudication`` of an annotation job,
  :func:`checkeval_core.annotation.jobs.adjudicate`): it is the label whatever the majority
  is, a tie included; when several jobs settled the same decision, the latest job's answer;
* only questions on the item's own checklist count (a global question, the item's own or its
  query's), as everywhere else an answer is asked;
* an answer given in an **annotation job** counts once its author submitted the item — in a
  fixed job as in a pool (:mod:`checkeval_core.annotation.pools`): answers saved on an item
  still open, skipped, handed on to someone else (``hand_on``), or on a pool claim that
  expired and went to someone else, are kept under their author but are not people's answer
  (a pool item never has more than its *k* answers; the jobs' own agreement reads the same
  submitted answers). Answers outside a job (``annotations import``) count as given.

**Pairwise votes** (the ``preference`` table): every vote as stored, in canonical order
(``item_a`` < ``item_b``, the winner turned with it), for the human Elo (each vote is a match,
a ``tie`` vote a draw); and per pair the majority of the votes, where a ``tie`` vote — the
pairwise ``unsure`` — is a vote for neither side and equal counts are no label.

Pure counting stays in the statistics floor (:func:`checkeval_core.stats.escalation.majority`,
:func:`~checkeval_core.stats.escalation.median_direction`); the SQL is here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from checkeval_core.stats.escalation import majority, median_direction
from checkeval_core.store import task_id

YES_NO = ("yes", "no")
#: one SQL value (bound to the task's id) that changes whenever what this module reads for a
#: task's answers changes — an answer given or changed, a decision settled or settled again,
#: an item submitted;
#: for a page's cache key
PEOPLE_STAMP = ("SELECT (SELECT COUNT(*) || ':' || COALESCE(MAX(updated_at), '') FROM annotation "
                "WHERE task_id = ?1) || ':' || (SELECT COUNT(*) || ':' || TOTAL(adj.id * "
                "(adj.value = 'yes')) FROM adjudication adj JOIN annotation_job j ON j.id = "
                "adj.job_id WHERE j.task_id = ?1) || ':' || (SELECT COUNT(*) FROM "
                "annotation_assignment s JOIN annotation_job j ON j.id = s.job_id WHERE "
                "j.task_id = ?1 AND s.status = 'done')")
_CHUNK = 500


@dataclass(frozen=True)
class PeopleAnswer:
    """People's answers to one (item, question): ``answers`` (annotator → 'yes' / 'no'),
    ``majority`` ('yes' / 'no', None on a tie or without answers), ``settled`` (the
    coordinator's answer, or None) and ``label`` — settled if any, else the majority, else
    None."""

    answers: dict[str, str]
    majority: str | None
    settled: str | None

    @property
    def label(self) -> str | None:
        return self.settled or self.majority

    @property
    def n(self) -> int:
        """How many annotators answered Yes/No."""
        return len(self.answers)

    @property
    def consensus(self) -> bool:
        """Two or more annotators, all the same answer."""
        return len(self.answers) >= 2 and len(set(self.answers.values())) == 1


@dataclass(frozen=True)
class PeopleVote:
    """One pairwise vote in canonical order: ``item_a`` < ``item_b``, ``winner`` 'a' / 'b' /
    'tie' relative to that order; the pair's ``group`` (query) and the two answers' systems."""

    item_a: int
    item_b: int
    winner: str
    annotator: str
    source: str
    group: str
    system_a: str
    system_b: str


def _task_pk(db: sqlite_utils.Database, task: str | int) -> int:
    """A task given by name or by its internal id."""
    return int(task) if isinstance(task, int) else task_id(db, task)


def _chunks(item_pks: Iterable[int] | None) -> list[list[int] | None]:
    if item_pks is None:
        return [None]
    pks = sorted({int(p) for p in item_pks})
    return [pks[i:i + _CHUNK] for i in range(0, len(pks), _CHUNK)]


def _in(col: str, chunk: list[int] | None) -> tuple[str, list[Any]]:
    if chunk is None:
        return "", []
    return f" AND {col} IN (SELECT value FROM json_each(?))", [json.dumps(chunk)]


# the item's own checklist (checklists.instance.question_applies, in SQL: the store layer
# cannot import the checklists): a global question, the item's own, or its query's
_APPLIES = ("(q.item_id IS NULL OR q.item_id = a.item_id) AND (COALESCE(q.group_id, '') = '' "
            "OR q.group_id = COALESCE(NULLIF(i.group_id, ''), i.item_id, ''))")
#: in a job, the author's item submitted (see the module's rules); on ``annotation a``, also
#: for the job's own disagreements (:func:`checkeval_core.annotation.jobs.disagreements`)
SUBMITTED = (
    "(a.job_id IS NULL OR EXISTS (SELECT 1 FROM annotation_assignment s WHERE s.job_id = "
    "a.job_id AND s.item_id = a.item_id AND s.annotator = a.annotator AND s.status = 'done'))")


def people_answers(db: sqlite_utils.Database, task: str | int,
                   item_pks: Iterable[int] | None = None
                   ) -> dict[tuple[int, int], PeopleAnswer]:
    """``{(item pk, question id): PeopleAnswer}`` of ``task`` (a name or its id), on
    ``item_pks`` only when given: every (item, question) someone answered Yes/No or a
    coordinator settled (see the module for the rule)."""
    tid = _task_pk(db, task)
    latest: dict[tuple[int, int], dict[str, str]] = {}
    settled: dict[tuple[int, int], str] = {}
    for chunk in _chunks(item_pks):
        where, params = _in("a.item_id", chunk)
        for pk, qid, who, value in db.execute(
                "SELECT a.item_id, a.question_id, a.annotator, a.value FROM annotation a "
                "JOIN item i ON i.id = a.item_id JOIN question q ON q.id = a.question_id "
                f"WHERE a.task_id = ? AND a.kind = 'answer'{where} AND {_APPLIES} AND "
                f"{SUBMITTED} "
                "ORDER BY a.updated_at, a.id", [tid, *params]):
            # the latest answer of each annotator wins (rows come oldest first)
            latest.setdefault((int(pk), int(qid)), {})[str(who)] = str(value).strip().lower()
        where, params = _in("adj.item_id", chunk)
        for pk, qid, value in db.execute(
                "SELECT adj.item_id, adj.question_id, adj.value FROM adjudication adj JOIN "
                f"annotation_job j ON j.id = adj.job_id WHERE j.task_id = ?{where} "
                "ORDER BY adj.job_id, adj.id", [tid, *params]):
            if value in YES_NO:  # the latest job's settled answer wins
                settled[(int(pk), int(qid))] = str(value)
    out: dict[tuple[int, int], PeopleAnswer] = {}
    for key in sorted(set(latest) | set(settled)):
        answers = {a: v for a, v in sorted(latest.get(key, {}).items()) if v in YES_NO}
        if not answers and key not in settled:
            continue
        out[key] = PeopleAnswer(answers, majority(list(answers.values())), settled.get(key))
    return out


def people_stamp(db: sqlite_utils.Database, task: str | int) -> str:
    """Changes whenever what :func:`people_answers` reads for ``task`` changes (an answer
    given or changed, a decision settled or settled again): a page's cache key."""
    return str(db.execute(PEOPLE_STAMP, [_task_pk(db, task)]).fetchone()[0])


def has_answers(db: sqlite_utils.Database, task: str | int) -> bool:
    """Whether :func:`people_answers` has anything for ``task``: someone's Yes or No that
    counts (outside a job, or its item submitted) or a coordinator's settled answer."""
    tid = _task_pk(db, task)
    given = db.execute("SELECT 1 FROM annotation a WHERE a.task_id = ? AND a.kind = 'answer' "
                       f"AND a.value IN ('yes', 'no') AND {SUBMITTED} LIMIT 1", [tid]).fetchone()
    return given is not None or db.execute(
        "SELECT 1 FROM adjudication adj JOIN annotation_job j ON j.id = adj.job_id WHERE "
        "j.task_id = ? AND adj.value IN ('yes', 'no') LIMIT 1", [tid]).fetchone() is not None


def people_labels(db: sqlite_utils.Database, task: str | int,
                  item_pks: Iterable[int] | None = None) -> dict[tuple[int, int], str]:
    """``{(item pk, question id): 'yes' | 'no'}``: the decided labels only — the settled
    answer, else the annotators' majority; a tie without a settled answer is absent."""
    return {k: p.label for k, p in people_answers(db, task, item_pks).items()
            if p.label is not None}


def answer_labels(db: sqlite_utils.Database, task: str | int, item_pks: Iterable[int]
                  ) -> tuple[dict[tuple[int, int], str], dict[tuple[int, str], str], str]:
    """People's decisions for a run's answers: ``(by (item, question): people_labels, by
    (item, dimension): the experts' score above / below its group's median, source)``;
    ``source`` names what there is ("annotations", "expert scores vs group median", both,
    or "")."""
    pks = sorted({int(p) for p in item_pks})
    by_q = people_labels(db, task, pks)
    scores: dict[tuple[int, str], float] = {}
    group_of: dict[int, str] = {}
    for chunk in _chunks(pks):
        where, params = _in("item_id", chunk)
        for pk, dim, v in db.execute("SELECT item_id, dimension, value FROM human_score WHERE "
                                     f"annotator = ''{where}", params):
            scores[(int(pk), str(dim))] = float(v)
        where, params = _in("id", chunk)
        for pk, g in db.execute(f"SELECT id, group_id FROM item WHERE 1{where}", params):
            group_of[int(pk)] = str(g)
    by_dim = median_direction(scores, group_of)
    source = " and ".join(s for s, have in (("annotations", by_q),
                                            ("expert scores vs group median", by_dim)) if have)
    return by_q, by_dim, source


def people_votes(db: sqlite_utils.Database, task: str | int,
                 item_pks: Iterable[int] | None = None) -> list[PeopleVote]:
    """Every pairwise vote of ``task`` in canonical order (see :class:`PeopleVote`), in the
    order they were stored; with ``item_pks``, only votes whose two answers are among them."""
    tid = _task_pk(db, task)
    keep = None if item_pks is None else {int(p) for p in item_pks}
    out = []
    for a, b, w, who, src, g, sa, sb in db.execute(
            "SELECT p.item_a, p.item_b, p.winner, p.annotator, p.source, p.group_id, "
            "ia.system_id, ib.system_id FROM preference p JOIN item ia ON ia.id = p.item_a "
            "JOIN item ib ON ib.id = p.item_b WHERE p.task_id = ? ORDER BY p.id", [tid]):
        a, b = int(a), int(b)
        if keep is not None and (a not in keep or b not in keep):
            continue
        if a > b:
            a, b, sa, sb = b, a, sb, sa
            w = {"a": "b", "b": "a"}.get(w, w)
        out.append(PeopleVote(a, b, str(w), str(who or ""), str(src or ""), str(g or ""),
                              str(sa or ""), str(sb or "")))
    return out


def pair_majority(winners: Iterable[str]) -> str | None:
    """'a' or 'b' when more votes went to that side; a ``tie`` vote counts for neither side,
    and equal counts (or no vote for a side) are no label (None)."""
    w = list(winners)
    na, nb = w.count("a"), w.count("b")
    return "a" if na > nb else "b" if nb > na else None


def people_pair_labels(db: sqlite_utils.Database, task: str | int,
                       item_pks: Iterable[int] | None = None
                       ) -> dict[tuple[int, int], tuple[str, str]]:
    """``{(item_a, item_b): (winner 'a' | 'b', group)}`` in canonical order, for the voted
    pairs (both items among ``item_pks`` when given) that have a majority
    (:func:`pair_majority`)."""
    votes: dict[tuple[int, int], list[str]] = {}
    group: dict[tuple[int, int], str] = {}
    for v in people_votes(db, task, item_pks):
        votes.setdefault((v.item_a, v.item_b), []).append(v.winner)
        group[(v.item_a, v.item_b)] = v.group
    return {k: (w, group[k]) for k, w in ((k, pair_majority(v)) for k, v in votes.items())
            if w is not None}
