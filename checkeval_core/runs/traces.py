"""One item's Yes/No trace across runs: every question, each run's answer, the scores.

Words on the Traces page mean one thing: the items are ordered by their *score difference*
(|judge − human|, both scaled to 0–1), never called a "gap" (the Analysis page's rank gap);
a cell of a run that did not judge the item says so instead of showing ``None``; a p(Yes) is
shown with as many digits as it takes to see which side of 0.5 it is on.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.people import people_answers
from checkeval_core.runs.labels import run_label  # noqa: F401 - the pages import it from here
from checkeval_core.runs.never_varying import run_never_varying
from checkeval_core.runs.registry import primary_aggregation
from checkeval_core.runs.score_read import run_scores
from checkeval_core.store import rows


def item_trace(db: sqlite_utils.Database, item_pk: int, run_ids: list[int]) -> dict[str, Any]:
    """``{"item", "runs", "answers", "scores", "units", "human", "people"}`` (SQL by
    index on (item_id, question_id): cost grows with this item's answers only); ``people``:
    ``{question id: 'yes' | 'no'}``, the people's labels of the item (settled, else the
    majority; no tie), and ``people_votes`` ``{question id: {annotator: their last yes/no}}``,
    both from the one record (:func:`checkeval_core.people.people_answers`)."""
    item = rows(db, "SELECT * FROM item WHERE id = ?", [item_pk])
    if not item or not run_ids:
        return {"item": item[0] if item else None, "runs": [], "answers": [], "scores": [],
                "units": [], "human": {}, "people": {}, "people_votes": {}}
    marks = ",".join("?" * len(run_ids))
    runs = rows(db, f"SELECT id, judge_spec, method, params FROM run WHERE id IN ({marks}) "
                    "ORDER BY id", run_ids)
    for r in runs:
        r["aggregation"] = primary_aggregation(r)
        del r["params"]
    answers = rows(db, "SELECT a.run_id, a.question_id, a.unit, a.dimension, a.verdict, a.p_yes, "
                       "a.value, a.raw, a.error, a.judge, a.a_verdict, a.a_p_yes, "
                       "q.text AS question, s.name AS sub_dimension "
                       "FROM answer a LEFT JOIN question q ON q.id = a.question_id "
                       "LEFT JOIN sub_dimension s ON s.id = q.sub_dimension_id "
                       f"WHERE a.item_id = ? AND a.run_id IN ({marks}) "
                       "ORDER BY a.dimension, s.position, q.position, a.question_id, a.unit",
                   [item_pk, *run_ids])
    scores = rows(db, f"SELECT run_id, dimension, aggregation, value FROM score WHERE item_id = ? "
                      f"AND run_id IN ({marks}) ORDER BY dimension, aggregation",
                  [item_pk, *run_ids])
    units = rows(db, f"SELECT run_id, dimension, unit, kind, text FROM seal_unit WHERE item_id = ? "
                     f"AND run_id IN ({marks}) ORDER BY dimension, position", [item_pk, *run_ids])
    human = {r["dimension"]: r["value"] for r in rows(
        db, "SELECT dimension, value FROM human_score WHERE item_id = ? AND annotator = ''",
        [item_pk])}
    record = people_answers(db, item[0]["task_id"], [item_pk])
    people = {q: p.label for (_, q), p in record.items() if p.label is not None}
    votes = {q: dict(p.answers) for (_, q), p in record.items() if p.answers}
    return {"item": item[0], "runs": runs, "answers": answers, "scores": scores, "units": units,
            "human": human, "people": people, "people_votes": votes}


def disagreements(answers: list[dict[str, Any]], people: dict[int, str] | None = None
                  ) -> set[tuple[int, str]]:
    """(question_id, unit) keys where runs give different verdicts, or differ from the
    people's label of the question (``people``: ``{question id: 'yes' | 'no'}``, the item's
    :func:`checkeval_core.people.people_labels` — a tie is no label, so it never counts)."""
    by: dict[tuple[int, str], set[str]] = {}
    for a in answers:
        if a["verdict"] in ("yes", "no"):
            by.setdefault((a["question_id"], a["unit"]), set()).add(a["verdict"])
    out = {k for k, v in by.items() if len(v) > 1}
    for (qid, unit), v in by.items():
        if people and qid in people and v != {people[qid]}:
            out.add((qid, unit))
    return out


def items_by_gap(db: sqlite_utils.Database, run_id: int, dimension: str,
                 aggregation: str | None = None) -> list[dict[str, Any]]:
    """Items sorted by |judge score − human score| (both min-max scaled to 0–1 over the run)."""
    sc = {r["item_pk"]: r for r in run_scores(db, run_id, aggregation) if
          r["dimension"] == dimension and r["value"] is not None}
    hs = {r[0]: r[1] for r in db.execute(
        "SELECT item_id, value FROM human_score WHERE dimension = ? AND annotator = ''",
        [dimension]) if r[0] in sc}
    if not sc:
        return []

    def scale(d: dict[int, float]) -> dict[int, float]:
        lo, hi = min(d.values()), max(d.values())
        return {k: (v - lo) / (hi - lo) if hi > lo else 0.5 for k, v in d.items()}

    s = scale({k: r["value"] for k, r in sc.items()})
    h = scale(hs) if hs else {}
    out = []
    for k, r in sc.items():
        out.append({"item_pk": k, "item_id": r["item_id"], "group_id": r["group_id"],
                    "system_id": r["system_id"], "judge": r["value"], "human": hs.get(k),
                    "gap": abs(s[k] - h[k]) if k in h else None})
    return sorted(out, key=lambda r: -(r["gap"] if r["gap"] is not None else -1))


# -- what the Traces page shows (the page only renders these) ---------------------------------
VERDICT_MARKS = {"yes": "✓", "no": "✗"}


def run_column(run_id: int) -> str:
    """The short column header of a run in decision tables (the full label goes in its help)."""
    return f"#{run_id}"


NOT_IN_RUN = "not in this run"  # a run that did not judge this item (or this question)


def p_text(p: float) -> str:
    """p(Yes) with 2 decimals, or more when 2 would show 0.50 for a value that is not 0.5
    (``✗ 0.4987`` next to ``✓ 0.5013``: the side of 0.5 decides the verdict)."""
    for digits in range(2, 7):
        text = f"{p:.{digits}f}"
        if p == 0.5 or text.rstrip("0") != "0.5":
            return text
    return f"{p:.6f}"


#: A Yes/No answer whose p(Yes) is within this of 0.5 is a coin flip: the same judge, version
#: and items rerun on another llama.cpp build moved p(Yes) by up to 0.044 and flipped 4 of 39
#: such answers (the README run against the shipped one). Marked ``≈`` in Traces; counted by judge health.
COIN_FLIP_BAND = 0.05
COIN_FLIP_MARK = "≈"


def coin_flip(verdict: str, p_yes: float | None) -> bool:
    """True for a Yes/No answer whose p(Yes) lies within :data:`COIN_FLIP_BAND` of 0.5."""
    return verdict in VERDICT_MARKS and p_yes is not None and abs(p_yes - 0.5) < COIN_FLIP_BAND


def verdict_cell(verdict: str, p_yes: float | None = None, value: float | None = None) -> str:
    """A compact cell: ``✓ 0.82`` / ``✗ 0.10`` / ``invalid``; a Likert answer shows its value;
    a coin flip (:func:`coin_flip`) ends in ``≈``: ``✓ 0.52 ≈``."""
    if value is not None:
        return f"{value:g}" + (f" ({p_text(p_yes)})" if p_yes is not None else "")
    if verdict not in VERDICT_MARKS:
        return "invalid"
    mark = VERDICT_MARKS[verdict]
    if p_yes is None:
        return f"{mark} {verdict}"
    return f"{mark} {p_text(p_yes)}" + (f" {COIN_FLIP_MARK}" if coin_flip(verdict, p_yes)
                                         else "")


def coin_flip_line(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """How many of the decision cells shown are coin flips, or '' when none."""
    cells = [str(r.get(c, "")) for r in rows for c in columns]
    n = sum(c.endswith(COIN_FLIP_MARK) for c in cells)
    decided = sum(c[:1] in VERDICT_MARKS.values() for c in cells)
    if not n:
        return ""
    return (f"{n} of {decided} decisions shown are coin flips ({COIN_FLIP_MARK}: p(Yes) within "
            f"{COIN_FLIP_BAND:g} of 0.5) — a rerun on another build or CPU can flip them.")


def answer_cell(answer: dict[str, Any], run_judge: str) -> str:
    """:func:`verdict_cell` of a stored answer; one a second judge gave (an escalating run)
    says so and what the run's own judge had said:
    ``✓ 0.83 by embedded:quality (embedded said ✗ 0.48)``."""
    cell = verdict_cell(answer["verdict"], answer["p_yes"], answer["value"])
    by = answer.get("judge")
    if not by or by == run_judge:
        return cell
    first = verdict_cell(answer["a_verdict"] or "", answer.get("a_p_yes")) \
        if answer.get("a_verdict") else "no answer kept"
    return f"{cell} by {by} ({run_judge} said {first})"


PEOPLE = "people"  # the column of people's answers to a question on this item


def people_cell(votes: dict[str, str]) -> str:
    """``✓ 2 · ✗ 1``: how many people said yes and no."""
    yes = sum(v == "yes" for v in votes.values())
    return f"✓ {yes} · ✗ {len(votes) - yes}"


def score_text(value: float | None, missing: str = NOT_IN_RUN) -> str:
    """A score for a text cell: 3 significant digits, or why there is none."""
    return missing if value is None else f"{value:.3g}"


def run_dimensions(db: sqlite_utils.Database, run_id: int) -> list[str]:
    """Dimensions this run has scores for."""
    return [r[0] for r in db.execute("SELECT DISTINCT dimension FROM score WHERE run_id = ? "
                                     "ORDER BY dimension", [run_id])]


def first_run_with_answers(db: sqlite_utils.Database, run_ids: list[int]) -> int | None:
    """The first of ``run_ids`` that has stored answers (a run still starting has none)."""
    for rid in run_ids:
        if db.execute("SELECT 1 FROM answer WHERE run_id = ? LIMIT 1", [rid]).fetchone():
            return rid
    return None


def item_listing(db: sqlite_utils.Database, run_id: int, dimension: str | None
                 ) -> list[dict[str, Any]]:
    """The items to pick from: by |judge − human| on ``dimension`` when the run has scores,
    else every item the run answered (gap ``None``)."""
    listing = items_by_gap(db, run_id, dimension) if dimension else []
    if listing:
        return listing
    return [{"item_pk": r["id"], "item_id": r["item_id"], "group_id": r["group_id"],
             "system_id": r["system_id"], "judge": None, "human": None, "gap": None}
            for r in rows(db, "SELECT id, item_id, group_id, system_id FROM item WHERE id IN "
                              "(SELECT DISTINCT item_id FROM answer WHERE run_id = ?) "
                              "ORDER BY position, id", [run_id])]


def deep_link_task(db: sqlite_utils.Database, run_ids: list[int]) -> str | None:
    """The task of the first existing run among ``run_ids`` (so a link opens on its task)."""
    for rid in run_ids:
        r = db.execute("SELECT t.name FROM run r JOIN task t ON t.id = r.task_id WHERE r.id = ?",
                       [rid]).fetchone()
        if r:
            return r[0]
    return None


SHOW_FILTERS = ("all questions", "judges disagree", "disagree with humans or judges",
                "never-varying questions")


def decision_rows(trace: dict[str, Any], show: str = "all questions",
                  dimension: str | None = None,
                  db: sqlite_utils.Database | None = None) -> list[dict[str, Any]]:
    """One row per question (or SEAL unit / Likert dimension) with one compact cell per run
    (column :func:`run_column`; :data:`NOT_IN_RUN` where a run has no answer), filtered by
    ``show`` (one of :data:`SHOW_FILTERS`) and, when given, to one ``dimension``.
    "never-varying questions" — which needs ``db`` — keeps the questions one of the runs
    answers the same way on every item (see
    :func:`checkeval_core.runs.never_varying.never_varying`).

    Row keys: ``dimension``, ``sub-dimension``, ``question``, ``question_id``, ``unit``,
    ``raw`` (``{run column: the judge's raw answer}``) and the run columns (an escalated
    answer names the judge that gave it: :func:`answer_cell`); when people answered this
    item's questions, ``people`` (:func:`people_cell`) and ``people_detail`` (who said what)."""
    if show not in SHOW_FILTERS:
        raise ValueError(f"show must be one of {SHOW_FILTERS}")
    if show == SHOW_FILTERS[3]:
        if db is None:
            raise ValueError("the never-varying filter reads the runs' answers: pass db")
        # a scan of each run's answers (remembered per run state), so only when this filter
        # is chosen — never in item_trace
        nv = [run_never_varying(db, r["id"]) for r in trace["runs"]]
        dis = {(a["question_id"], a["unit"]) for a in trace["answers"]
               if any(a["question_id"] in q for q in nv)}
    else:
        dis = disagreements(trace["answers"], trace["people"]
                            if show == SHOW_FILTERS[2] else None)
    table: dict[tuple, dict[str, Any]] = {}
    judge_of = {r["id"]: r["judge_spec"] for r in trace["runs"]}
    people = trace.get("people_votes") or {}
    for a in trace["answers"]:
        unit = a["unit"] or ""
        sub = a["sub_dimension"] or (unit.split("|")[1] if "|" in unit else "")
        key = (a["question_id"], unit)
        row = table.setdefault(key, {"dimension": a["dimension"], "sub-dimension": sub,
                                     "question": a["question"] or unit,
                                     "question_id": a["question_id"], "unit": unit, "raw": {}})
        col = run_column(a["run_id"])
        row[col] = answer_cell(a, judge_of.get(a["run_id"], ""))
        row["raw"][col] = a["error"] or a["raw"] or ""
        if people:
            votes = people.get(a["question_id"], {})
            row[PEOPLE] = people_cell(votes) if votes else "no one answered"
            row["people_detail"] = ", ".join(f"{k} {v}" for k, v in sorted(votes.items()))
    cols = [run_column(r["id"]) for r in trace["runs"]]
    for row in table.values():
        for col in cols:
            row.setdefault(col, NOT_IN_RUN)
    return [row for key, row in table.items() if (show == SHOW_FILTERS[0] or key in dis)
            and (dimension is None or row["dimension"] == dimension)]


def unit_rows(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """SEAL units with their sub-dimension verdicts as coloured squares, per run."""
    verdicts: dict[tuple, list[str]] = {}
    for a in trace["answers"]:
        if "|" in (a["unit"] or ""):
            dim, _sub, idx = a["unit"].split("|", 2)
            verdicts.setdefault((a["run_id"], dim, idx), []).append(a["verdict"])
    out = []
    for u in trace["units"]:
        v = verdicts.get((u["run_id"], u["dimension"], u["unit"]), [])
        out.append({"run": run_column(u["run_id"]), "dimension": u["dimension"],
                    "kind": u["kind"], "unit": u["text"],
                    "verdicts": "🟩" * v.count("yes") + "🟥" * v.count("no")
                    + "🟨" * v.count("invalid")})
    return out


def score_rows(trace: dict[str, Any], all_aggregations: bool = False) -> list[dict[str, Any]]:
    """Per dimension: the human score and each run's score in its own (primary) aggregation
    (run columns); with ``all_aggregations`` one row per (dimension, aggregation). Cells are
    text: a score, or why there is none ("no human score", :data:`NOT_IN_RUN`)."""
    answered = {a["run_id"] for a in trace["answers"]}
    missing = {run_column(r["id"]): "no score (no valid answer)" if r["id"] in answered
               else NOT_IN_RUN for r in trace["runs"]}
    out_rows = _score_rows(trace, all_aggregations)
    for row in out_rows:
        row["human"] = score_text(row.get("human"), "no human score")
        for col, why in missing.items():
            row[col] = score_text(row.get(col), why)
    return out_rows


def _score_rows(trace: dict[str, Any], all_aggregations: bool) -> list[dict[str, Any]]:
    primary = {r["id"]: r["aggregation"] for r in trace["runs"]}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if not all_aggregations:
        for s in trace["scores"]:
            if s["aggregation"] == primary.get(s["run_id"]):
                row = out.setdefault((s["dimension"], ""), {
                    "dimension": s["dimension"], "human": trace["human"].get(s["dimension"])})
                row[run_column(s["run_id"])] = s["value"]
        for dim, v in trace["human"].items():
            out.setdefault((dim, ""), {"dimension": dim, "human": v})
        return [out[k] for k in sorted(out)]
    for s in trace["scores"]:
        row = out.setdefault((s["dimension"], s["aggregation"]),
                             {"dimension": s["dimension"], "aggregation": s["aggregation"],
                              "human": trace["human"].get(s["dimension"])})
        row[run_column(s["run_id"])] = s["value"]
    for dim, v in trace["human"].items():
        if not any(k[0] == dim for k in out):
            out[(dim, "")] = {"dimension": dim, "aggregation": "", "human": v}
    return [out[k] for k in sorted(out)]
