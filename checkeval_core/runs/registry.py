"""The one registry of evaluation methods and aggregations, read by pages, CLI, runs and bench.

A method names how the judge is asked (``runs/methods.py`` plans its requests) and which
aggregations its scores hold (``runs/scoring.py`` computes them); an aggregation names how a
run's answers become one score per item and dimension. Adding a method or an aggregation
means adding it here (and its code where the entry says): the Run page's choices, the CLI's
validation of ``--method`` and ``--param aggregation=…``, the Analysis page's lists and the
quality bench all read these tables (in the spirit of lm-evaluation-harness'
``api/registry.py``).
"""

from __future__ import annotations

from dataclasses import dataclass


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
    binary: bool  # one Yes/No answer per question (p(Yes) when the backend has log-probs)

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

METHODS: dict[str, Method] = {m.name: m for m in (
    Method("checkeval", "CheckEval", "Lee et al., CheckEval",
           "questions grouped by sub-dimension, several per prompt; numbered Yes/No lines",
           ("share_yes", "mean_p_yes", "linear", "calibrated", "calibrated_len"), binary=True),
    Method("rocketeval", "RocketEval", "Wei et al., RocketEval (ICLR 2025)",
           "one Yes/No prompt per question, the question last; normalised p(Yes)",
           ("mean_p_yes", "share_yes", "supervised", "linear", "calibrated", "calibrated_len"),
           binary=True),
    Method("seal", "SEAL", "SEAL",
           "units (sentences, sentence pairs, facts, whole) × sub-dimensions, one Yes/No "
           "verification each, weighted by sub-dimension",
           ("weighted", "share_yes", "weighted_p_yes", "mean_p_yes"), binary=True),
    Method("geval", "G-Eval (baseline)", "Liu et al., G-Eval",
           "one 1–5 Likert score per dimension", ("likert", "likert_prob"), binary=False),
)}


def method(name: str) -> Method:
    """The method called ``name``; a ValueError listing the valid names otherwise."""
    if name not in METHODS:
        raise ValueError(f"method {name!r}: use one of {', '.join(METHODS)}")
    return METHODS[name]


def check_aggregation(method_name: str, aggregation: str) -> str:
    """``aggregation`` if the method's scores hold it; a ValueError listing them otherwise."""
    m = method(method_name)
    if aggregation not in m.aggregations:
        raise ValueError(f"aggregation {aggregation!r} is not computed for method "
                         f"{method_name!r}: use one of {', '.join(m.aggregations)}")
    return aggregation


def aggregation_help(name: str) -> str:
    """One line for a page or ``--help``: title and description of an aggregation."""
    a = AGGREGATIONS.get(name)
    return f"{a.title}: {a.description}" if a else name
