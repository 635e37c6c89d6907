"""Prompt for proposing a new checklist question from what separates a better-rated answer
from a worse-rated one (the proposal of :mod:`checkeval_core.analysis.proposal`).

Our own wording. The question must check something the kept questions do not, so they are
listed; every proposed question records PROMPT_VERSION.
"""

PROMPT_VERSION = "proposal-v1"

PROPOSE_SYSTEM = (
    "You design evaluation checklists. You write one question that can be answered with Yes "
    "or No about a single {noun}, phrased so that 'Yes' means the {noun} is better. Output the "
    "question only: no answer, no explanation."
)

PROPOSE_QUESTION = """Quality dimension: {dimension}
{query}People rated answer A better than answer B.

Answer A (rated better):
{better}

Answer B (rated worse):
{worse}

The checklist already asks:
{kept}

Write ONE new yes/no question about a {noun} that answer A satisfies and answer B does not,
about an aspect the checklist does not ask yet. Do not repeat or rephrase the questions above."""
