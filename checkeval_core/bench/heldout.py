"""Held-out benchmarks of checklist proposals (``checkeval bench heldout``).

A proposal (:mod:`checkeval_core.analysis.proposal`) is chosen on dev groups and reported on
held-out ones; this module runs that protocol on a benchmark subset with a split fixed in
advance, so the held-out figure can be compared with the papers' layouts and repeated:

* ``summeval`` / ``topical_chat`` — the first half of the documents (contexts) dev and the
  second half held out, then the reverse. The judge's answers are those of
  :func:`~checkeval_core.bench.quality.bench_quality` (RocketEval, the authors' seed
  questions), cached in the bench database.
* ``alpacaeval`` — the ranking setting: the 10 ``train`` models' answers to the first N
  queries, labelled with their Arena Elo, are the dev part; the 12 ``test`` models are ranked
  (every query is asked of both parts' models).
* ``mtbench_pairs`` — the pairs of the first half of the questions (distinct inputs, in file
  order) dev, the other half held out, then the reverse, with RocketEval's six fixed questions
  asked of every question (one shared checklist, so a choice made on dev questions applies to
  held-out ones): pair accuracy at the tie margin and without one, and the tie rate.

Every row is read on the **same held-out groups** as the unrevised checklist and carries a
paired bootstrap interval of its difference from it (groups resampled): the proposal
(selection; selection + weights where they can be fitted), the run's other
aggregations (the learned ones are fitted leave-one-document-out on *all* documents, so they
see more labels than the proposal, which reads dev only — said in each row) and the text
baselines (answer length; ROUGE-1 where the benchmark has references).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from checkeval_core.analysis.frames import run_frame
from checkeval_core.analysis.proposal import propose
from checkeval_core.analysis.proposal.evidence import Evidence, load_evidence, subset_scores
from checkeval_core.analysis.proposal.figures import part_figures
from checkeval_core.bench import quality as Q
from checkeval_core.bench.quality import rouge1_by_id
from checkeval_core.safeio import load_json_text
from checkeval_core.stats.values import Figure, fmt
from checkeval_core.store import item_column, open_db, task_id
from checkeval_core.task_split import set_explicit_split

HELDOUT_BENCHMARKS = ("summeval", "topical_chat", "alpacaeval", "mtbench_pairs")
# the run's aggregations shown beside the proposal; "fitted" ones are cross-fitted over all
# documents (leave one document out), the others use no human label
AGGREGATION_ROWS = {"share_yes": False, "supervised": True, "linear": True, "calibrated": True,
                    "calibrated_len": True}
NO_MARGIN = 0.0


def _halves(keys: list[str]) -> list[tuple[str, list[str], list[str]]]:
    h = len(keys) // 2
    first, second = keys[:h], keys[h:]
    return [(f"dev = first {len(first)}, held out = last {len(second)}", first, second),
            (f"dev = last {len(second)}, held out = first {len(first)}", second, first)]


def _per_item(ev: Evidence, values: dict[int, float], dims: list[str]
              ) -> dict[str, np.ndarray]:
    """One score per item (the same for every dimension), aligned with the evidence's rows."""
    col = np.array([values.get(int(pk), np.nan) for pk in ev.items["item_pk"]], float)
    return {d: col for d in dims}


def _aggregation_scores(db: Any, ev: Evidence, run_id: int, agg: str
                        ) -> dict[str, np.ndarray] | None:
    df, _ = run_frame(db, run_id, agg)
    if df.empty or not df["metric"].notna().any():
        return None
    row = {int(pk): k for k, pk in enumerate(ev.items["item_pk"])}
    out: dict[str, np.ndarray] = {}
    for dim, part in df.groupby("dimension"):
        a = np.full(len(ev.items), np.nan)
        for pk, v in zip(part["item_pk"], part["metric"]):
            if int(pk) in row and v is not None:
                a[row[int(pk)]] = float(v)
        out[str(dim)] = a
    return out


def _row(name: str, fig: dict[str, Any], note: str = "") -> dict[str, Any]:
    return {"name": name, "value": fig["after"], "unrevised": fig["before"],
            "delta": fig["delta"], "ci": fig["ci"]["after"], "delta_ci": fig["ci"]["delta"],
            "ci_reason": fig["ci_reason"], "n_items": fig["n_items"],
            "n_groups": fig["n_groups"], "n_systems": fig["n_systems"],
            **({"kendall": fig["kendall"]["after"]} if "kendall" in fig else {}),
            "note": note}


def _tie_rate(ev: Evidence, sc: dict[str, np.ndarray], mask: np.ndarray,
              margin: float) -> float:
    """Share of the part's decisive human pairs whose two scores differ by less than
    ``margin`` (a judge tie), NaN without pairs."""
    with np.errstate(all="ignore"):
        stacked = np.column_stack(list(sc.values()))
        score = np.array([np.nan if np.isnan(r).all() else np.nanmean(r) for r in stacked])
    gaps = [abs(score[a] - score[b]) for a, b in zip(ev.pairs["a"], ev.pairs["b"])
            if mask[a] and mask[b] and not np.isnan(score[a]) and not np.isnan(score[b])]
    return float(np.mean([g < margin for g in gaps])) if gaps else float("nan")


def _proposal_summary(p: dict[str, Any]) -> dict[str, Any]:
    rules: dict[str, int] = {}
    for d in p["dropped"]:
        rules[d["rule"]] = rules.get(d["rule"], 0) + 1
    return {"kept": len(p["kept"]), "dropped": len(p["dropped"]), "rules": rules,
            "dropped_questions": [{"question": d["question"]["text"], "reason": d["reason"]}
                                  for d in p["dropped"]],
            "weights": p["weights"], "weights_reason": p["weights_reason"],
            "dev": {k: p["dev"][k] for k in ("before", "after", "delta", "n_groups",
                                              "n_items", "ci")}}


def _direction(db: Any, task: str, run_id: int, n_boot: int, seed: int,
               baselines: dict[str, dict[int, float]], tie_margin: float) -> dict[str, Any]:
    """Every row of one split (already stored): proposal and baselines on its held-out part."""
    out: dict[str, Any] = {"proposal": {}, "rows": []}
    ev = load_evidence(db, [run_id])
    ev.tie_margin = tie_margin
    held = ev.items["heldout"].to_numpy(bool)
    before = subset_scores(ev, np.ones(len(ev.questions), bool))
    dims = list(ev.human) if ev.kind == "human_scores" else list(before)
    first = part_figures(ev, before, before, held, n_boot, seed)
    out["rows"].append(_row("unrevised checklist (mean p(Yes))", first))
    label = {False: "proposal: selection", True: "proposal: selection + weights"}
    # pairs: every row at the tie margin, then again without one
    margins = [tie_margin] + ([NO_MARGIN] if ev.kind == "preferences" else [])
    for margin in margins:
        suffix = "" if margin == tie_margin else ", no tie margin"
        if suffix:
            ev0 = replace(ev, tie_margin=margin)
            out["rows"].append(_row(f"unrevised checklist (mean p(Yes)){suffix}",
                                    part_figures(ev0, before, before, held, n_boot, seed)))
        for weights in (False, True):
            p = propose(db, [run_id], weights=weights, n_boot=n_boot, seed=seed,
                          tie_margin=margin)
            if not suffix:
                out["proposal"][label[weights]] = _proposal_summary(p)
                if not weights:
                    selected = np.array([any(q["id"] == k["id"] for k in p["kept"])
                                         for q in ev.questions])
            if weights and p["weights"] is None:
                continue
            out["rows"].append(_row(label[weights] + suffix, p["heldout"],
                                    f"kept {len(p['kept'])} of {len(ev.questions)} questions"))
    if ev.kind == "human_scores":
        for agg, fitted in AGGREGATION_ROWS.items():
            sc = _aggregation_scores(db, ev, run_id, agg)
            if sc is not None:
                out["rows"].append(_row(f"aggregation: {agg}", part_figures(
                    ev, before, sc, held, n_boot, seed),
                    "fitted leave-one-document-out on all documents" if fitted else ""))
    if ev.kind == "preferences":
        keep = np.ones(len(ev.questions), bool)
        out["tie_rate"] = {"unrevised": _tie_rate(ev, subset_scores(ev, keep), held,
                                                  tie_margin),
                           "proposal": _tie_rate(ev, subset_scores(ev, selected), held,
                                                 tie_margin),
                           "margin": tie_margin}
        ev.tie_margin = NO_MARGIN  # lengths: the longer answer wins, equal lengths tie
    for name, values in baselines.items():
        out["rows"].append(_row(name, part_figures(ev, before, _per_item(ev, values, dims),
                                                     held, n_boot, seed)))
    out["statistic"] = first["statistic"]
    return out


def _lengths(db: Any, ev_pks: list[int]) -> dict[int, float]:
    return {pk: float(len(str(o).split())) for pk, o in item_column(db, ev_pks, "output").items()}


def _check_inputs(benchmark: str, src: Path, docs: int) -> None:
    """What the report needs from the benchmark files, checked before any judge call: enough
    documents for ``--docs``; for alpacaeval, every model's AlpacaEval 2 LC win rate (the
    reference row). A ValueError names the option, file and entry."""
    if benchmark in ("summeval", "topical_chat"):
        if docs < 4:
            raise ValueError(f"--docs {docs}: a held-out comparison needs ≥ 4 documents "
                             "(≥ 2 in each half)")
        b = Q.BENCHMARKS[benchmark]
        if not (src / b["file"]).exists():
            raise ValueError(f"{src / b['file']}: not found (give --data DIR)")
        _, groups = Q._load_rows(src, b, docs)
        if len(groups) < docs:
            raise ValueError(f"--docs {docs}: {b['file']} has {len(groups)} documents; give "
                             f"at most {len(groups)}")
    elif benchmark == "alpacaeval":
        models = load_json_text(Q._read_text(src / "alpacaeval" / "models.json"),
                                "models.json")
        if not isinstance(models, list) or not models:
            raise ValueError("models.json: expected a non-empty list of models")
        for i, m in enumerate(models, 1):
            name = m.get("system_id") if isinstance(m, dict) else None
            if not isinstance(name, str) or not name:
                raise ValueError(f"models.json, entry {i}: no 'system_id'")
            v = m.get("alpacaeval2_lc_winrate")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                raise ValueError(f"models.json, entry {i} ({name[:60]!r}), field "
                                 "'alpacaeval2_lc_winrate': missing or not a finite number "
                                 "(the held-out report's reference row needs it for every "
                                 "model)")


def bench_heldout(benchmark: str, data: str | Path | None = None, judge: str = "embedded",
                  docs: int = 32, queries: int = 50, db_file: str | Path | None = None,
                  n_boot: int = 200, seed: int = 0, progress: bool = False,
                  tie_margin: float = 0.1, estimate: bool = False) -> dict[str, Any]:
    """Run (or reuse from the bench database) the judge's answers and report the proposal on
    held-out data: ``{"benchmark", "task", "run", "judge", "statistic", "directions": [{"name",
    "dev_groups", "heldout_groups", "rows", "proposal"[, "tie_rate"]}], "wall_s", "cpu_s"}``.
    ``docs`` (summeval, topical_chat) / ``queries`` (alpacaeval: queries; mtbench_pairs:
    pairs) set the subset's size. ``estimate``: only what the judge's run still needs (the
    bench's estimate dict); the proposal and its figures read stored answers and ask nothing."""
    if benchmark not in HELDOUT_BENCHMARKS:
        raise ValueError(f"--benchmark {benchmark!r}: use one of {', '.join(HELDOUT_BENCHMARKS)}")
    _check_inputs(benchmark, Path(data) if data else Q.default_data_dir(), docs)
    rows_: list[dict] = []  # the benchmark rows (references for ROUGE-1): summeval only
    if benchmark in ("summeval", "topical_chat"):
        res = Q.bench_quality(benchmark, data, judge, "rocketeval", docs=docs, db_file=db_file,
                              progress=progress, estimate=estimate)
        if estimate:
            return res
        rows_, groups = Q._load_rows(Path(data) if data else Q.default_data_dir(),
                                     Q.BENCHMARKS[benchmark], docs)
        splits = [(name, dev, held, None) for name, dev, held in _halves(groups)]
    elif benchmark == "alpacaeval":
        res = Q.bench_rankings("alpacaeval", data, judge, queries=queries, checklist="author",
                               db_file=db_file, progress=progress, models="all",
                               tie_margin=tie_margin, estimate=estimate)
        if estimate:
            return res
        db = open_db(res["db"])
        models = {s for (s,) in db.execute("SELECT DISTINCT system_id FROM item WHERE "
                                           "task_id = ?", [task_id(db, res["task"])])}
        src = Path(data) if data else Q.default_data_dir()
        alpaca_models = {m["system_id"]: m for m in load_json_text(
            Q._read_text(src / "alpacaeval" / "models.json"), "models.json")
            if m["system_id"] in models}
        test = [s for s, m in alpaca_models.items() if m.get("split") == "test"]
        splits = [(f"dev = the {len(models) - len(test)} train models, held out = the "
                   f"{len(test)} test models", [], [], test)]
    else:
        if queries < 4:
            raise ValueError(f"--queries {queries}: give ≥ 4 pairs")
        res = Q.bench_rankings("mtbench_pairs", data, judge, queries=queries,
                               checklist="fixed", db_file=db_file, progress=progress,
                               tie_margin=tie_margin, estimate=estimate)
        if estimate:
            return res
        db = open_db(res["db"])
        groups = [g for (g,) in db.execute(
            "SELECT group_id FROM preference WHERE task_id = ? GROUP BY group_id ORDER BY "
            "MIN(rowid)", [task_id(db, res["task"])])]
        splits = [(name, dev, held, None) for name, dev, held in _halves(groups)]
    db = open_db(res["db"])
    run = res["runs"][0]
    task, rid = res["task"], int(run["run"])
    pks = [int(pk) for (pk,) in db.execute("SELECT id FROM item WHERE task_id = ?",
                                           [task_id(db, task)])]
    baselines = {"baseline: answer length (words)": _lengths(db, pks)}
    rouge = _rouge(db, task, rows_) if benchmark == "summeval" else None
    if rouge:
        baselines["baseline: ROUGE-1 F1"] = rouge
    if benchmark == "alpacaeval":
        # a reference beside the baselines: computed by AlpacaEval on all 805 queries
        lc = {s: float(m["alpacaeval2_lc_winrate"]) for s, m in alpaca_models.items()}
        systems = item_column(db, pks, "system_id")
        baselines["reference: AlpacaEval 2 LC win rate (all 805 queries)"] = {
            pk: lc[s] for pk, s in systems.items() if s in lc}
    out: dict[str, Any] = {"benchmark": benchmark, "task": task, "run": rid,
                           "judge": run["judge"], "db": res["db"], "directions": [],
                           "wall_s": run.get("wall_s"), "cpu_s": run.get("cpu_s"),
                           "n_boot": n_boot, "tie_margin": tie_margin}
    for name, dev, held, held_systems in splits:
        if held_systems is not None:
            set_explicit_split(db, task, [], held_systems)
        else:
            set_explicit_split(db, task, held)
        d = _direction(db, task, rid, n_boot, seed, baselines, tie_margin)
        out["statistic"] = d.pop("statistic")
        out["directions"].append({"name": name, "dev_groups": len(dev) or None,
                                  "heldout_groups": len(held) or None,
                                  "heldout_systems": held_systems, **d})
    return out


def _rouge(db: Any, task: str, rows_: list[dict]) -> dict[int, float] | None:
    """ROUGE-1 F1 per item (by item key), None without references or the scorer."""
    by_id = rouge1_by_id(rows_)
    if by_id is None:
        return None
    return {int(pk): by_id[iid] for pk, iid in db.execute(
        "SELECT id, item_id FROM item WHERE task_id = ?", [task_id(db, task)]) if iid in by_id}


_num = fmt


def format_heldout(res: dict[str, Any]) -> str:
    """The result as Markdown tables, one per direction (value [CI], Δ vs unrevised [CI], N)."""
    lines = [f"{res['benchmark']} · {res['judge']} · run {res['run']} · {res['statistic']} "
             f"({res['n_boot']} paired resamples of the held-out groups)"]
    for d in res["directions"]:
        lines += ["", f"### {d['name']}", "",
                  "| row | held out [95 % CI] | Δ vs unrevised [95 % CI] | items · groups · "
                  "systems | note |", "| --- | --- | --- | --- | --- |"]
        for r in d["rows"]:
            fig, dfig = Figure(r["value"], r["ci"]), Figure(r["delta"], r["delta_ci"])
            ci = "" if fig.weak else " " + fig.ci_text(2)
            dci = "" if dfig.weak else " " + dfig.ci_text(3)
            lines.append(f"| {r['name']} | {_num(r['value'])}{ci} | {_num(r['delta'])}{dci} | "
                         f"{r['n_items']} · {r['n_groups']} · {r['n_systems']} | "
                         f"{r['note'] or r['ci_reason'] or ''} |")
        for label, p in d["proposal"].items():
            lines.append(f"\n{label}: kept {p['kept']}, dropped {p['dropped']} "
                         f"({', '.join(f'{k}: {v}' for k, v in p['rules'].items()) or 'none'}); "
                         f"dev {_num(p['dev']['before'])} → {_num(p['dev']['after'])} "
                         f"({p['dev']['n_groups']} groups)"
                         + (f"; weights: {p['weights_reason']}" if p["weights"] is None
                            and "weights" in label else ""))
        if "tie_rate" in d:
            t = d["tie_rate"]
            lines.append(f"\ntie rate at |Δ| < {t['margin']:g} on held-out pairs: unrevised "
                         f"{_num(t['unrevised'], 2)}, proposal {_num(t['proposal'], 2)}")
    return "\n".join(lines)
