"""Benchmark of the human-calibrated estimate (PPI++) on a benchmark with human scores.

Per system and dimension, the estimand is the system's mean human score. The unlabelled items
are the system's outputs on the *unlabelled documents* (judge score only, human score hidden);
each draw picks ``N`` labelled outputs of the system from the *labelled documents* (judge and
human score). Over ``draws`` draws the benchmark reports, per N and dimension:

* ``coverage_heldout`` — share of 95 % PPI++ intervals containing the system's mean human
  score on the unlabelled documents (the issue's "true held-out system mean");
* ``coverage_all`` — the same against the system's mean over every document in the file (the
  population the documents are drawn from, as near as the data allow);
* ``coverage_human_heldout`` — the humans-alone interval against the held-out mean;
* ``width`` / ``width_human`` — median interval widths, ``ratio`` their median ratio and
  ``target`` = √(1 − ρ²), ρ the within-system Pearson correlation of judge and human scores on
  all documents used (the narrowing a judge with that correlation allows).

The judge scores come from a run in a checkeval database (``--db``/``--run``: any method,
any aggregation) or from ROUGE-1 against the references (``--scorer rouge1``: free, so it
covers every document). Pure numpy/pandas over one frame; the draws are seeded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from checkeval_core.analysis.calibrate import ALPHA, calibrated
from checkeval_core.runs.options import MAX_BENCH_DOCS
from checkeval_core.stats.correlation import corr
from checkeval_core.stats.draws import pick_without_replacement, sampling_rng

# rouge_score (about 0.6 s to import, a benchmark-only dependency) is imported where ROUGE is
# computed.

DEFAULT_NS = (10, 16)


def parse_docs(text: str, limit: int = MAX_BENCH_DOCS) -> list[int]:
    """``"1-16"`` / ``"1-16,33-56"`` → 1-based document positions (at most ``limit``)."""
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part:
                a, b = (int(x) for x in part.split("-", 1))
                if a < 1 or b < a:
                    raise ValueError
                if len(out) + (b - a + 1) > limit:
                    raise OverflowError
                out.extend(range(a, b + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise ValueError(f"document range {part!r}: use e.g. 1-16 or 1-16,33-56") from None
        except OverflowError:
            raise ValueError(f"document range {part[:40]!r}: more than the {limit:,} documents "
                             "allowed") from None
        if len(out) > limit:
            raise ValueError(f"more than the {limit:,} documents allowed")
    if not out:
        raise ValueError("empty document range")
    return out


def summeval_frame(data_dir: Path) -> pd.DataFrame:
    """SummEval rows with ROUGE-1 (mean F1 over the references) as the judge score:
    item_pk, group (the document's 1-based position), system, dimension, human, metric."""
    from rouge_score import rouge_scorer

    sc = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    order: dict[str, int] = {}
    recs = []
    with open(Path(data_dir) / "summeval.jsonl", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            r = json.loads(line)
            pos = order.setdefault(r["doc_id"], len(order) + 1)
            refs = r.get("references") or [r["reference"]]
            m = float(np.mean([sc.score(ref, r["output"])["rouge1"].fmeasure for ref in refs]))
            for dim, v in r["scores"].items():
                recs.append({"item_pk": i, "group": pos, "system": r["system_id"],
                             "dimension": dim, "human": float(v), "metric": m})
    return pd.DataFrame(recs)


def run_positions(df: pd.DataFrame) -> pd.DataFrame:
    """A run frame's groups renumbered 1, 2, … in the order of their first item."""
    first = df.sort_values("item_pk").drop_duplicates("group")["group"].tolist()
    pos = {g: i + 1 for i, g in enumerate(first)}
    return df.assign(group=df["group"].map(pos))


def within_system_rho(df: pd.DataFrame) -> float:
    """Pearson correlation of judge and human after removing each system's means."""
    d = df.dropna(subset=["metric", "human"])
    c = d[["metric", "human"]] - d.groupby("system")[["metric", "human"]].transform("mean")
    return corr(c["metric"], c["human"], "pearson")  # NaN: residuals of rounding only


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if len(x) else float("nan")


def _median(x: np.ndarray) -> float:
    return float(np.median(x)) if len(x) else float("nan")


def _median_ratio(w: np.ndarray, wh: np.ndarray) -> float:
    ok = wh > 0
    return float(np.median(w[ok] / wh[ok])) if ok.any() else float("nan")


def bench_calibrate(df: pd.DataFrame, labelled_docs: list[int], unlabelled_docs: list[int],
                    ns: tuple[int, ...] = DEFAULT_NS, draws: int = 200, seed: int = 0,
                    alpha: float = ALPHA) -> dict[str, Any]:
    """The benchmark table (see the module doc) over a frame whose ``group`` is the document's
    1-based position."""
    overlap = set(labelled_docs) & set(unlabelled_docs)
    if overlap:
        raise ValueError(f"documents {sorted(overlap)[:5]} are both labelled and unlabelled")
    pool = df[df["group"].isin(labelled_docs)].dropna(subset=["metric", "human"])
    held = df[df["group"].isin(unlabelled_docs)].dropna(subset=["metric"])
    if pool.empty or held.empty:
        raise ValueError("no item on the labelled or on the unlabelled documents")
    per_sys = pool.drop_duplicates("item_pk").groupby("system").size()
    truth_h = held.groupby(["system", "dimension"])["human"].mean()
    truth_all = df.groupby(["system", "dimension"])["human"].mean()
    used = pd.concat([pool, held])
    rho = {dim: within_system_rho(p) for dim, p in used.groupby("dimension")}
    rng = sampling_rng(seed)
    rows = []
    for n in ns:
        if n > per_sys.min():
            rows.append({"n": n, "skipped": f"a system has only {int(per_sys.min())} labelled "
                                             "outputs on the labelled documents"})
            continue
        acc: dict[str, list[list[float]]] = {}
        for _ in range(draws):
            lab = set()
            for _s, part in pool.drop_duplicates("item_pk").groupby("system", sort=True):
                pk = part["item_pk"].to_numpy()
                lab.update(pk[pick_without_replacement(rng, len(pk), n)])
            frame = pd.concat([pool[pool["item_pk"].isin(lab)], held])
            for s, dims in calibrated(frame, lab, alpha).items():
                for dim, e in dims.items():
                    lo, hi = e["ci"]
                    hlo, hhi = e["ci_human_only"]
                    flo, fhi = e["ci_unlabelled_mean"]
                    gl, gh = e["ci_human_only_unlabelled_mean"]
                    th, ta = truth_h[(s, dim)], truth_all[(s, dim)]
                    acc.setdefault(dim, []).append([
                        lo <= th <= hi, lo <= ta <= hi, hlo <= th <= hhi, hi - lo, hhi - hlo,
                        hlo <= ta <= hhi, flo <= th <= fhi, fhi - flo, gh - gl,
                        gl <= th <= gh])
        for dim, vals in sorted(acc.items()):
            a = np.array(vals, float)
            r = rho[dim]
            # a draw whose labelled human scores are all equal has no interval (NaN widths):
            # coverage and widths are read over the draws with one, and their share is said
            ok = ~np.isnan(a[:, 3])
            b = a[ok]
            # the held-out-mean reading borrows the other systems' spread, so a draw of equal
            # scores has an interval there: its columns are read over its own draws
            okf = ~np.isnan(a[:, 7])
            c = a[okf]
            rows.append({"n": n, "dimension": dim, "n_intervals": int(ok.sum()),
                         "no_interval": float(1 - ok.mean()),
                         "coverage_heldout": _mean(b[:, 0]),
                         "coverage_all": _mean(b[:, 1]),
                         "coverage_human_heldout": _mean(b[:, 2]),
                         "coverage_human_all": _mean(b[:, 5]),
                         "width": _median(b[:, 3]), "width_human": _median(b[:, 4]),
                         "ratio": _median_ratio(b[:, 3], b[:, 4]),
                         "no_interval_heldout_mean": float(1 - okf.mean()),
                         "coverage_heldout_mean": _mean(c[:, 6]),
                         "coverage_human_heldout_mean": _mean(c[:, 9]),
                         "width_heldout_mean": _median(c[:, 7]),
                         "width_human_heldout_mean": _median(c[:, 8]),
                         "ratio_heldout_mean": _median_ratio(c[:, 7], c[:, 8]),
                         # "never wider than humans alone": the share of draws where it was
                         "wider": _mean(b[:, 3] > b[:, 4] + 1e-9),
                         "wider_heldout_mean": _mean(c[:, 7] > c[:, 8] + 1e-9),
                         "rho": r, "target": float(np.sqrt(1 - r * r))})
    return {"labelled_docs": [min(labelled_docs), max(labelled_docs), len(labelled_docs)],
            "unlabelled_docs": [min(unlabelled_docs), max(unlabelled_docs),
                                len(unlabelled_docs)],
            "n_systems": int(held["system"].nunique()), "draws": draws, "seed": seed,
            "alpha": alpha, "rows": rows}


def format_calibrate(res: dict[str, Any], title: str) -> str:
    lines = [f"{title}: {res['n_systems']} systems, labelled documents "
             f"{res['labelled_docs'][0]}–{res['labelled_docs'][1]} ({res['labelled_docs'][2]}), "
             f"unlabelled {res['unlabelled_docs'][0]}–{res['unlabelled_docs'][1]} "
             f"({res['unlabelled_docs'][2]}), {res['draws']} draws, seed {res['seed']}",
             "population estimand (ppi-python) | held-out-mean estimand (finite population)",
             f"{'N':>3} {'dimension':>12} {'no CI':>6} {'cov held-out':>12} {'cov all':>8} "
             f"{'humans cov':>10} {'width':>6} {'humans':>6} {'ratio':>6} | {'no CI':>6} "
             f"{'cov':>6} "
             f"{'humans':>6} {'width':>6} {'humans':>6} {'ratio':>6} {'ρ':>6} "
             f"{'√(1−ρ²)':>7}"]
    for r in res["rows"]:
        if "skipped" in r:
            lines.append(f"{r['n']:>3} skipped: {r['skipped']}")
            continue
        lines.append(f"{r['n']:>3} {r['dimension']:>12} {_f(r['no_interval'], 6)} "
                     f"{_f(r['coverage_heldout'], 12)} "
                     f"{_f(r['coverage_all'], 8)} {_f(r['coverage_human_heldout'], 10)} "
                     f"{_f(r['width'], 6)} {_f(r['width_human'], 6)} {_f(r['ratio'], 6)} | "
                     f"{_f(r['no_interval_heldout_mean'], 6)} "
                     f"{_f(r['coverage_heldout_mean'], 6)} "
                     f"{_f(r['coverage_human_heldout_mean'], 6)} "
                     f"{_f(r['width_heldout_mean'], 6)} {_f(r['width_human_heldout_mean'], 6)} "
                     f"{_f(r['ratio_heldout_mean'], 6)} "
                     f"{_f(r['rho'], 6)} {_f(r['target'], 7)}")
    return "\n".join(lines)


def _f(x: float | None, width: int) -> str:
    """A figure to 3 decimals, or a dash where it is undefined (NaN / null in JSON)."""
    return f"{'–':>{width}}" if x is None or x != x else f"{x:>{width}.3f}"
