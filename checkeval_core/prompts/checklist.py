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

# Per-query (instance) checklists, RocketEval's setting: one list per query, shared by every
# model's answer to it, so it is written from the query (and, optionally, a reference answer),
# never from an answer being judged.
INSTANCE_PROMPT_VERSION = "instance-v2"

INSTANCE = """Here is a user's request to an AI assistant{with_reference}.

Request:
{input}
{reference}
Write between 5 and 10 yes/no questions that a grader will ask about ANY assistant's answer to
THIS request. Each question checks one concrete point a good answer must get right (what to
include, what to get correct, the requested format or length), is specific to this request,
can be answered by reading the answer alone, and is phrased so that "Yes" means a better
answer.{reference_hint}"""

INSTANCE_REFERENCE_HINT = (
    "\nUse the reference answer only to find the key points; do not ask whether the answer "
    "matches the reference word for word.")

# One question per generation for a per-query checklist (small local judges; see below): the
# request (and reference) once, the questions written so far, and an opening forced by a grammar
# (``INSTANCE_OPENINGS``) so each generation checks another point instead of enumerating one.
INSTANCE_SINGLE_PROMPT_VERSION = "instance-single-v1"

INSTANCE_ONE_SYSTEM = (
    "You write one evaluation question at a time about an AI assistant's response to a user's "
    "request. The question can be answered with Yes or No by reading the response; 'Yes' means "
    "the response is better. Write the question only."
)

INSTANCE_ONE = """Request:
{input}
{reference}{written}
Write ONE yes/no question that checks a concrete point a good response to THIS request must get
right: content it must include, a fact it must get correct, or the requested format or length.
Question:"""

INSTANCE_ONE_REFERENCE = "\nReference answer (use it only to find the key points):\n{reference}\n"
INSTANCE_ONE_WRITTEN = "\nQuestions already written (check something else):\n{questions}\n"

INSTANCE_OPENINGS = (
    "Does the response ", "Does the response correctly ", "Is the response ",
    "Does the response include ", "Does the response explain ", "Does the response follow ",
    "Is the information in the response ", "Does the response give ", "Is the response's ",
    "Does the response avoid ",
)

# -- one question per generation, for small local judges (0.5–1.5B) -----------------------------
# A small model asked for a list of n questions repeats the seed, lists "- Yes / - No" or drifts
# off topic; asked for ONE question, with the output held to a question's shape by a grammar
# and several samples drawn with different seeds, it stays on task. The wording names what is
# judged (summary, response…) so a summary task never gets questions about "the answer".
SINGLE_PROMPT_VERSION = "checklist-single-v1"

SINGLE_SYSTEM = (
    "You write one evaluation question at a time. The question is about a {noun} and can be "
    "answered with Yes or No by reading the {noun}; 'Yes' means the {noun} is better. Write the "
    "question only."
)

DIVERSIFY_ONE = """Quality dimension of the {noun}: {dimension}
Definition: {definition}
Aspect: {sub_dimension}

Questions already asked about this aspect:
{seeds}

Write ONE new yes/no question about the {noun}'s {sub_dimension} that checks something the
questions above do not check.
Question:"""

ELABORATE_EXAMPLE_BROAD = "Is the {noun} easy to read?"
ELABORATE_EXAMPLE_SPECIFIC = "Does the {noun} use complete sentences?"

ELABORATE_ONE = """Example.
Broad question: "Is the {noun} easy to read?"
Specific question: Does the {noun} use complete sentences?

Your task.
Quality dimension of the {noun}: {dimension}
Definition: {definition}
Broad question: "{seed}"
{written}Write ONE more specific yes/no question about the {noun} that helps answer the broad question
by checking one concrete, observable property of the {noun}.
Specific question:"""

# Auxiliary verb, then the rest of the question on one line, then "?": a question's shape.
QUESTION_GRAMMAR = r'''root ::= aux " " body "?"
aux ::= "Does" | "Do" | "Is" | "Are" | "Has" | "Have" | "Can" | "Will" | "Would" | "Should" | "Was" | "Were" | "Did"
body ::= [^?\n]{8,200}'''

# A small model asked again with the same prompt copies the question it was shown (measured:
# 4 of 4 copies, greedy or at temperature 1). The k-th generation is therefore made to start
# with the k-th opening below (forced by its grammar), which steers it to another facet while
# staying greedy, deterministic and cacheable.
QUESTION_OPENINGS = (
    "Does the {noun} ", "Is the {noun} ", "Are the sentences of the {noun} ",
    "Does every sentence of the {noun} ", "Can a reader of the {noun} ", "Is each part of the {noun} ",
    "Are all the ideas in the {noun} ", "Is the wording of the {noun} ", "Does the {noun} clearly ",
    "Do the first and last sentences of the {noun} ", "Is the order of the {noun}'s ",
    "Does the {noun} avoid ",
)


def opening_grammar(opening: str) -> str:
    """A GBNF grammar: ``opening`` verbatim, then the rest of one question, then "?"."""
    return ('root ::= "' + opening.replace("\\", "\\\\").replace('"', '\\"')
            + '" [^?\\n]{4,200} "?"')

# -- filtering by Yes/No checks, for small local judges ----------------------------------------
# One small binary decision per question and criterion instead of one long JSON answer for the
# whole pool (which a 0.5B model completes for one question in eight): every question gets a
# decision, with the judge's p(Yes) as its confidence.
FILTER_CONTEXT = """We are building a checklist of yes/no questions to evaluate the {dimension} of a {noun}.
Definition of {dimension}: {definition}

"""

FILTER_ALIGNMENT = ('Candidate question: "{question}"\nIf a {noun} gets the answer "Yes" to this '
                    "question, is that {noun} better in {dimension}?")

FILTER_CONSISTENCY = ('Candidate question: "{question}"\nIs this question about the {dimension} '
                      "of the {noun}, as defined above?")

FILTER_REDUNDANT = ('Question A: "{a}"\nQuestion B: "{b}"\nDo questions A and B check the same '
                    "thing, so that one of them is unnecessary?")

# -- questions grounded in examples: contrastive (pairs people scored) and inductive (their notes)
# Our own wording of the two generators AutoChecklist calls Contrastive and Inductive. The pair
# is shown as "better" and "worse" because people said so; the question must name neither, so
# that it can be asked of any single text. ``{n_ask}`` is "ONE yes/no question" (one per generation,
# small local judges, held to a question's shape by a grammar) or "up to N yes/no questions"
# (a numbered list).
GROUNDED_PROMPT_VERSION = "grounded-v1"

GROUNDED_SYSTEM = (
    "You write evaluation questions about a {noun}. Each question can be answered with Yes or "
    "No by reading one {noun} alone, and 'Yes' means the {noun} is better. Write the "
    "question(s) only: no answer, no explanation, no mention of examples or notes."
)

CONTRASTIVE = """Quality dimension of the {noun}: {dimension}
Definition: {definition}

Two candidates, each a {noun} written from the same source. People who rated them judged the
FIRST one clearly better on {dimension} than the second.
{source}
Better {noun}:
{better}

Worse {noun}:
{worse}

What does the better {noun} do that the worse one does not? Write {n_ask} about that
difference, worded so it can be asked of any {noun} (do not mention "first",
"second", "better" or "worse"; "Yes" = the {noun} does what the better one does).
{written}{lead}"""

CONTRASTIVE_SOURCE = "\nSource (shortened):\n{source}\n"

INDUCTIVE = """Quality dimension of the {noun}: {dimension}
Definition: {definition}

People who judged each {noun} on {dimension} wrote these notes about what they saw:
{notes}

What did these people look for, or object to? Write {n_ask} that check such a point in
any {noun}, phrased so that "Yes" means the {noun} is better (do not quote the
notes or mention the people).
{written}{lead}"""

GROUNDED_WRITTEN = "Already written (check something else):\n{questions}\n"
GROUNDED_LEAD_ONE = "Question:"
GROUNDED_LEAD_LIST = "Numbered list of questions:"

# -- a rewording of a question from the outputs on which the judge and people disagreed (Align) --
# Our own wording of AutoRubric's rewrite from false-positive and false-negative exemplars. The
# examples come from dev items only; the rewording is then measured on held-out items.
REWORD_PROMPT_VERSION = "reword-v1"

REWORD_SYSTEM = (
    "You improve one evaluation question about a {noun}. The question is answered Yes or No "
    "by reading one {noun}; 'Yes' means the {noun} is better. Write the improved question only."
)

REWORD = """Question: "{question}"
Quality dimension: {dimension}

A grader answered this question about several texts, and people who read the same texts
disagreed with the grader.
{false_positives}{false_negatives}
Rewrite the question so that its wording makes the right answer clear for texts like these:
keep what it checks, make it more concrete and observable, ask one thing only, and keep "Yes"
meaning the {noun} is better. Do not mention these examples.
Improved question:"""

REWORD_FP = ("\nThe grader answered Yes, but people answered No, for these texts:\n"
             "{examples}\n")
REWORD_FN = ("\nThe grader answered No, but people answered Yes, for these texts:\n"
             "{examples}\n")
