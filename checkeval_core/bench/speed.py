"""The judge speed benchmark (``checkeval bench speed``): naive prompts against prefix reuse
on the first SummEval demo item, and the embedded engine's raw prefill rate."""

from __future__ import annotations

import json
import time
from typing import Any

from checkeval_core.config import data_dir
from checkeval_core.judges.registry import load_backend, parse_spec
from checkeval_core.prompts.judge import binary_request_for_item


def bench_item_and_questions(n: int) -> tuple[dict[str, Any], list[str]]:
    """The first SummEval demo item (~600 tokens) and up to ``n`` published seed questions."""
    first = json.loads((data_dir() / "summeval_demo.jsonl").read_text("utf-8").splitlines()[0])
    ck = json.loads((data_dir() / "checklists" / "summeval.json").read_text("utf-8"))
    qs = [q for d in ck.values() for s in d["sub_dimensions"].values() for q in s["seed"]]
    qs += [q for d in ck.values() for s in d["sub_dimensions"].values()
           for q in s["diversification"] if q not in qs]
    return first, qs[:n]


def bench_speed(spec: str, n_questions: int = 15) -> dict[str, Any]:
    """Naive (full prompt per question) vs prefix reuse, and the engine's raw prefill rate."""
    item, qs = bench_item_and_questions(n_questions)
    reqs = [binary_request_for_item(item, q, "summarization") for q in qs]
    parsed = parse_spec(spec)
    reuse_judge = load_backend(spec)
    naive_judge = load_backend(spec, reuse=False) if parsed.backend == "embedded" else reuse_judge
    reuse_judge.binary(reqs[:1])  # load the model, warm up
    out: dict[str, Any] = {"judge": spec, "questions": len(qs)}
    if parsed.backend == "embedded":
        from checkeval_core.judges import embedded

        eng = embedded._engine(parsed.variant)
        tokens, bounds = eng.segments(reqs[0])
        t0 = time.perf_counter()
        eng.eval_segments(tokens, [len(tokens)], reuse=False)
        prefill_s = time.perf_counter() - t0
        out["prefill_tok_s"] = round(len(tokens) / prefill_s, 1)
        out["prompt_tokens"] = len(tokens)
        prefix = bounds[-2] if len(bounds) > 1 else 0
        unique = prefix + sum(len(eng.segments(r)[0]) - prefix for r in reqs)
        out["unique_tokens"] = unique
        eng.forget_kv()
    t0 = time.perf_counter()
    naive = naive_judge.binary(reqs)
    naive_s = time.perf_counter() - t0
    if parsed.backend == "embedded":
        embedded._engine(parsed.variant).forget_kv()
    t0 = time.perf_counter()
    reuse = reuse_judge.binary(reqs)
    reuse_s = time.perf_counter() - t0
    out["naive_s_per_q"] = round(naive_s / len(qs), 3)
    out["reuse_s_per_q"] = round(reuse_s / len(qs), 3)
    out["speedup"] = round(naive_s / reuse_s, 2) if reuse_s > 0 else None
    if "prefill_tok_s" in out:
        out["engine_bound_s"] = round(out["unique_tokens"] / out["prefill_tok_s"], 3)
        out["efficiency"] = round(out["engine_bound_s"] / reuse_s, 3)
    diffs = [abs(a.p_yes - b.p_yes) for a, b in zip(naive, reuse)
             if a.p_yes is not None and b.p_yes is not None]
    out["max_abs_p_yes_diff"] = round(max(diffs), 4) if diffs else None
    out["same_verdicts"] = sum(a.verdict == b.verdict for a, b in zip(naive, reuse))
    return out
