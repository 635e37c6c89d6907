"""The one registry of evaluation methods and aggregations: a name bound to its code.

A method entry carries everything the rest of the program asks about a method: its planner
(which judge requests one item needs, :mod:`checkeval_core.runs.methods`), its scorer (from
stored answers to every aggregation it lists, :mod:`checkeval_core.runs.scorers`), its
aggregations and, first among them, its primary one. The job runner, the score writer, the
CLI, the Run page, the recommended defaults, the analysis and the annotation comparisons all
dispatch through :func:`method`; nothing else tests a method's name. A new method is one
:func:`register_method` call (or one entry below) with its planner, its prompt and a test.
Unknown names fail as lm-evaluation-harness' ``api/registry.py`` does: "Unknown method 'x'.
Available: a, b, c".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checkeval_core.prompts.judge import BINARY_PHRASINGS
from checkeval_core.prompts.methods import GROUPED_PHRASINGS
from checkeval_core.runs import methods as M
from checkeval_core.runs import scorers as S
from checkeval_core.store import loads

Planner = Callable[[dict[str, Any], dict[str, Any]], list[M.Work]]
Scorer = Callable[[list[S.Answer], S.ScoreContext], list[S.ScoreRow]]


@dataclass(frozen=True)
class Aggregation:
    name: str
    title: str
    description: str
    needs_labels: bool = False  # learned from human scores (always predicted out of sample)


@dataclass(frozen=True)
class Method:
    name: str
    title: str
    paper: str
    description: str
    aggregations: tuple[str, ...]  # every aggregation its scores hold; the first is the default
    binary: bool  # Yes/No answers (p(Yes) when the backend has log-probs)
    per_question: bool  # one verdict per checklist question (comparable with a person's)
    plan: Planner  # plan(item, ctx) -> the item's judge requests
    score: Scorer  # score(answers, ctx) -> score rows of its aggregations
    prepare: Callable[[dict[str, Any]], None] | None = None  # once per run, before its items
    phrasings: int = 1  # how many wordings of its prompt the run option ``phrasing`` picks from
    #: one prompt asks a sub-dimension's questions together (so dropping one question changes
    #: the prompt of the others, and a revised checklist re-asks them)
    grouped: bool = False

    @property
    def primary(self) -> str:
        return self.aggregations[0]


AGGREGATIONS: dict[str, Aggregation] = {a.name: a for a in (
    Aggregation("share_yes", "share of Yes", "yes / (yes + no); invalid answers left out and "
                "counted"),
    Aggregation("mean_p_yes", "mean p(Yes)", "mean normalised p(Yes) over the checklist "
                "(1/0 from the verdict without log-probabilities)"),
    Aggregation("supervised", "supervised (RocketEval)", "Extremely Randomized Trees on the "
                "per-question values, blended with mean p(Yes) by RocketEval's α",
                needs_labels=True),
    Aggregation("linear", "learned weights (CheckEval)", "linear regression on the "
                "per-question values, 5 folds by group", needs_labels=True),
    Aggregation("calibrated", "calibrated", "ridge regression on every question's value "
                "(also centred within its group), leave-one-group-out", needs_labels=True),
    Aggregation("calibrated_len", "calibrated + length", "calibrated, plus the output's "
                "length in words as a feature", needs_labels=True),
    Aggregation("weighted", "weighted units (SEAL)", "mean over units of Σ w·v over "
                "sub-dimensions"),
    Aggregation("weighted_p_yes", "weighted units, p(Yes)", "SEAL's weighted score with "
                "v = p(Yes)"),
    Aggregation("likert", "Likert 1–5", "the parsed 1–5 score"),
    Aggregation("likert_prob", "Likert, probability-weighted", "Σ s·p(s) over the first "
                "token's 1..5"),
)}

METHODS: dict[str, Method] = {}


def register_method(entry: Method) -> Method:
    """Add a method (its aggregations must be known ones; a name is registered once)."""
    if entry.name in METHODS:
        raise ValueError(f"method {entry.name!r} is already registered")
    unknown = [a for a in entry.aggregations if a not in AGGREGATIONS]
    if not entry.aggregations or unknown:
        raise ValueError(f"method {entry.name!r}: unknown aggregation(s) {', '.join(unknown)} "
                         f"(available: {', '.join(AGGREGATIONS)})")
    METHODS[entry.name] = entry
    return entry


for _m in (
    Method("checkeval", "CheckEval", "Lee et al., CheckEval",
           "questions grouped by sub-dimension, several per prompt; numbered Yes/No lines",
           ("share_yes", "mean_p_yes", "linear", "calibrated", "calibrated_len"), binary=True,
           per_question=True, plan=M.plan_checkeval, score=S.score_yes_no,
           phrasings=len(GROUPED_PHRASINGS), grouped=True),
    Method("rocketeval", "RocketEval", "Wei et al., RocketEval (ICLR 2025)",
           "one Yes/No prompt per question, the question last; normalised p(Yes)",
           ("mean_p_yes", "share_yes", "supervised", "linear", "calibrated", "calibrated_len"),
           binary=True, per_question=True, plan=M.plan_rocketeval, score=S.score_yes_no,
           phrasings=len(BINARY_PHRASINGS)),
    Method("seal", "SEAL", "SEAL",
           "units (sentences, sentence pairs, facts, whole) × sub-dimensions, one Yes/No "
           "verification each, weighted by sub-dimension",
           ("weighted", "share_yes", "weighted_p_yes", "mean_p_yes"), binary=True,
           per_question=False, plan=M.plan_seal_item, score=S.score_seal,
           prepare=M.prepare_seal),
    Method("geval", "G-Eval (baseline)", "Liu et al., G-Eval",
           "one 1–5 Likert score per dimension", ("likert", "likert_prob"), binary=False,
           per_question=False, plan=M.plan_geval, score=S.score_likert),
):
    register_method(_m)


def unregister_method(name: str) -> None:
    """Remove a method added by :func:`register_method` (a test's toy method, a plugin)."""
    method(name)
    del METHODS[name]


def method(name: str) -> Method:
    """The method called ``name``; a ValueError listing the available ones otherwise."""
    if name not in METHODS:
        raise ValueError(f"Unknown method {name!r}. Available: {', '.join(METHODS)}")
    return METHODS[name]


def per_question_methods() -> list[str]:
    """Methods whose answers are one verdict per checklist question, as a person's are."""
    return [m.name for m in METHODS.values() if m.per_question]


def primary_aggregation(run: dict[str, Any]) -> str:
    """A run's primary aggregation: the one it was started with (``params.aggregation``),
    else its method's primary. ``run`` is a run row (``params`` as a dict or JSON text)."""
    params = run.get("params") or {}
    if isinstance(params, str):
        params = loads(params, {})
    return params.get("aggregation") or method(run["method"]).primary


def check_aggregation(method_name: str, aggregation: str) -> str:
    """``aggregation`` if the method's scores hold it; a ValueError listing them otherwise."""
    m = method(method_name)
    if aggregation not in m.aggregations:
        raise ValueError(f"aggregation {aggregation!r} is not computed for method "
                         f"{method_name!r}: use one of {', '.join(m.aggregations)}")
    return aggregation


def all_aggregations(methods: list[str] | None = None) -> list[str]:
    """The aggregations of ``methods`` (default: every method), each once, in registry order."""
    names = list(METHODS) if methods is None else methods
    return [a for a in AGGREGATIONS if any(a in method(n).aggregations for n in names)]
