"""``checkeval bench scale``: the pages' queries on a scratch database of N synthetic answers.

Builds 4 judge runs over one task with 122 questions per item (items = N / 488), fills the
answer and score tables, then times (median of 5) what the pages do: one item's trace across
the 4 runs, per-dimension mean scores of one run, the disagreement filter for one item, and
the count of disagreeing (item, question) pairs across the runs for the whole task. Then
random human scores are added and the Compare runs view is timed (``compare_runs`` of runs 1
and 2 with 500 paired resamples), with its ratio to that whole-task count measured in the
same run; then the Analysis page's first view of runs 1 and 2: until its first chart and
whole (:func:`_analysis_view`), each with its ratio to that count. Peak memory (max RSS, read before the Compare timing) is reported; nothing loads
whole tables into memory.
"""

from __future__ import annotations

import random
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from checkeval_core.analysis.analysis_view import (
    analysis_page,
    evidence_page,
    first_chart,
    page_data,
)
from checkeval_core.analysis.calibrate import calibrated_view, run_calibrated
from checkeval_core.analysis.compare import compare_runs
from checkeval_core.analysis.diagnostics import items_behind
from checkeval_core.analysis.health import runs_health
from checkeval_core.analysis.judge_agreement import judge_agreement
from checkeval_core.runs.score_read import dimension_means
from checkeval_core.runs.traces import disagreements, item_trace
from checkeval_core.store import now_iso, open_db
from checkeval_core.tasks import count_items, items

N_RUNS = 4
N_QUESTIONS = 122
DIMS = ("coherence", "consistency", "fluency", "relevance")


def _timed(fn: Any, repeat: int = 5) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def bench_scale(n_answers: int = 1_000_000, path: str | None = None) -> dict[str, Any]:
    tmp = tempfile.mkdtemp() if path is None else None
    db = open_db(path or Path(tmp) / "scale.db")
    rng = random.Random(0)
    n_items = max(1, n_answers // (N_RUNS * N_QUESTIONS))
    now = now_iso()
    t0 = time.perf_counter()
    conn = db.conn
    conn.execute("BEGIN")
    conn.execute("INSERT INTO task (name, kind, created_at) VALUES ('scale', 'summarization', ?)",
                 [now])
    conn.executemany("INSERT INTO item (task_id, item_id, group_id, system_id, output, position) "
                     "VALUES (1, ?, ?, ?, 'text', ?)",
                     [(f"i{i}", f"g{i // 16}", f"M{i % 16}", i) for i in range(n_items)])
    conn.execute("INSERT INTO dimension (task_id, name) VALUES (1, 'coherence')")
    conn.executemany("INSERT INTO question (task_id, dimension_id, text, created_at) "
                     "VALUES (1, 1, ?, ?)", [(f"Question {q}?", now) for q in range(N_QUESTIONS)])
    conn.execute("INSERT INTO checklist_version (task_id, version, hash, content, n_questions, "
                 "created_at) VALUES (1, 1, 'h', '{}', 122, ?)", [now])
    for r in range(1, N_RUNS + 1):
        # started with the aggregation its scores hold, as a real run is
        conn.execute("INSERT INTO run (task_id, checklist_version_id, judge_spec, method, "
                     "params, status, created_at) VALUES (1, 1, ?, 'rocketeval', "
                     "'{\"aggregation\": \"share_yes\"}', 'completed', ?)", [f"judge-{r}", now])
    batch = []
    for r in range(1, N_RUNS + 1):
        for i in range(1, n_items + 1):
            for q in range(1, N_QUESTIONS + 1):
                p = rng.random()
                batch.append((r, i, q, DIMS[q % 4], "yes" if p >= 0.5 else "no", p, now))
            if len(batch) >= 50_000:
                conn.executemany("INSERT INTO answer (run_id, item_id, question_id, dimension, "
                                 "verdict, p_yes, created_at) VALUES (?,?,?,?,?,?,?)", batch)
                batch = []
    if batch:
        conn.executemany("INSERT INTO answer (run_id, item_id, question_id, dimension, verdict, "
                         "p_yes, created_at) VALUES (?,?,?,?,?,?,?)", batch)
    conn.executemany("INSERT INTO score (run_id, item_id, dimension, aggregation, value) "
                     "VALUES (?, ?, ?, 'share_yes', ?)",
                     [(r, i, d, rng.random()) for r in range(1, N_RUNS + 1)
                      for i in range(1, n_items + 1) for d in DIMS])
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    fill_s = time.perf_counter() - t0
    n = db.execute("SELECT COUNT(*) FROM answer").fetchone()[0]
    mid = n_items // 2
    runs = list(range(1, N_RUNS + 1))
    out = {
        "answers": n, "items": n_items, "runs": N_RUNS, "questions": N_QUESTIONS,
        "fill_s": round(fill_s, 1),
        "item_trace_s": round(_timed(lambda: item_trace(db, mid, runs)), 4),
        "dimension_scores_s": round(_timed(lambda: dimension_means(db, 1, "share_yes")), 4),
        "item_disagreement_s": round(_timed(lambda: disagreements(
            item_trace(db, mid, runs)["answers"])), 4),
        "task_disagreement_count_s": round(_timed(lambda: db.execute(
            "SELECT COUNT(*) FROM (SELECT item_id, question_id FROM answer WHERE run_id IN "
            "(1, 2, 3, 4) GROUP BY item_id, question_id HAVING MIN(verdict) != MAX(verdict))"
        ).fetchone(), repeat=3), 4),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    # The Compare runs view, after the figures above so that they keep their meaning (its
    # frames are not in max_rss_mb): it needs human scores, one per item and dimension.
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO human_score (item_id, dimension, value) VALUES (?, ?, ?)",
                     [(i, d, float(rng.randint(1, 5))) for i in range(1, n_items + 1)
                      for d in DIMS])
    conn.execute("COMMIT")
    out["compare_runs_s"] = round(_timed(lambda: compare_runs(db, 1, 2, "share_yes",
                                                              n_boot=500)), 4)
    out["compare_over_task_disagreement"] = round(
        out["compare_runs_s"] / max(out["task_disagreement_count_s"], 1e-6), 2)
    out.update(_analysis_view(db, out["task_disagreement_count_s"]))
    db.close()
    return out


def _analysis_view(db: Any, reference_s: float) -> dict[str, Any]:
    """The Analysis page's first view of runs 1 and 2 (its defaults: sample level, Spearman,
    100 resamples, the shared items, no ensemble), nothing cached: the time until its first
    chart (the point values, ``first_chart``; median of 3) and of the whole view (the full
    report with every interval and the agreement of the runs, the agreement across judges,
    the page's figures, judge health, the items behind a bar, the calibrated estimates, humans
    and question diagnostics; once), each also over
    the reference query (``task_disagreement_count_s``) of the same run."""
    runs, level, coef = [1, 2], "sample_level", "spearman"

    def full() -> None:
        report = page_data(db, "scale", runs, (), None, False, "mean", 100, True)
        analysis_page(db, "scale", runs, (), None, level, coef, report=report,
                      judges=judge_agreement(db, "scale"))
        runs_health(db, runs, None)
        items_behind(db, runs[0], "coherence", None,
                     only=report["coverage"]["shared_item_pks"])
        calibrated_view(run_calibrated(db, runs[0], None, aggregation=None))
        evidence_page(db, "scale", runs)

    first = round(_timed(lambda: first_chart(db, "scale", runs, (), None, level, coef),
                         repeat=3), 4)
    whole = round(_timed(full, repeat=1), 3)
    ref = max(reference_s, 1e-6)
    return {"analysis_first_chart_s": first, "analysis_full_s": whole,
            "analysis_first_chart_over_task_disagreement": round(first / ref, 2),
            "analysis_full_over_task_disagreement": round(whole / ref, 2)}


def bench_task_pages(n_items: int = 100_000, path: str | None = None) -> dict[str, Any]:
    """The Data page's and a small run's reads on a task of ``n_items`` items (~600-character
    outputs, 4 human scores each): one page of 100 by offset, the count, a 2-item pick by
    internal id — against reading the whole task, as the pages did before. Peak memory is read
    before and after the whole-task read, so the ratio of the two costs is measured in one run.
    """
    tmp = tempfile.mkdtemp() if path is None else None
    db = open_db(path or Path(tmp) / "task.db")
    now = now_iso()
    text = "lorem ipsum dolor sit amet " * 22
    conn = db.conn
    t0 = time.perf_counter()
    conn.execute("BEGIN")
    conn.execute("INSERT INTO task (name, kind, created_at) VALUES ('big', 'summarization', ?)",
                 [now])
    conn.executemany("INSERT INTO item (task_id, item_id, group_id, system_id, output, position) "
                     "VALUES (1, ?, ?, ?, ?, ?)",
                     [(f"i{i}", f"g{i // 16}", f"M{i % 16}", text, i) for i in range(n_items)])
    conn.executemany("INSERT INTO human_score (item_id, dimension, value) VALUES (?, ?, ?)",
                     [(i, d, (i * 7 + k) % 5 + 1) for i in range(1, n_items + 1)
                      for k, d in enumerate(DIMS)])
    conn.execute("COMMIT")
    fill_s = time.perf_counter() - t0
    mid = n_items // 2
    rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # noqa: E731
    out: dict[str, Any] = {
        "items": n_items, "fill_s": round(fill_s, 1),
        "count_s": round(_timed(lambda: count_items(db, "big")), 4),
        "page_of_100_s": round(_timed(lambda: items(db, "big", limit=100, offset=mid)), 4),
        "two_items_by_pk_s": round(_timed(lambda: items(db, "big", pks=[3, mid])), 4),
    }
    out["max_rss_mb_before_whole_read"] = round(rss(), 1)
    out["whole_task_s"] = round(_timed(lambda: items(db, "big"), repeat=1), 3)
    out["max_rss_mb_after_whole_read"] = round(rss(), 1)
    out["whole_over_page_ratio"] = round(out["whole_task_s"] / max(out["page_of_100_s"], 1e-6))
    db.close()
    return out
