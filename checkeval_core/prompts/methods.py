"""Prompts for the evaluation methods: CheckEval's grouped questions, SEAL's fact splitting,
unit verification and sub-dimension weights, and the G-Eval Likert baseline (our wording)."""

PROMPT_VERSION = "methods-v1"

GROUPED_SYSTEM = (
    "You are a careful, strict evaluator. Read the material, then answer every numbered yes/no "
    "question about the text under evaluation. Reply with one line per question in the form "
    "'Q1: Yes' or 'Q1: No', in order, and nothing else."
)

# Rewordings of GROUPED_SYSTEM (run option ``phrasing``, see prompts/judge.py); every one keeps
# the numbered 'Q1: Yes' answer format the parser reads. 0 is the default.
GROUPED_PHRASINGS: tuple[str, ...] = (
    GROUPED_SYSTEM,
    "You are an impartial expert judge of written text. Study the material, then decide for "
    "each numbered yes/no question whether it holds for the text under evaluation. Write one "
    "line per question, 'Q1: Yes' or 'Q1: No', in the order given, and nothing else.",
    "You assess the quality of text. Read everything below and answer each numbered yes/no "
    "question about the text being assessed. Output exactly one line per question like "
    "'Q1: Yes' or 'Q1: No', in order, with no other text.",
    "You check texts against a checklist. For each numbered checklist question, say whether "
    "the text satisfies it, one line each in the form 'Q1: Yes' or 'Q1: No', in order, and "
    "nothing else.",
)

GROUPED_USER = """{material}{label} to evaluate:
{output}

Quality dimension: {dimension} — {definition}
Aspect: {sub_dimension}

Questions:
{questions}"""

FACTS_SYSTEM = "You split text into short, self-contained factual statements. JSON only."
FACTS_USER = """Split the following text into minimal, independently verifiable factual claims
(one fact each, with names instead of pronouns). Return {{"facts": ["...", "..."]}}.

Text:
{text}"""

WEIGHTS_SYSTEM = "You weigh evaluation criteria. JSON only."
WEIGHTS_USER = """Quality dimension: {dimension} — {definition}
Criteria:
{criteria}

How much should each criterion count towards the dimension? Return {{"weights": {{"<criterion>":
<non-negative number>, ...}}}} using the criterion names exactly."""

UNIT_QUESTION = ('Consider only this {unit_kind} of the {label_lower}:\n"{unit}"\n'
                 "Does it satisfy the criterion \"{sub_dimension}\"{description}?")

LIKERT_SYSTEM = "You rate generated text on a 1 to 5 scale. Reply with the number only."
LIKERT_USER = """{material}{label} to evaluate:
{output}

Rate the {label_lower} on {dimension} — {definition}
Use 1 (very poor) to 5 (excellent). Score (1-5):"""
