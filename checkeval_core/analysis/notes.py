"""The Analysis report's sentences and display rows: each figure as the page and the CSV show
it (its interval, or why it has none), and why a chart, a column or a statistic is blank or
misleading, with what to do. Pure functions of the report's values (:mod:`checkeval_core.
analysis.report`, :mod:`~checkeval_core.analysis.diagnostics`); no SQL, no statistics.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from checkeval_core.analysis.frames import LEVEL_NAMES, LEVEL_UNITS
from checkeval_core.stats.values import fmt_ci, isnan


# -- the correlations --------------------------------------------------------------------------
def format_ci(entry: dict[str, Any], coef: str, digits: int = 2) -> str:
    """``[0.12, 0.55]``, or the reason there is no interval."""
    return fmt_ci(entry["ci"][coef], digits,
                  reason=(entry.get("ci_reasons") or {}).get(coef))


def correlation_table(per_run: dict[str, Any], level: str, coef: str) -> list[dict[str, Any]]:
    """The page's / CSV's correlation rows: each value with its n, its interval (or why
    none) and, for a blank value, why."""
    unit = LEVEL_UNITS[level]
    out = []
    for r in per_run.values():
        for dim, d in r["dimensions"].items():
            e = d[level]
            groups = (d.get("support") or {}).get("n_groups")
            out.append({"run": r.get("label", ""), "dimension": dim, coef: e[coef],
                        "95% CI": format_ci(e, coef), f"n {unit}": e["n"],
                        **_support_cells(d.get("support")),
                        "skipped documents": e.get("skipped", 0),
                        "note": (e.get("reasons") or {}).get(coef)
                        or _fewer_note(level, e["n"], groups)})
        avg = r["average"][level]
        ns = [d[level]["n"] for d in r["dimensions"].values()]
        out.append({"run": r.get("label", ""), "dimension": "AVERAGE", coef: avg[coef],
                    "95% CI": "no interval: a mean over dimensions (see each dimension's)",
                    f"n {unit}": max(ns, default=0), **_support_cells(r.get("support")),
                    "skipped documents": 0,
                    "note": (avg.get("reasons") or {}).get(coef)
                    or f"mean over {avg['n']} dimension(s)"})
    return out


def _fewer_note(level: str, n: int, groups: int | None) -> str:
    """Why ``n documents`` is below ``groups`` at sample level (else nothing to say)."""
    if level != "sample_level" or not groups or n >= groups:
        return ""
    return (f"n documents {n} of {groups} groups: the other {groups - n} have a correlation "
            "that is undefined (fewer than 2 items, or constant judge or human scores) and "
            "are left out of the average")


def _support_cells(sup: dict[str, int] | None) -> dict[str, int | None]:
    sup = sup or {}
    return {"items": sup.get("n_items"), "groups": sup.get("n_groups"),
            "systems": sup.get("n_systems")}


def quality_rows(per_run: dict[str, Any]) -> list[dict[str, Any]]:
    """The high- vs low-quality split (human ≥ 3 vs < 3) of every run and dimension, each
    blank correlation with its reason (``note``)."""
    return [{"run": r.get("label", ""), "dimension": dim, "subset": name, "items": v["n"],
             "mean judge score": v["mean_metric"], "spearman": v["spearman"],
             "note": v.get("reason") or ""}
            for r in per_run.values() for dim, d in r["dimensions"].items()
            for name, v in d["quality_split"].items()]


def interval_note(per_run: dict[str, Any], level: str, coef: str) -> str | None:
    """Above the chart: how many bars have no error bar, and why (None if all have one)."""
    missing, total, why = 0, 0, []
    for r in per_run.values():
        for d in r["dimensions"].values():
            if isnan(d[level][coef]):
                continue
            total += 1
            reason = (d[level].get("ci_reasons") or {}).get(coef)
            if reason:
                missing += 1
                why.append(reason.removeprefix("no interval: "))
    if not missing:
        return None
    return (f"{missing} of {total} bars have no error bar — no interval: "
            f"{'; '.join(dict.fromkeys(why))}. A value without an interval rests on too few "
            "documents to mean much on its own (its sign may be chance): the intervals resample "
            "documents, so include items from more documents in the run (Run page).")


def correlation_chart_note(per_run: dict[str, Any], level: str, coef: str) -> str | None:
    """Why the correlation chart would be empty (then the page shows this instead), else None."""
    reasons = []
    for r in per_run.values():
        for dim, d in r["dimensions"].items():
            if not isnan(d[level][coef]):
                return None
            reasons.append(f"{dim}: {(d[level].get('reasons') or {}).get(coef)}")
    if not reasons:
        return ("No correlation to draw: no item of the selected runs has a human score for "
                "its dimensions — import human scores on the Data page.")
    unit = LEVEL_UNITS[level]
    ns = sorted({d[level]["n"] for r in per_run.values() for d in r["dimensions"].values()})
    return (f"No {coef} correlation to draw at {LEVEL_NAMES[level]} (n = "
            f"{', '.join(map(str, ns))} {unit}): " + "; ".join(dict.fromkeys(reasons)))


def coverage_note(per: dict[str, dict[str, int]], n_shared: int, n_shared_groups: int,
                  same: bool, shared: bool) -> str | None:
    """What the reader must know when the compared runs (``per``: each one's ``n_items``,
    ``n_groups``) cover different items — they share ``n_shared`` items over
    ``n_shared_groups`` groups, and the values are computed on those when ``shared`` — or None
    (one run, or the same items)."""
    if len(per) < 2 or same:
        return None
    each = "; ".join(f"{_key_label(k)}: {v['n_items']} items over {v['n_groups']} "
                     "group(s)" for k, v in per.items())
    if not n_shared:
        return (f"The selected runs share no item ({each}): each value is computed on its "
                "own items, so the runs are NOT comparable — select runs over the same items.")
    if shared:
        return (f"The selected runs cover different items ({each}): every value below is "
                f"computed on the {n_shared} items over {n_shared_groups} group(s) that all "
                "of them share.")
    return (f"The selected runs cover different items ({each}) and each value is "
            f"computed on its own items: they share only {n_shared}, so the values "
            "are not comparable.")


def _key_label(key: str) -> str:
    return f"#{key}" if key.isdigit() else key


# -- agreement, stability and significance across judges ---------------------------------------
def kappa_note(by_rater: dict[Any, list[str]], value: float, exact: bool = True) -> str | None:
    """Why a chance-corrected agreement is undefined or pulled towards 0: a rater who gave
    one answer everywhere (chance agreement then explains all of their agreement)."""
    n = min((len(v) for v in by_rater.values()), default=0)
    if n == 0:
        return "no unit answered by both — select runs over the same items"
    constant = {r: v[0] for r, v in by_rater.items() if len(set(v)) == 1}
    if not constant:
        return None
    lists = list(by_rater.values())
    raw = ""
    if len(lists) == 2 and len(lists[0]) == len(lists[1]):
        agree = sum(x == y for x, y in zip(*lists))
        raw = f"; raw agreement {agree}/{len(lists[0])}"
    who = ", ".join(f"#{r} always {v!r}" for r, v in constant.items())
    if len(constant) == len(by_rater) or (isnan(value) and not exact):
        return f"every answer is the same ({who}): chance agreement is 1, κ undefined{raw}"
    if exact:  # Cohen κ: undefined with one constant side (stats.agreement.cohen_kappa)
        return (f"a judge answered the same everywhere ({who}): κ undefined (it would be 0 "
                f"whatever the other answers){raw}")
    return (f"a judge answered the same everywhere ({who}): chance-corrected agreement is "
            f"pulled towards 0{raw}")


def agreement_reasons(by_run: dict[Any, list[str]], alpha: float, fleiss: float, n_units: int,
                      n_agree: int, alpha_scores: float, n_scored: int
                      ) -> dict[str, str | None]:
    """Why each statistic of the agreement across judges is undefined, or what makes a defined
    one misleading (a judge answering the same everywhere), else None: ``by_run`` each run's
    Yes/No labels, ``n_units`` the (item, question, unit)s two runs answered Yes/No, ``n_agree``
    those all runs answered alike, ``n_scored`` the (item, dimension)s two runs scored."""
    reasons = {"krippendorff_alpha": kappa_note(by_run, alpha, exact=False),
               "fleiss_kappa": kappa_note(by_run, fleiss, exact=False),
               "krippendorff_alpha_scores": None}
    if not n_units:
        reasons["krippendorff_alpha"] = reasons["fleiss_kappa"] = (
            "the runs share no (item, question) answered Yes/No by two of them — select runs "
            "over the same items")
    elif isnan(fleiss) and not isnan(alpha) and not reasons["fleiss_kappa"]:
        reasons["fleiss_kappa"] = ("needs the same number of runs answering every unit "
                                   f"(raw agreement {n_agree}/{n_units})")
    if isnan(alpha_scores):
        reasons["krippendorff_alpha_scores"] = (
            "the runs share no scored (item, dimension)" if not n_scored else
            "every run gave the same score everywhere: α undefined")
    return reasons


def judges_by_method(per_run: dict[str, Any]) -> dict[str, list[str]]:
    """Each method's judges, one per run (ensembles and external metrics have none): what the
    stability across judges compares."""
    by: dict[str, list[str]] = defaultdict(list)
    for key, r in per_run.items():
        if r.get("method") not in ("external", "ensemble"):
            by[r["method"]].append(r.get("judge", key))
    return by


def stability_note(per_run: dict[str, Any], level: str = "sample_level",
                   coef: str = "spearman") -> str | None:
    """Why the stability chart would say nothing (then the page shows this instead): it
    compares runs of one method across judges, so it needs ≥ 2 distinct judges of some
    method — two runs of the same judge are not "across judges"."""
    by = judges_by_method(per_run)
    if any(len(set(j)) >= 2 for j in by.values()):
        return None
    have = ", ".join(f"{m} ×{len(j)}" for m, j in sorted(by.items())) or "none"
    same = [m for m, j in sorted(by.items()) if len(j) >= 2]
    extra = ""
    if same:
        extra = (" The " + " and ".join(f"{len(by[m])} {m} runs" for m in same)
                 + " come from one judge (" + ", ".join(sorted({by[m][0] for m in same}))
                 + "): runs of the same judge are not across judges, so nothing is drawn.")
    return ("Stability across judges needs ≥ 2 runs of the same method with different judges "
            f"(selected: {have}) — run the same method with another judge and select both."
            + extra)


def significance_rows(sig: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Display rows of :func:`wilcoxon_bh`'s result: the outcome in words, or why none."""
    out = []
    for name, v in sig.items():
        if v.get("reason"):
            result = v["reason"]
        else:
            result = f"W = {v['statistic']:g}, p = {v['p']:.3g}, p (BH) = {v['p_bh']:.3g}"
        out.append({"comparison": name, "judges": v["n"], "result": result})
    return out


# -- question diagnostics ----------------------------------------------------------------------
def diagnostics_notes(diag: list[dict[str, Any]], n_runs: int,
                      reliability: dict[str, Any] | None = None) -> list[str]:
    """One sentence per diagnostics column that has blanks, saying why and what to do; with
    ``reliability`` (the ``selection_reliability`` the diagnostics used) also which runs the
    flip rates compare."""
    notes = []

    def blank(col: str) -> bool:
        return any(isnan(d[col]) for d in diag)

    if blank("yes_rate"):
        notes.append("Blank yes-rate: every answer to the question was invalid.")
    if blank("discrimination"):
        notes.append("Blank discrimination: the question's answers never vary, or its items "
                     "have no human score (needs ≥ 2 items with different answers).")
    if blank("judge_agreement"):
        notes.append("Blank judge agreement: needs ≥ 2 runs answering the same item — select "
                     "another run." if n_runs < 2 else
                     "Blank judge agreement: no item was answered by two of the runs.")
    if blank("human_agreement"):
        notes.append("Blank human agreement: no annotator answered the question yet (Annotate "
                     "page).")
    if reliability and reliability.get("note"):
        notes.append(reliability["note"])
    flip = [d for d in diag if isnan(d.get("flip_rate"))]
    if flip:
        why = list(dict.fromkeys(d["flip_reason"] for d in flip if d.get("flip_reason")))
        many = "" if len(flip) == len(diag) else f" ({len(flip)} of {len(diag)} questions)"
        notes.append(f"Blank flip rate and p(Yes) SD{many}: "
                     + "; ".join(why[:3]) + ("; …" if len(why) > 3 else "") + ".")
    if any(isnan(d.get("length_r")) for d in diag):
        notes.append("Blank length ρ: needs ≥ 3 items answered Yes/No, answers that vary and "
                     "outputs of different lengths (per question and run: `checkeval bias "
                     "--run N`).")
    return notes
