"""The judge speed benchmark (``checkeval bench speed``): naive prompts against prefix reuse
on the first SummEval demo item, and the embedded engine's raw prefill rate."""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from checkeval_core.config import data_dir
from checkeval_core.judges import embedded
from checkeval_core.judges.registry import load_backend, parse_spec
from checkeval_core.prompts.judge import binary_request_for_item

# llama_cpp is imported where the build's CPU features are read: it loads a native library.


def bench_item_and_questions(n: int) -> tuple[dict[str, Any], list[str]]:
    """The first SummEval demo item (~600 tokens) and up to ``n`` published seed questions."""
    first = json.loads((data_dir() / "summeval_demo.jsonl").read_text("utf-8").splitlines()[0])
    ck = json.loads((data_dir() / "checklists" / "summeval.json").read_text("utf-8"))
    qs = [q for d in ck.values() for s in d["sub_dimensions"].values() for q in s["seed"]]
    qs += [q for d in ck.values() for s in d["sub_dimensions"].values()
           for q in s["diversification"] if q not in qs]
    return first, qs[:n]


def _timed(fn: Any, *args: Any) -> tuple[Any, float, float]:
    """``fn(*args)``, its wall time and this process's CPU time (s)."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - w0, time.process_time() - c0


def bench_speed(spec: str, n_questions: int = 15) -> dict[str, Any]:
    """Naive (full prompt per question) vs prefix reuse, and the engine's raw prefill rate.
    For the embedded judge also prefix reuse with the questions one after another instead of
    side by side (``sequential_*``), in the same process."""
    item, qs = bench_item_and_questions(n_questions)
    reqs = [binary_request_for_item(item, q, "summarization") for q in qs]
    parsed = parse_spec(spec)
    probe = load_backend(spec)
    # an engine that can answer side by side: its reuse path is timed side by side (parallel
    # sequences), the default one-by-one path below as "sequential"
    embedded_backend = probe.capabilities.parallel_sequences
    reuse_judge = load_backend(spec, parallel=True) if embedded_backend else probe
    naive_judge = load_backend(spec, reuse=False) if embedded_backend else reuse_judge
    reuse_judge.binary(reqs[:1])  # load the model, warm up
    out: dict[str, Any] = {"judge": spec, "questions": len(qs)}
    if embedded_backend:
        eng = embedded._engine(parsed.variant)
        out["cpu_features"] = _cpu_features()
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
    naive, naive_s, _ = _timed(naive_judge.binary, reqs)
    if embedded_backend:
        embedded._engine(parsed.variant).forget_kv()
    reuse, reuse_s, reuse_cpu = _timed(reuse_judge.binary, reqs)
    out["naive_s_per_q"] = round(naive_s / len(qs), 3)
    out["reuse_s_per_q"] = round(reuse_s / len(qs), 3)
    out["reuse_cpu_s_per_q"] = round(reuse_cpu / len(qs), 3)
    out["speedup"] = round(naive_s / reuse_s, 2) if reuse_s > 0 else None
    if "prefill_tok_s" in out:
        out["engine_bound_s"] = round(out["unique_tokens"] / out["prefill_tok_s"], 3)
        out["efficiency"] = round(out["engine_bound_s"] / reuse_s, 3)
    out.update(_p_yes_diffs(naive, reuse))
    if embedded_backend:
        seq_judge = load_backend(spec, parallel=False)
        embedded._engine(parsed.variant).forget_kv()
        seq, seq_s, seq_cpu = _timed(seq_judge.binary, reqs)
        out["sequential_s_per_q"] = round(seq_s / len(qs), 3)
        out["sequential_cpu_s_per_q"] = round(seq_cpu / len(qs), 3)
        out["parallel_time_ratio"] = round(reuse_s / seq_s, 3) if seq_s > 0 else None
        out["parallel_cpu_ratio"] = round(reuse_cpu / seq_cpu, 3) if seq_cpu > 0 else None
        out["efficiency_sequential"] = round(out["engine_bound_s"] / seq_s, 3)
        d = _p_yes_diffs(seq, reuse)
        out["max_abs_p_yes_diff_parallel"] = d["max_abs_p_yes_diff"]
        out["same_verdicts_parallel"] = d["same_verdicts"]
    return out


def _p_yes_diffs(a: list[Any], b: list[Any]) -> dict[str, Any]:
    diffs = [abs(x.p_yes - y.p_yes) for x, y in zip(a, b)
             if x.p_yes is not None and y.p_yes is not None]
    return {"max_abs_p_yes_diff": round(max(diffs), 4) if diffs else None,
            "same_verdicts": sum(x.verdict == y.verdict for x, y in zip(a, b))}


def _cpu_features() -> str:
    """The instruction sets the installed llama.cpp was built for (``AVX512 = 1`` …)."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    return " ".join(f.split("=")[0].split(":")[-1].strip() for f in info.split("|")
                    if f.strip().endswith("= 1"))


def bench_engine(spec: str, repeats: int = 3, n_segments: int = 15) -> dict[str, Any]:
    """The engine alone, in tokens per CPU-second of this process (robust to other load on
    the machine, unlike wall time), on the first SummEval demo item and ``n_segments``
    question segments (20-30 tokens): the prompt up to the questions from an empty cache
    (``prefill``), the segments one after another after that cached prefix (``segment``), and
    the same segments side by side in one batch (``parallel``). An item costs prefill +
    segments: ``item_cpu_ratio`` is parallel ÷ one by one. Each figure is the median of
    ``repeats``; ``cpu_features`` names the llama.cpp build."""
    parsed = parse_spec(spec)
    if not load_backend(spec).capabilities.parallel_sequences:
        raise ValueError(f"--engine-only measures the embedded judge, not {spec!r}")
    item, qs = bench_item_and_questions(n_segments)
    reqs = [binary_request_for_item(item, q, "summarization") for q in qs]
    load_backend(spec).binary(reqs[:1])  # load the model, warm up
    rates: dict[str, list[float]] = {"prefill": [], "segment": [], "parallel": [],
                                     "item_cpu_ratio": []}
    diffs: list[float] = []
    with embedded._LOCK:
        eng = embedded._engine(parsed.variant)
        segs = [eng.segments(r) for r in reqs]
        tokens, bounds = segs[0]
        prefix = bounds[-2] if len(bounds) > 1 else 0
        if not prefix:
            raise ValueError("the benchmark item has no shared prefix")
        n_seg = sum(len(t) - prefix for t, _ in segs)
        for _ in range(repeats):
            eng.forget_kv()
            _, _, pre = _timed(eng.eval_segments, tokens[:prefix], bounds[:-1], True, False)
            seq = []
            c0 = time.process_time()
            for t, b in segs:
                eng.eval_segments(t, b, True)
                seq.append(embedded._binary_result(eng, eng.last_logits(), len(t), 0).p_yes)
            one_by_one = time.process_time() - c0
            (logits, _), _, side = _timed(eng.eval_parallel, tokens[:prefix], bounds[:-1],
                                          [t[prefix:] for t, _ in segs])
            par = [embedded._binary_result(eng, lg, 0, 0).p_yes for lg in logits]
            rates["prefill"].append(prefix / pre)
            rates["segment"].append(n_seg / one_by_one)
            rates["parallel"].append(n_seg / side)
            rates["item_cpu_ratio"].append((pre + side) / (pre + one_by_one))
            diffs += [abs(a - b) for a, b in zip(seq, par) if a is not None and b is not None]
        eng.forget_kv()
    out: dict[str, Any] = {"judge": spec, "cpu_features": _cpu_features(),
                           "threads": embedded.N_THREADS, "prefix_tokens": prefix,
                           "segments": len(segs), "segment_tokens": n_seg}
    for k, v in rates.items():
        name = k if k == "item_cpu_ratio" else f"{k}_tok_cpu_s"
        out[name] = round(statistics.median(v), 3 if k == "item_cpu_ratio" else 1)
        out[name + "_all"] = [round(x, 3 if k == "item_cpu_ratio" else 1) for x in v]
    out["max_abs_p_yes_diff_parallel"] = round(max(diffs), 4) if diffs else None
    return out
