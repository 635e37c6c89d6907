"""Prompts for checklist generation: diversification, elaboration, filtering, instance lists.

Our own wording of the CheckEval (augmentation, filtering) and RocketEval (instance
checklist) procedures. Every generated question records PROMPT_VERSION.
"""

PROMPT_VERSION = "checklist-v1"

GEN_SYSTEM = (
    "You design evaluation checklists. Every question you write can be answered with Yes or No "
    "about a single piece of generated text, and is phrased so that 'Yes' means the text is "
    "better. Output one question per line as a numbered list, and nothing else."
)

DIVERSIFY = """Quality dimension: {dimension}
Definition: {definition}
Aspect of this dimension: {sub_dimension}

Existing questions for this aspect:
{seeds}

Write {n} NEW yes/no questions that check other facets of the aspect "{sub_dimension}" that the
existing questions do not cover. Do not repeat or rephrase the existing questions."""

ELABORATE = """Quality dimension: {dimension}
Definition: {definition}
Aspect of this dimension: {sub_dimension}

Broad question:
{seed}

Write {n} more specific yes/no sub-questions that together help answer the broad question, each
checking one concrete, observable property of the text."""

FILTER_SYSTEM = (
    "You review evaluation checklists. You answer with JSON only."
)

FILTER = """Quality dimension: {dimension}
Definition: {definition}

Candidate yes/no questions:
{questions}

Check every question against three criteria:
1. alignment: answering "Yes" must mean the text is BETTER on this dimension;
2. consistency: the question must be about this dimension as defined, not another quality;
3. redundancy: the question must not ask the same thing as another question in the list.
Return a JSON object {{"decisions": [{{"id": <number>, "keep": true or false,
"criterion": "alignment" | "consistency" | "redundancy" | "", "reason": "<short reason>",
"duplicate_of": <number or null>}}]}} with one entry per question."""

INSTANCE = """Here is a user's request to an AI assistant{with_reference}.

Request:
{input}
{reference}
Write between 5 and 10 yes/no questions that a grader should check in the assistant's answer to
THIS request: each question specific to the request, answerable from the answer alone, and
phrased so that "Yes" means a better answer."""
