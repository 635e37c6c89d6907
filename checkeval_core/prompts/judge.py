"""Binary judge prompts and the layout of an item's texts in a prompt.

The context parts are ordered from the most shared to the least shared — instructions,
then the source (article, dialogue history and fact, instruction), then the reference, then
the output being judged — and the question comes last, so that items of one group share the
longest possible prefix and a backend with prefix reuse evaluates it once.
"""

from __future__ import annotations

from typing import Any

from checkeval_core.judges.base import DEFAULT_SUFFIX, BinaryRequest

PROMPT_VERSION = "judge-v1"

BINARY_SYSTEM = (
    "You are a careful, strict evaluator of generated text. You read the material, then answer "
    "one yes/no question about the text under evaluation. Answer with a single word: Yes or No."
)

# What the judged text is called, per task kind.
OUTPUT_LABEL = {"summarization": "Summary", "dialogue": "Response", "instruction": "Response",
                "custom": "Output"}
QUESTION_HEADER = "\n\nQuestion:\n"

# Rewordings of the binary prompt (run option ``phrasing``): the same material, question and
# answer format with the instructions worded differently, so a run set can measure how much a
# verdict depends on the wording rather than on the text (``analysis/reliability.py``).
# Each is (system, header before the question, suffix after it); 0 is the default layout, so a
# ``phrasing=0`` run asks exactly the default prompt. The header ends the shared prefix.
BINARY_PHRASINGS: tuple[tuple[str, str, str], ...] = (
    (BINARY_SYSTEM, QUESTION_HEADER, DEFAULT_SUFFIX),
    ("You are an impartial expert judge of written text. Study the material, then decide "
     "whether the statement asked about holds for the text under evaluation. Reply with one "
     "word: Yes or No.", "\n\nQuestion about the text above:\n", "\nReply Yes or No."),
    ("You assess the quality of text. Read everything below and answer the yes/no question "
     "about the text being assessed with exactly one word, Yes or No.",
     "\n\nAnswer this question:\n", "\nYour answer (Yes or No):"),
    ("You check texts against a checklist. Given the material and a text, answer whether the "
     "checklist item is satisfied by the text. Answer only Yes or No.",
     "\n\nChecklist item:\n", "\nIs it satisfied? Answer Yes or No."),
)


def binary_phrasing(phrasing: int = 0) -> tuple[str, str, str]:
    """(system, question header, suffix) of a phrasing; a ValueError names the valid range."""
    if isinstance(phrasing, bool) or not isinstance(phrasing, int) or \
            not 0 <= phrasing < len(BINARY_PHRASINGS):
        raise ValueError(f"phrasing={phrasing!r}: use an integer from 0 to "
                         f"{len(BINARY_PHRASINGS) - 1}")
    return BINARY_PHRASINGS[phrasing]


def source_parts(item: dict[str, Any], kind: str, include_source: bool = True,
                 include_reference: bool = False) -> list[str]:
    """The item's material (everything but the judged output), one part per shared level."""
    parts: list[str] = []
    if include_source:
        if kind == "summarization" and item.get("source"):
            parts.append(f"Article:\n{item['source']}\n\n")
        elif kind == "dialogue":
            block = ""
            if item.get("fact"):
                block += f"Fact the response may use:\n{item['fact']}\n\n"
            if item.get("context"):
                block += f"Conversation so far:\n{item['context'].rstrip()}\n\n"
            if block:
                parts.append(block)
        else:
            block = ""
            for field, label in (("source", "Input"), ("context", "Context"), ("fact", "Fact")):
                if item.get(field):
                    block += f"{label}:\n{item[field]}\n\n"
            if block:
                parts.append(block)
    if include_reference and item.get("reference"):
        parts.append(f"Reference:\n{item['reference']}\n\n")
    return parts


def binary_request_for_item(item: dict[str, Any], question: str, kind: str,
                            definition: str | None = None, include_source: bool = True,
                            include_reference: bool = False, dimension: str | None = None,
                            meta: dict[str, Any] | None = None,
                            phrasing: int = 0) -> BinaryRequest:
    """A Yes/No request about ``item``'s output, laid out for prefix reuse; ``phrasing``
    picks the instructions' wording (:data:`BINARY_PHRASINGS`)."""
    system, header, suffix = binary_phrasing(phrasing)
    label = OUTPUT_LABEL.get(kind, "Output")
    parts = source_parts(item, kind, include_source, include_reference)
    tail = f"{label} to evaluate:\n{item.get('output', '')}"
    if definition:
        tail += f"\n\nQuality dimension: {dimension or ''} — {definition}"
    parts.append(tail + header)
    return BinaryRequest(system=system, context=tuple(parts), question=question,
                         suffix=suffix, meta=dict(meta or {}))
