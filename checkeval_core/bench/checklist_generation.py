"""How many usable questions checklist generation yields per 10 asked, and how many questions
filtering decides on — list/JSON prompts vs the small-judge modes (one question per
generation under a grammar; Yes/No filtering), on the demo tasks' seed questions.

    .venv/bin/python -m checkeval_core.bench.checklist_generation --judge embedded [--dims 2] [--out FILE.json]

For each demo task and each of its first ``--dims`` dimensions (first sub-dimension, its
first seed): diversify and elaborate with ``--n`` questions asked (default 10), in ``list``
and ``single`` mode, then filter the dimension's pool in ``json`` and ``binary`` mode. A
question is *usable* when it parses as a positive Yes/No question about the task's own kind
of text (``checklists.augment.usable``). Runs on a temporary database (no request cache
from earlier runs), prints a Markdown table and writes the raw numbers as JSON.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from checkeval_core.checklists.augment import augment, subject_noun, usable
from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.filtering import filter_dimension
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.review import restore_filtered
from checkeval_core.config import data_dir
from checkeval_core.datasets import import_file
from checkeval_core.store import open_db

TASKS = [("summeval", "summarization", "summeval_demo.jsonl", "summeval.json"),
         ("topical-chat", "dialogue", "topical_chat_demo.jsonl", "topical_chat.json")]


def seeds_only(src: dict, dims: int) -> dict:
    """The published checklist cut to its seed questions: the first sub-dimension of the
    first ``dims`` dimensions (generation then starts where CheckEval's humans started)."""
    out = {}
    for d, v in list(src.items())[:dims]:
        sub, q = next(iter(v["sub_dimensions"].items()))
        out[d] = {"definition": v["definition"], "sub_dimensions": {sub: {"seed": q["seed"][:1]}}}
    return out


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge", default="embedded")
    ap.add_argument("--dims", type=int, default=2)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp) / "gen.db")
        for name, kind, data, ck in TASKS:
            import_file(db, data_dir() / data, name, kind)
            src = json.loads((data_dir() / "checklists" / ck).read_text())
            p = Path(tmp) / f"{name}.json"
            p.write_text(json.dumps(seeds_only(src, args.dims)))
            import_checklist(db, name, p)
            noun = subject_noun(kind)
            for dim in list(src)[: args.dims]:
                for strategy in ("diversify", "elaborate"):
                    for mode in ("list", "single"):
                        t0, c0 = time.perf_counter(), cpu()
                        res = augment(db, name, dim, strategy, args.judge, n=args.n, mode=mode)
                        texts = [a["text"] for a in res["added"]]
                        rows.append({"task": name, "dimension": dim, "step": strategy,
                                     "mode": mode, "asked": args.n, "proposed": len(texts),
                                     "usable": sum(usable(t, noun) for t in texts),
                                     "questions": texts, "problems": len(res["problems"]),
                                     "wall_s": round(time.perf_counter() - t0, 1),
                                     "cpu_s": round(cpu() - c0, 1)})
                        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
                pool = [q for q in questions(db, name, dimension=dim)
                        if q["status"] in ("proposed", "kept")]
                for mode in ("json", "binary"):
                    # each mode starts from the same pool: undo the other mode's removals
                    restore_filtered(db)
                    t0, c0 = time.perf_counter(), cpu()
                    res = filter_dimension(db, name, dim, args.judge, mode=mode, scope="all")
                    rows.append({"task": name, "dimension": dim, "step": "filter", "mode": mode,
                                 "asked": len(pool), "decided": len(res["decisions"]),
                                 "removed": res["removed"], "flagged": res["flagged"],
                                 "problems": len(res["problems"]),
                                 "wall_s": round(time.perf_counter() - t0, 1),
                                 "cpu_s": round(cpu() - c0, 1)})
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print("| task | step | mode | asked | proposed | usable | usable per 10 asked | decided | wall s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    keys = sorted({(r["task"], r["step"], r["mode"]) for r in rows},
                  key=lambda k: (k[0], ["diversify", "elaborate", "filter"].index(k[1]), k[2]))
    for task, step, mode in keys:
        rs = [r for r in rows if (r["task"], r["step"], r["mode"]) == (task, step, mode)]
        asked = sum(r["asked"] for r in rs)
        wall = sum(r["wall_s"] for r in rs)
        if step == "filter":
            decided = sum(r["decided"] for r in rs)
            print(f"| {task} | {step} | {mode} | {asked} | – | – | – | {decided} of {asked} | {wall:.0f} |")
        else:
            prop, use = sum(r["proposed"] for r in rs), sum(r["usable"] for r in rs)
            print(f"| {task} | {step} | {mode} | {asked} | {prop} | {use} | "
                  f"{10 * use / asked:.1f} | – | {wall:.0f} |")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
