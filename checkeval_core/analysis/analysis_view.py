"""What the Analysis page shows, as plain rows, sentences and plotly figures (no Streamlit).

The page reads its widgets, calls :func:`analysis_page` (the correlations and agreement,
cached by the page) and :func:`evidence_page` (human agreement and question diagnostics,
which change as people annotate and review), and renders them. Every agreement number comes
with the items, groups and systems behind it and its interval or the reason it has none.
"""

from __future__ import annotations

from typing import Any

import sqlite_utils

from checkeval_core.analysis import charts
from checkeval_core.analysis.diagnostics import (
    FOLLOWS_LENGTH_RHO,
    UNSTABLE_FLIP,
    question_diagnostics,
)
from checkeval_core.analysis.frames import LEVEL_UNITS
from checkeval_core.analysis.judge_agreement import judge_agreement
from checkeval_core.analysis.notes import (
    correlation_chart_note,
    correlation_table,
    diagnostics_notes,
    interval_note,
    quality_rows,
    significance_rows,
    stability_note,
)
from checkeval_core.analysis.reliability import selection_reliability
from checkeval_core.analysis.report import (
    method_significance,
    page_points,
    page_report,
    stability_points,
)
from checkeval_core.annotation.agreement_report import agreement_report
from checkeval_core.runs.labels import run_labels
from checkeval_core.runs.selection import judge_series
from checkeval_core.stats.bootstrap import minimum
from checkeval_core.stats.values import NAN, Figure, fmt


def _ci(ci: list[Any] | None, reason: str | None) -> str:
    fig = Figure(NAN, ci, ci_reason=reason)
    return fig.ci_text(2, label="95% CI ") + ("" if fig.weak else " (groups resampled)")


def _support_line(sup: dict[str, Any]) -> str:
    return (f"{sup.get('n_items', 0)} items · {sup.get('n_groups', 0)} groups (documents / "
            f"contexts / queries) · {sup.get('n_systems', 0)} systems")


def _agreement(report: dict[str, Any], labels: dict[int, str]) -> dict[str, Any]:
    ag = report["agreement"]
    if len(labels) < 2:
        return {"note": "Agreement across judges needs ≥ 2 runs (judges) of this task: select "
                        "another run above."}
    why, ci_why = ag.get("reasons") or {}, ag.get("ci_reasons") or {}
    tiles = []
    for key, name in (("krippendorff_alpha", "Krippendorff α (Yes/No)"),
                      ("fleiss_kappa", "Fleiss κ (Yes/No)"),
                      ("krippendorff_alpha_scores", "Krippendorff α (scores, interval)")):
        tiles.append({"label": name, "value": fmt(ag[key]), "reason": why.get(key),
                      "interval": _ci((ag.get("ci") or {}).get(key), ci_why.get(key))})
    sup = ag.get("support") or {}
    out = {"tiles": tiles,
           "caption": f"{ag['n_units']} (item, question) units answered Yes/No by at least two "
                      f"runs, over {_support_line(sup)}, {sup.get('n_runs', len(labels))} runs;"
                      f" all runs agree on {ag.get('n_agree', 0)} of them.",
           "heatmap": charts.agreement_heatmap(ag["pairwise_cohen"],
                                               {str(r): v for r, v in labels.items()})
           if ag["n_units"] else None,
           "pairs": [{"pair": f"{labels[int(k.split('-')[0])]} vs "
                              f"{labels[int(k.split('-')[1])]}",
                      "Cohen κ": v["kappa"], "raw agreement": f"{v['agree']}/{v['n']}",
                      "note": v["reason"] or ""} for k, v in (ag.get("pairwise") or {}).items()]}
    return out


def _stability(per_run: dict[str, Any], report: dict[str, Any], level: str,
               coef: str) -> dict[str, Any]:
    note = stability_note(per_run, level, coef)
    if note:
        return {"note": note}
    points = stability_points(per_run, level, coef)
    drawn = {m: p for m, p in points.items() if len({x["judge"] for x in p}) >= 2}
    rows = [{"method": m, **{k: v for k, v in s.items() if k != "values"}}
            for m, s in report["stability"].items()]
    return {"note": None, "figure": charts.stability_violin(drawn, coef), "rows": rows}


def page_data(db: sqlite_utils.Database, task: str, run_ids: list[int] | tuple[int, ...],
              metrics: tuple[str, ...] | list[str] = (), aggregation: str | None = None,
              ensemble: bool = False, mode: str = "mean", n_boot: int = 100,
              shared: bool = True) -> dict[str, Any]:
    """The expensive part of the page that depends on the selection, which the page caches:
    :func:`page_report` of the selected runs. (The agreement across judges per method reads
    every run of the task: :func:`analysis_page` takes it as ``judges``.)"""
    return page_report(db, task, list(run_ids), metrics, aggregation, ensemble, mode,
                       n_boot=n_boot, shared=shared)


def first_chart(db: sqlite_utils.Database, task: str, run_ids: list[int] | tuple[int, ...],
                metrics: tuple[str, ...] | list[str], aggregation: str | None, level: str,
                coef: str, ensemble: bool = False, shared: bool = True) -> dict[str, Any]:
    """The correlation chart's point figures, drawn before :func:`page_data` has resampled
    anything (:func:`~checkeval_core.analysis.report.page_points`: the same values, n and
    support as the full view): ``{"coverage_note", "comparable", "chart_note", "figure",
    "pending"}`` — ``pending`` says what is still being computed; the full view replaces
    all of it."""
    pts = page_points(db, task, list(run_ids), metrics, aggregation, level, coef, shared)
    per_run, cov = pts["runs"], pts["coverage"]
    chart_note = correlation_chart_note(per_run, level, coef)
    more = " and the ensemble's bars" if ensemble and len(run_ids) >= 2 else ""
    return {"coverage_note": cov["note"],
            "comparable": cov["same_items"] or cov["shared"] or len(per_run) < 2,
            "chart_note": chart_note,
            "figure": None if chart_note else charts.correlation_bars(per_run, level, coef,
                                                                      pending=True),
            "pending": f"Point values shown; their 95% intervals (groups resampled){more}, the "
                       "table and the agreement among the runs are being computed."}


def _judge_agreement(ja: dict[str, Any], names: dict[int, str] | None = None
                     ) -> dict[str, Any]:
    """Rows, chart and caption of the checklist-vs-Likert comparison across judges
    (``names``: the runs' labels)."""
    if not ja["rows"]:
        return {"note": ja["note"], "rows": [], "figure": None, "missing": []}
    rows = []
    for r in ja["rows"]:
        rows.append({
            "method": r["label"], "version": r["version"],
            "judges": ", ".join((names or {}).get(i, f"#{i} {j}")
                                for i, j in zip(r["runs"], r["judges"])),
            "α (scores)": r["alpha"], "interval": _ci(r["ci"], r["reason"]),
            "α (standardised)": r["alpha_z"], "standardised interval": _ci(r["ci_z"],
                                                                          r["reason_z"]),
            "α (Yes/No)": r.get("alpha_yes_no"),
            "Yes/No interval": _ci(r.get("ci_yes_no"), r.get("reason_yes_no"))
            if r["binary"] else "no Yes/No answers (a Likert score)",
            "items": r["n_items"], "groups": r["n_groups"], "systems": r["n_systems"],
            "per dimension": "; ".join(
                f"{d} {fmt(v['alpha'], 2)}" for d, v in r["per_dimension"].items())})
    missing = [f"{m}: {why}" for m, why in sorted(ja["missing"].items())]
    return {"note": None, "rows": rows, "figure": charts.judge_agreement_bars(ja["rows"]),
            "missing": missing}


def analysis_page(db: sqlite_utils.Database, task: str, run_ids: list[int],
                  metrics: tuple[str, ...] | list[str], aggregation: str | None,
                  level: str, coef: str, ensemble: bool = False, mode: str = "mean",
                  shared: bool = True, n_boot: int = 100,
                  report: dict[str, Any] | None = None,
                  judges: dict[str, Any] | None = None) -> dict[str, Any]:
    """Correlation table, chart and notes; agreement across judges; stability; significance;
    high/low split — for the selected runs and metrics, compared on the items they share
    (``shared``). ``report``: a :func:`~checkeval_core.analysis.report.page_report` already
    computed with these arguments (the page caches that expensive part and rebuilds the
    figures on every run, as Streamlit needs for a chart's click selection to stick);
    ``judges``: :func:`judge_agreement` of the task, already computed (the page caches it)."""
    if report is None:
        report = page_data(db, task, list(run_ids), metrics, aggregation, ensemble, mode,
                           n_boot=n_boot, shared=shared)
    per_run = report["runs"]
    ja = judges or judge_agreement(db, task)
    labels = {int(k): r["label"] for k, r in per_run.items() if k.isdigit()}
    cov = report["coverage"]
    chart_note = correlation_chart_note(per_run, level, coef)
    sig = method_significance(per_run, level, coef)
    ensembles = ["Ensemble members' agreement (Spearman between their scores): " + "; ".join(
        f"{dim}: " + ", ".join(f"#{p.replace('-', ' vs #')} {v:.2f}" for p, v in pairs.items())
        for dim, pairs in r["member_agreement"].items())
        for k, r in per_run.items() if k.startswith("ensemble:")]
    return {
        "report": report,
        "columns": columns(coef, level),
        "labels": labels,
        "dimensions": sorted({d for r in per_run.values() for d in r["dimensions"]}),
        "unit": LEVEL_UNITS[level],
        "table": correlation_table(per_run, level, coef),
        "coverage_note": cov["note"],
        "comparable": cov["same_items"] or cov["shared"] or len(per_run) < 2,
        "chart_note": chart_note,
        "interval_note": None if chart_note else interval_note(per_run, level, coef),
        "figure": None if chart_note else charts.correlation_bars(per_run, level, coef),
        "ensemble_notes": ensembles,
        "agreement": _agreement(report, labels),
        "judge_agreement": _judge_agreement(ja, run_labels(db, [i for r in ja["rows"]
                                                                for i in r["runs"]])),
        "stability": _stability(per_run, report, level, coef),
        "significance": significance_rows(sig) if sig else [],
        "quality": quality_rows(per_run),
    }


#: Fields of a question's diagnostics that are not table columns (their content is in the
#: flags cell or the notes under the table).
HIDDEN_DIAGNOSTICS = ("weak_signs", "flag_note", "flip_reason", "length_reason")


def _candidates(diag: list[dict[str, Any]], several: bool) -> list[dict[str, Any]]:
    """The flagged, still-kept questions, one row per question: its flags per judge (each
    judge's flags come from that judge's answers only)."""
    out: dict[int, dict[str, Any]] = {}
    for d in diag:
        if not d["flags"] or d["status"] != "kept":
            continue
        flags = ", ".join(d["flags"])
        row = out.setdefault(d["question_id"], {
            "question_id": d["question_id"], "dimension": d["dimension"],
            "question": d["question"], "flags": "", "answers": d["n"], "items": d["n_items"],
            "groups": d["n_groups"], "judges": []})
        row["judges"].append(d["judge"])
        row["flags"] = "; ".join(x for x in (row["flags"], f"{d['judge']}: {flags}"
                                             if several else flags) if x)
    return [{**r, "judges": ", ".join(r["judges"])} for r in out.values()]


def evidence_page(db: sqlite_utils.Database, task: str, run_ids: list[int]) -> dict[str, Any]:
    """Humans vs judges and the question diagnostics, with the evidence behind each flag and
    the questions that can be sent back to review (flagged, still kept).

    The diagnostics are one series per judge (:func:`judge_series`): each judge's selected
    runs, on the items all of them cover — so a question's flags and the send-to-review set
    are the same whichever runs of other judges are selected (``basis`` says so)."""
    human = agreement_report(db, task, list(run_ids))
    hh = human["human_human"]
    series = judge_series(db, list(run_ids)) if run_ids else []
    diag: list[dict[str, Any]] = []
    notes: list[str] = []
    for s in series:
        rel = selection_reliability(db, s["runs"])
        part = question_diagnostics(db, s["runs"], rel, item_pks=set(s["items"]))
        diag += [{"judge": s["judge"], **d} for d in part]
        notes += [n for n in diagnostics_notes(part, len(s["runs"]), rel) if n not in notes]
    rows = [{**{k: v for k, v in d.items() if k not in HIDDEN_DIAGNOSTICS},
             "flags": ", ".join(d["flags"] + ([f"({', '.join(d['weak_signs'])}: "
                                               f"{d['flag_note']})"] if d["weak_signs"] else []))}
            for d in diag]
    weak = sum(1 for d in diag if d.get("weak_signs"))
    basis = None if not series else (
        "Per judge, on the items its selected runs all scored: " + "; ".join(
            f"{s['judge']} — run(s) {', '.join(f'#{r}' for r in s['runs'])} on {s['n_items']} "
            f"items over {s['n_groups']} group(s)" for s in series)
        + ". A question's figures and flags come from one judge's answers only, so selecting "
          "a run of another judge never changes them; \"judges agree\" compares that judge's "
          "runs with each other.")
    return {
        "annotators": human["annotators"],
        "human_line": (f"{len(human['annotators'])} annotators, {hh['n_units']} (item, question)"
                       f" units answered by two or more, over {_support_line(hh)}: "
                       f"Krippendorff α = {fmt(hh['krippendorff_alpha'])}, Fleiss κ = "
                       f"{fmt(hh['fleiss_kappa'])} (no interval: a point estimate)"),
        "human_empty": hh["n_units"] == 0,
        "human_judge": [{"judge": k, **v} for k, v in human["human_judge"].items()],
        "basis": basis,
        "diagnostics": rows,
        "figure": charts.diagnostics_scatter(diag) if diag else None,
        "notes": notes + ([
            f"{weak} questions show a sign on fewer than {minimum()} groups: listed, not "
            f"flagged (a flag needs answers on ≥ {minimum()} documents / contexts / "
            "queries)."] if weak else []),
        "candidates": _candidates(diag, len(series) > 1),
        # the questions the "Only unstable or length-following questions" filter keeps
        "unstable_or_length": [d["question_id"] for d in diag
                               if {"unstable", "follows length"} & set(d["flags"])],
    }


def columns(coef: str = "spearman", level: str = "sample_level") -> dict[str, dict[str, Any]]:
    """What each column of the page's tables holds: ``{table: {"config": keyword arguments of
    ``studio_ui.tables.table_config``, "order": column order, "long": long-text columns}}``."""
    unit = LEVEL_UNITS[level]
    support = {"items": "Items with both a judge and a human score behind the value",
               "groups": "Groups (documents / contexts / queries) of those items",
               "systems": "Systems (models) of those items"}
    return {
        "correlation": {
            "config": {"keys": {"dimension": ""},
                       "scores": {coef: f"{coef} correlation with the human scores "
                                        f"({level.replace('_', ' ')})"},
                       "counts": {f"n {unit}": f"Sample size: the number of {unit} the value "
                                               "is computed over", **support},
                       "long": {"run": "The run (judge · method), ensemble or external metric",
                                "95% CI": "Bootstrap interval (groups resampled), or why none",
                                "note": "Why a value is blank, or how the average is made"},
                       "widths": {"run": 180, "95% CI": 200}},
            "order": ["run", "dimension", coef, "95% CI", f"n {unit}", "items", "groups",
                      "systems", "note"]},
        "items": {
            "config": {"keys": {"item_id": "", "group": "Source document / context",
                                "system": ""},
                       "scores": {"metric": "The run's score of the item",
                                  "human": "Human score",
                                  "gap": "|percentile rank of judge − of human|"},
                       "labels": {"item_id": "item", "metric": "judge score",
                                  "human": "human score", "gap": "rank gap"}},
            "order": ["item_id", "group", "system", "metric", "human", "gap"]},
        "pairs": {
            "config": {"scores": {"Cohen κ": "Chance-corrected agreement of the two runs' "
                                             "Yes/No"},
                       "decisions": {"raw agreement": "Units where both gave the same answer"},
                       "long": {"note": "Why κ is blank (undefined)"}},
            "order": ["pair", "Cohen κ", "raw agreement", "note"]},
        "human_judge": {
            "config": {"labels": {"cohen_kappa": "Cohen κ vs humans",
                                  "krippendorff_alpha": "Krippendorff α", "n_units": "units",
                                  "n_items": "items", "n_groups": "groups",
                                  "n_systems": "systems"}},
            "order": ["judge", "cohen_kappa", "krippendorff_alpha", "n_units", "n_items",
                      "n_groups", "n_systems"]},
        "judge_agreement": {
            "config": {"scores": {"α (scores)": "Krippendorff α (interval) of the judges' "
                                                "dimension scores on the items they share",
                                  "α (standardised)": "α on each judge's scores standardised "
                                                      "per dimension: do the judges agree "
                                                      "on which items are better, whatever "
                                                      "their offset and scale?",
                                  "α (Yes/No)": "Krippendorff α (nominal) of the judges' "
                                                "Yes/No answers to the same questions"},
                       "counts": {"version": "The checklist version the runs share",
                                  **support},
                       "long": {"judges": "One run per judge (#run judge)",
                                "interval": "Bootstrap interval of α (scores), groups "
                                            "resampled — or why none",
                                "Yes/No interval": "Bootstrap interval of α (Yes/No) — or why "
                                                   "none",
                                "standardised interval": "Bootstrap interval of the "
                                                         "standardised α — or why none",
                                "per dimension": "α (scores) per dimension"},
                       "widths": {"judges": 260}},
            "order": ["method", "α (scores)", "interval", "α (standardised)",
                      "standardised interval", "α (Yes/No)", "Yes/No interval",
                      "items", "groups", "systems", "version", "judges", "per dimension"]},
        "stability": {
            "config": {"scores": {"mean": "Mean of the judges' average correlation",
                                  "variance": "Variance across judges (lower = more stable)"},
                       "labels": {"n_runs": "runs", "n_judges": "judges", "reason": "note"}},
            "order": ["method", "mean", "variance", "n_judges", "n_runs", "reason"]},
        "significance": {
            "config": {"decisions": {"judges": "Judges run with both methods (the pairs)"},
                       "long": {"result": "Wilcoxon W, p and BH-corrected p — or why no test"}},
            "order": ["comparison", "judges", "result"]},
        "quality": {
            "config": {"keys": {"dimension": "", "subset": ""},
                       "counts": {"items": "Items in the subset"},
                       "scores": {"mean judge score": "Mean judge score",
                                  "spearman": "Spearman with the human score within the "
                                              "subset"},
                       "long": {"run": "The run (judge · method)",
                                "note": "Why the correlation is blank"},
                       "widths": {"run": 200}},
            "order": ["run", "dimension", "subset", "items", "mean judge score", "spearman",
                      "note"]},
        "diagnostics": {
            "config": {"keys": {"judge": "The judge whose selected runs' answers the row "
                                         "reads (one series per judge)",
                                "question_id": "", "dimension": ""},
                       "counts": {"n": "Answers to the question over the selected runs",
                                  "n_items": "Items those answers are about",
                                  "n_groups": "Groups (documents / contexts / queries) of "
                                              "those items",
                                  "flip_n": "Items answered Yes/No in every compared run "
                                            "(behind the flip rate)",
                                  "length_n": "Items behind the length ρ"},
                       "decisions": {"flags": "Why the question may need review: never "
                                              "varies, anti-correlates with humans, judges "
                                              "disagree, unstable (flip rate > "
                                              f"{UNSTABLE_FLIP:g}), follows length (|length ρ| "
                                              f"≥ {FOLLOWS_LENGTH_RHO:g}) — each from ≥ "
                                              f"{minimum()} groups; in brackets, a sign "
                                              "seen on too few groups to flag",
                                     "status": "The question's review status"},
                       "scores": {"yes_rate": "Share of valid answers that are Yes",
                                  "flip_rate": "Share of items whose verdict differs between "
                                               "selected runs of one checklist version, judge "
                                               "and method asked with different phrasings; "
                                               f"'unstable' above {UNSTABLE_FLIP:g} (blank: "
                                               "see the notes above the table)",
                                  "p_yes_sd": "Pooled within-item SD of the answer (p(Yes), "
                                              "else 1/0) across those runs",
                                  "length_r": "Spearman ρ of the answer (p(Yes), else 1/0, "
                                              "averaged over the selected runs) with the "
                                              "output's length in words; 'follows length' "
                                              f"when |ρ| ≥ {FOLLOWS_LENGTH_RHO:g} and its 95% "
                                              "interval excludes 0",
                                  "invalid_rate": "Share of answers with no readable verdict",
                                  "discrimination": "Spearman of the answers with the human "
                                                    "score",
                                  "judge_agreement": "Share of items where all runs agree",
                                  "human_agreement": "Share agreeing with people's label "
                                                     "(settled answer, else majority)"},
                       "long": {"question": "The checklist question"},
                       "labels": {"question_id": "id", "yes_rate": "yes-rate",
                                  "invalid_rate": "invalid", "judge_agreement": "judges agree",
                                  "human_agreement": "humans agree", "n": "answers",
                                  "n_items": "items", "n_groups": "groups",
                                  "flip_rate": "flip rate", "p_yes_sd": "p(Yes) SD",
                                  "flip_n": "flip items", "length_r": "length ρ",
                                  "length_n": "length items"}},
            "order": ["judge", "question_id", "dimension", "flags", "n", "n_items", "n_groups",
                      "yes_rate", "invalid_rate", "discrimination", "judge_agreement",
                      "human_agreement", "flip_rate", "p_yes_sd", "flip_n", "length_r",
                      "length_n", "status"], "long": ["question"]},
        "candidates": {
            "config": {"keys": {"question_id": "", "dimension": "",
                                "judges": "The judge(s) whose answers raised a flag"},
                       "decisions": {"flags": "Why the question was flagged"},
                       "counts": {"answers": "Answers behind the flag",
                                  "items": "Items answered", "groups": "Groups (documents / "
                                  "contexts / queries) answered"},
                       "long": {"question": "The checklist question"},
                       "labels": {"question_id": "id"}},
            "order": ["question_id", "dimension", "flags", "judges", "answers", "items",
                      "groups"],
            "long": ["question"]},
    }


def send_reasons(cands: list[dict[str, Any]]) -> dict[int, str]:
    """Each flagged question's reason for going back to review, as its review history shows
    it: its flags (per judge) and what they rest on."""
    return {int(c["question_id"]): f"flagged by question diagnostics — {c['flags']} "
                                   f"({c['groups']} groups, {c['items']} items)"
            for c in cands}
