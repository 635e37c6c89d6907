"""Does a checklist grown from the seeds, with the dev-only evidence rule as the only reviewer,
agree with the experts as well as the authors' published checklist? (``checkeval bench
grounded``; issue 37 § 5.)

On SummEval's first ``docs`` documents — the first half dev, the second half held out
(a split named group by group) — one task holds three frozen checklist versions:

* **(a) seeds** — the CheckEval authors' seed questions;
* **(c) grown** — the seeds plus what ``generator`` writes from them (diversification,
  elaboration) and from dev pairs people scored apart (contrastive), each proposal tested by
  ``judge`` on ``items`` dev items per dimension (:mod:`checkeval_core.checklists.evidence`)
  and kept when the dev-only rule raises no flag, rejected with the flag otherwise — no person
  in the loop;
* **(b) published** — the authors' published checklist (imported after (c) was frozen).

``judge`` then runs ``method`` on every version (the held-out documents only: nothing is
reported on the dev ones, and the runs are most of the bench's hours) — ``checkeval`` (a
sub-dimension's questions in one request, the paper's way) by default, or ``rocketeval`` (one
request per question, the way the evidence rule asked them on dev) — and
:func:`checkeval_core.analysis.versions.version_diff` reads the held-out agreement with the
experts of (c) and of (b) against (a), and of (c) against (b): Δ with its paired group
interval, smallest detectable change and verdict. Reported beside it: how many generated
questions were copies, flagged, kept, and how long generation took — the generator's time per
request as it was asked (a rerun served from the request cache reports the same seconds, not
the lookups), beside the wall time of this process and how many requests the cache answered.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from checkeval_core.analysis.versions import delta_rows, version_diff, versions_report
from checkeval_core.bench import quality as Q
from checkeval_core.checklists.editing import dimensions, questions
from checkeval_core.checklists.evidence import question_evidence
from checkeval_core.checklists.grounded import generate
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.review import decide
from checkeval_core.checklists.seeds import seeds_only
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.judges.registry import get_judge
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.options import check_method
from checkeval_core.safeio import load_json_text
from checkeval_core.store import open_db
from checkeval_core.task_split import filter_items_by_split, set_explicit_split
from checkeval_core.tasks import items as task_items

GROW = ("diversify", "elaborate", "contrastive")
RULE = "dev-only evidence rule"


def bench_grounded(data: str | Path | None = None, generator: str = "embedded:quality",
                   judge: str = "embedded", docs: int = 32, items: int = 24, n: int = 4,
                   db_file: str | Path | None = None, n_boot: int = 200,
                   progress: bool = False, engine: Any = None,
                   method: str = "checkeval") -> dict[str, Any]:
    """See the module doc. Returns ``{"task", "db", "method", "versions": {"seeds", "grown",
    "published"}, "generation": {"seconds", "wall_seconds", "requests", "from_cache", "added",
    "copies", "flagged", "kept", "by_strategy"}, "heldout": {"grown_vs_seeds": [...],
    "published_vs_seeds": [...], "grown_vs_published": [...]}}``. ``engine``
    (``runs/ray_engine.RayEngine``): the held-out runs' items are answered by its workers (one
    judge each, one thread), stored here as they arrive; the caller shuts it down."""
    check_method(method)  # before anything is written or asked
    src = Path(data) if data else Q.default_data_dir()
    b = Q.BENCHMARKS["summeval"]
    rows_, groups = Q._load_rows(src, b, docs)
    if len(groups) < 4:
        raise ValueError(f"--docs {docs}: {src / b['file']} gives {len(groups)} document(s); "
                         "give ≥ 4 (half dev, half held out)")
    held = groups[len(groups) // 2:]
    path = Path(db_file) if db_file else Q.default_db().with_name("grounded.db")
    db = open_db(path)
    task = f"summeval-grounded-{docs}-{time.strftime('%Y%m%d-%H%M%S')}"
    ck_file = src / "checklists" / b["checklist"]
    published = load_json_text(Q._read_text(ck_file), ck_file.name)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "data.jsonl"
        f.write_text("".join(json.dumps({k: v for k, v in r.items() if not k.startswith("_")})
                             + "\n" for r in rows_), encoding="utf-8")
        import_file(db, f, task, kind=b["kind"])
        set_explicit_split(db, task, held)
        seeds = Path(tmp) / "seeds.json"
        seeds.write_text(json.dumps(seeds_only(published)), encoding="utf-8")
        import_checklist(db, task, seeds)
    v_seeds = freeze(db, task, note="(a) the authors' seeds")["version"]
    t0 = time.perf_counter()
    gen = get_judge(generator, db=db)  # one model load; it sums what each answer took
    by: dict[str, dict[str, int]] = {}
    for d in [x["name"] for x in dimensions(db, task)]:
        for strategy in GROW:
            if progress:
                print(f"generating: {d} / {strategy}", flush=True)
            r = generate(db, task, d, strategy, generator, n=n, judge_obj=gen)
            s = by.setdefault(strategy, {"added": 0, "copies": 0, "not_yes_no_or_negative": 0})
            s["added"] += len(r["added"])
            s["copies"] += (len(r["copies"]) if "copies" in r else sum(
                "repeats an existing" in p or "copies an existing" in p for p in r["problems"]))
            s["not_yes_no_or_negative"] += r["flagged"]
    wall_s = time.perf_counter() - t0
    ev = question_evidence(db, task, judge, "proposed", items)
    kept = [e["question_id"] for e in ev["questions"] if not e["flag"]]
    for e in ev["questions"]:
        if e["flag"]:
            decide(db, [e["question_id"]], RULE, "reject", f"{e['flag']}: {e['reason']}",
                   role="analysis")
    if kept:
        decide(db, kept, RULE, "keep", role="analysis")
    v_grown = freeze(db, task, note="(c) seeds + generated, kept by the dev-only rule")["version"]
    generated = [q["id"] for q in questions(db, task) if q["origin"] != "seed"]
    import_checklist(db, task, ck_file)
    v_pub = freeze(db, task, note="(b) the authors' published checklist",
                   exclude=generated)["version"]
    held_ids = [it["item_id"] for it in
                filter_items_by_split(db, task, task_items(db, task), "heldout")]
    for v in (v_seeds, v_grown, v_pub):
        if progress:
            print(f"running {judge} ({method}) on version {v}", flush=True)
        rid = create_run(db, task, judge, method, checklist=v, item_ids=held_ids)
        run = execute_run(path, rid, engine=engine)
        if run["status"] != "completed":
            raise RuntimeError(f"run {rid} on version {v}: {run['status']} {run['error']}")
    # one report (its bootstrap) read by the three comparisons: (b) and (c) against (a),
    # and (c) against (b) — whether (c) beats the seeds, and whether it reaches the published
    report = versions_report(db, task, n_boot=n_boot)
    diffs = {k: version_diff(db, task, a, b, report=report) for k, (a, b) in {
        "grown_vs_seeds": (v_seeds, v_grown), "published_vs_seeds": (v_seeds, v_pub),
        "grown_vs_published": (v_pub, v_grown)}.items()}
    return {"task": task, "db": str(path), "generator": generator, "judge": judge,
            "method": method,
            "docs": len(groups), "heldout_docs": held,
            "versions": {"seeds": v_seeds, "grown": v_grown, "published": v_pub},
            "generation": {"seconds": round(gen.answer_ms / 1000, 1),
                           "wall_seconds": round(wall_s, 1),
                           "requests": gen.n_requests + gen.n_cache_hits,
                           "from_cache": gen.n_cache_hits,
                           "added": sum(s["added"] for s in by.values()),
                           "copies": sum(s["copies"] for s in by.values()),
                           "flagged": sum(bool(e["flag"]) for e in ev["questions"]),
                           "kept": len(kept), "by_strategy": by},
            "heldout": {k: delta_rows(d, "heldout") for k, d in diffs.items()}}
