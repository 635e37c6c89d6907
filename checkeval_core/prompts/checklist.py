"""Prompts for checklist generation: diversification, elaboration, filtering, instance lists.

Our own wording of the CheckEval (augmentation, filtering) and RocketEval (instance
checklist) procedures. Every generated question records PROMPT_VERSION.
"""

PROMPT_VERSION = "checklist-v2"

GEN_SYSTEM = (
    "You design evaluation checklists. Every question you write can be answered with Yes or No "
    "about a single piece of generated text, and is phrased so that 'Yes' means the text is "
    "better. Output one question per line as a numbered list, and nothing else: no answer "
    "options, no explanations."
)

DIVERSIFY = """Quality dimension: {dimension}
Definition: {definition}
Aspect of this dimension: {sub_dimension}

Existing questions for this aspect:
{seeds}

Write {n} NEW yes/no questions that check other facets of the aspect "{sub_dimension}" that the
existing questions do not cover. Do not repeat or rephrase the existing questions."""

ELABORATE = """Example.
Broad question: "Is the answer polite?"
Sub-questions:
1. Does the answer greet or thank the reader?
2. Does the answer avoid blaming the reader?
3. Is the tone of the answer respectful throughout?

Your task.
Quality dimension: {dimension}
Definition: {definition}
Aspect of this dimension: {sub_dimension}
Broad question: "{seed}"

Write {n} more specific yes/no sub-questions about the {dimension} of the text that together
help answer this broad question, each checking one concrete, observable property. Each must
differ from the broad question, from the example and from the others.
Sub-questions:"""

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
