"""Position bias of human pairwise votes: how often the answer shown on the left (as "A") won.

The Pairwise votes page shows each pair in a random order and stores which answer it showed
first (``preference.shown_first``). Without a bias, the left answer wins about half of the
non-tie votes; an annotator who mostly picks one side votes by position rather than by the
answers, and their votes then blur the human Elo and the judges' pair accuracy on the
Rankings page. This module counts it, per annotator and over all votes, so the page and
``checkeval analyze --pairs --json`` can say so. It exists apart from
:mod:`checkeval_core.annotation.pairwise` (which decides and stores the votes) because it only
reads rows: :func:`position_bias` is pure and works on any vote rows, imported ones included
(those have no recorded order and are counted as such).

Interval: Wilson 95 % for a binomial share (:func:`checkeval_core.stats.bootstrap.wilson_ci`);
a vote "follows position" when that interval excludes 0.5 and the decisive votes come from at
least :data:`~checkeval_core.stats.bootstrap.MIN_GROUPS` groups (queries): on fewer, the share
is shown without a flag (the small-sample rule of the statistics floor). The pooled figure treats every
vote as independent (votes of one annotator are not; the per-annotator rows show who drives
it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from checkeval_core.stats.bootstrap import enough_groups, minimum, wilson_ci
from checkeval_core.stats.values import Figure, pct

#: Confidence level of the interval.
LEVEL = 0.95
METHOD = "Wilson 95% interval for the share of non-tie votes won by the answer shown left (A)"
NO_VOTES = "no pairwise votes"
NO_ORDER = ("no votes with a recorded order (imported votes do not say which answer was shown "
            "first; the Pairwise votes page records it)")
ONLY_TIES = "only ties among the votes with a recorded order: no left/right choice to count"


def _left_chosen(v: Mapping[str, Any]) -> bool | None:
    """True if the vote chose the answer shown first, False if the other one, None for a tie
    or an unrecorded order (``shown_first`` missing or not one of the two items)."""
    first = v.get("shown_first")
    if first is None or first not in (v["item_a"], v["item_b"]) or v["winner"] == "tie":
        return None
    chosen = v["item_a"] if v["winner"] == "a" else v["item_b"]
    return chosen == first


def _summary(votes: list[Mapping[str, Any]], who: str | None) -> dict[str, Any]:
    ordered = [v for v in votes if v.get("shown_first") is not None
               and v["shown_first"] in (v["item_a"], v["item_b"])]
    ties = sum(v["winner"] == "tie" for v in ordered)
    left = sum(_left_chosen(v) is True for v in ordered)
    n = len(ordered) - ties
    out: dict[str, Any] = {"annotator": who, "n_votes": len(votes), "n_ordered": len(ordered),
                           "n_ties": ties, "n_decisive": n, "n_left": left, "share": None,
                           "ci": [None, None], "follows_position": False, "warning": None,
                           "reason": None, "n_groups": 0, "flag_reason": None}
    if not votes:
        out["reason"] = NO_VOTES
    elif not ordered:
        out["reason"] = NO_ORDER
    elif n == 0:
        out["reason"] = ONLY_TIES
    if out["reason"]:
        return out
    lo, hi = wilson_ci(left, n, 1 - LEVEL)
    groups = {v.get("group_id") for v in ordered if v["winner"] != "tie"}
    n_groups = len(groups) if None not in groups else n
    out.update(share=left / n, ci=[lo, hi], n_groups=n_groups,
               follows_position=(lo > 0.5 or hi < 0.5) and enough_groups(n_groups))
    if (lo > 0.5 or hi < 0.5) and not out["follows_position"]:
        out["flag_reason"] = (f"no flag: the decisive votes come from {n_groups} groups (queries), "
                         f"fewer than the {minimum()} a flag needs")
    if out["follows_position"]:
        subject = "all annotators together" if who is None else f"annotator {who or '(no name)'}"
        whose = "the votes" if who is None else "their votes"
        side = "" if lo > 0.5 else " (they favour the right answer)"
        ci = Figure(left / n, (lo, hi)).ci_text(0, percent=True, label="95% CI ")
        out["warning"] = (f"{subject} chose the left answer in {left} of {n} non-tie votes "
                          f"({pct(left / n)}, {ci}): {whose} follow "
                          f"position{side}.")
    return out


def position_bias(votes: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Left-side share of pairwise votes, per annotator and overall.

    ``votes``: rows with ``annotator``, ``winner`` (``a``/``b``/``tie``, relative to
    ``item_a``), ``item_a``, ``item_b`` and ``shown_first`` (the item shown as A, on the left;
    None when the order was not recorded). Returns ``{"overall", "annotators", "warnings",
    "method"}``: ``overall`` and each of ``annotators`` (every annotator with a vote, by name)
    hold ``annotator`` (None overall), ``n_votes``, ``n_ordered`` (votes with a recorded
    order, ties included), ``n_ties``, ``n_decisive`` (= ``n_ordered`` − ``n_ties``),
    ``n_left`` (left answer chosen), ``share`` (``n_left / n_decisive``), ``ci`` (Wilson 95 %),
    ``follows_position`` (the interval excludes 0.5), ``warning`` (a sentence when it does)
    ``reason`` (why ``share`` is None: no votes, no recorded order, only ties), ``n_groups``
    (queries of the decisive votes; the votes themselves when a vote has no group) and
    ``flag_reason`` (why an interval that excludes 0.5 raised no flag);
    ``warnings`` lists the annotators' warnings, then the overall one."""
    votes = list(votes)
    by: dict[str, list[Mapping[str, Any]]] = {}
    for v in votes:
        by.setdefault(v.get("annotator") or "", []).append(v)
    annotators = [_summary(by[a], a) for a in sorted(by)]
    overall = _summary(votes, None)
    return {"overall": overall, "annotators": annotators,
            "warnings": [s["warning"] for s in [*annotators, overall] if s["warning"]],
            "method": METHOD}
