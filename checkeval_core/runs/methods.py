"""The four methods as request planners and answer parsers.

For one item, a method's planner (named by its entry in :mod:`checkeval_core.runs.registry`)
returns :class:`Work` objects: a judge request plus the answers it produces (``targets``:
question id, unit key, dimension). The job runner skips work whose answers are already
stored, sends the rest to the judge, and stores the parsed answers.

A planner is called as ``plan(item, ctx)``; ``ctx`` holds the task ``kind``, the frozen
checklist ``content``, the run's ``params``, the dimensions' ``definitions`` and, for
planners that keep state in the database (SEAL's units), ``db``, ``run`` and ``judge``. A
method may also name a ``prepare(ctx)`` step that runs once per run before its items.

* ``checkeval`` — questions grouped by sub-dimension, several per prompt (generate); the
  numbered answer lines are parsed per question (:func:`parse_grouped`).
* ``rocketeval`` — one binary request per question, the question last (prefix reuse); with
  a per-query checklist each item is asked its query's questions.
* ``seal`` — units per dimension (sentences, adjacent sentence pairs, facts, or the whole
  response for dialogue) × sub-dimensions, one binary verification each.
* ``geval`` — a 1–5 Likert score per dimension (generate), probability-weighted when the
  backend gives first-token log-probabilities.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pysbd

from checkeval_core.checklists.instance import questions_of_item
from checkeval_core.jsontext import find_json
from checkeval_core.judges.base import BinaryRequest, GenerateRequest
from checkeval_core.judges.fake import fake_p_yes, register_fake_generator, stable_unit
from checkeval_core.judges.parsing import parse_verdict
from checkeval_core.prompts import methods as P
from checkeval_core.prompts.judge import (
    BINARY_SYSTEM,
    OUTPUT_LABEL,
    QUESTION_HEADER,
    binary_request_for_item,
    source_parts,
)
from checkeval_core.runs.score_math import normalize_weights
from checkeval_core.store import dumps, transaction


@dataclass
class Work:
    item_pk: int
    kind: str  # "binary" | "generate"
    request: Any
    targets: list[tuple[int, str, str]]  # (question_id, unit, dimension)
    parse: Callable[[Any], list[dict[str, Any]]] = field(repr=False, default=None)


# -- parsing -----------------------------------------------------------------------------------
_NUMBERED = re.compile(r"^\s*\**\s*(?:Q(?:uestion)?\s*)?(\d{1,3})\s*\**\s*[:.)\-]\s*(.*)$",
                       re.IGNORECASE)


def parse_grouped(text: str, n: int) -> list[str]:
    """Verdicts for ``n`` numbered questions from a grouped answer.

    Lines like ``Q3: Yes`` / ``3. No`` / ``**Q2** - yes`` are matched by number (so misordered
    lines are fine; a repeated number: the last line wins; numbers outside 1..n are ignored).
    A question without a parsable line is ``invalid``. Only when no line is numbered and
    exactly ``n`` lines carry a yes/no are they taken in order.
    """
    out = ["invalid"] * n
    numbered = False
    for line in (text or "").splitlines():
        m = _NUMBERED.match(line)
        if m:
            numbered = True
            k = int(m.group(1))
            if 1 <= k <= n:
                out[k - 1] = parse_verdict(m.group(2))
    if not numbered:
        verdicts = [parse_verdict(line) for line in (text or "").splitlines() if line.strip()]
        verdicts = [v for v in verdicts if v != "invalid"]
        if len(verdicts) == n:
            return verdicts
    return out


def parse_likert(text: str) -> float | None:
    """The first integer 1–5 in the answer (``"Score: 4"`` → 4.0), else None."""
    m = re.search(r"(?<![\d.])([1-5])(?![\d])", text or "")
    return float(m.group(1)) if m else None


def likert_from_logprobs(top: dict[str, float] | None) -> float | None:
    """Σ k·p(k) / Σ p(k) over the tokens "1".."5" (G-Eval's probability-weighted score)."""
    if not top:
        return None
    probs: dict[int, float] = {}
    for tok, lp in top.items():
        t = tok.strip()
        if t in ("1", "2", "3", "4", "5"):
            probs[int(t)] = probs.get(int(t), 0.0) + math.exp(lp)
    total = sum(probs.values())
    return sum(k * p for k, p in probs.items()) / total if total > 0 else None


def parse_json_list(text: str, key: str) -> list[str] | None:
    data = find_json(text)
    if isinstance(data, dict):
        data = data.get(key)
    if not isinstance(data, list):
        return None
    return [str(x).strip() for x in data if str(x).strip()]


def parse_weights(text: str) -> dict[str, Any]:
    data = find_json(text)
    w = data.get("weights", data) if isinstance(data, dict) else {}
    return w if isinstance(w, dict) else {}


# -- units (SEAL) ------------------------------------------------------------------------------
def sentences(text: str) -> list[str]:
    """Sentences by pysbd (English rules), whitespace-normalised, empty ones dropped."""
    seg = pysbd.Segmenter(language="en", clean=False)
    return [" ".join(s.split()) for s in seg.segment(text or "") if s.strip()]


def sentence_pairs(text: str) -> list[str]:
    s = sentences(text)
    if len(s) < 2:
        return s
    return [f"{a} {b}" for a, b in zip(s, s[1:])]


def unit_kind(dimension: str, task_kind: str, override: dict[str, str] | None = None) -> str:
    """SEAL granularity: sentence (fluency), pair (coherence), fact (consistency, relevance),
    whole (dialogue, or anything else)."""
    if override and dimension in override:
        return override[dimension]
    if task_kind == "dialogue":
        return "whole"
    d = dimension.lower()
    if "fluen" in d:
        return "sentence"
    if "coheren" in d:
        return "pair"
    if "consisten" in d or "relevan" in d or "faithful" in d:
        return "fact"
    return "whole"


# -- planning ---------------------------------------------------------------------------------
def _material(item: dict[str, Any], kind: str) -> str:
    return "".join(source_parts(item, kind, include_source=True))


def _shared(item: dict[str, Any], kind: str, label: str) -> tuple[str, ...]:
    """The leading parts of GROUPED_USER / LIKERT_USER shared across requests: the material
    (shared by a document's items), then the judged text (shared by an item's prompts)."""
    return (_material(item, kind), f"{label} to evaluate:\n{item['output']}\n\n")


def _qs_for_item(content: dict[str, Any], item: dict[str, Any] | int) -> list[dict[str, Any]]:
    """The questions that apply to an item: global ones, its own (legacy per-item lists) and
    its query's (per-query lists: ``group_id`` = the item's group, RocketEval's setting)."""
    if isinstance(item, int):  # an item's internal id only: no per-query questions
        item = {"id": item}
    return questions_of_item(content["questions"], item)


def plan_rocketeval(item: dict[str, Any], ctx: dict[str, Any]) -> list[Work]:
    """One binary request per question of the item (global, its own or its query's). The
    prompt holds the query first, then the answer, then the question: the items of a query
    (asked together, see ``jobs.execute_run``) share the query's prefix, so a prefix-reusing
    judge evaluates a query once for all the models' answers to it."""
    out = []
    defs = ctx["definitions"]
    for q in _qs_for_item(ctx["content"], item):
        req = binary_request_for_item(
            item, q["text"], ctx["kind"], definition=defs.get(q["dimension"]) if
            ctx["params"].get("include_definition") else None, dimension=q["dimension"],
            include_reference=bool(ctx["params"].get("include_reference")),
            phrasing=ctx["params"].get("phrasing", 0))
        out.append(Work(item["id"], "binary", req, [(q["id"], "", q["dimension"])],
                        _binary_parser(q["id"], "", q["dimension"])))
    return out


def _binary_parser(qid: int, unit: str, dim: str) -> Callable[[Any], list[dict[str, Any]]]:
    def parse(res: Any) -> list[dict[str, Any]]:
        return [{"question_id": qid, "unit": unit, "dimension": dim, "verdict": res.verdict,
                 "p_yes": res.p_yes, "value": None, "mode": res.mode, "raw": res.raw,
                 "error": res.error}]
    return parse


def plan_checkeval(item: dict[str, Any], ctx: dict[str, Any]) -> list[Work]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for q in _qs_for_item(ctx["content"], item):
        groups.setdefault((q["dimension"], q["sub_dimension"]), []).append(q)
    label = OUTPUT_LABEL.get(ctx["kind"], "Output")
    out = []
    for (dim, sub), qs in groups.items():
        user = P.GROUPED_USER.format(
            material=_material(item, ctx["kind"]), label=label, output=item["output"],
            dimension=dim, definition=ctx["definitions"].get(dim, ""), sub_dimension=sub,
            questions="\n".join(f"Q{i + 1}: {q['text']}" for i, q in enumerate(qs)))
        system = P.GROUPED_PHRASINGS[ctx["params"].get("phrasing", 0)]
        req = GenerateRequest.chat(system, user, max_tokens=8 * len(qs) + 16,
                                   shared_parts=_shared(item, ctx["kind"], label),
                                   purpose="grouped_answers",
                                   payload={"questions": [q["text"] for q in qs],
                                            "text": _material(item, ctx["kind"]) +
                                            item["output"]})

        def parse(res: Any, qs: list[dict[str, Any]] = qs, dim: str = dim) -> list[dict]:
            verdicts = parse_grouped(res.text, len(qs)) if not res.error else \
                ["invalid"] * len(qs)
            return [{"question_id": q["id"], "unit": "", "dimension": dim, "verdict": v,
                     "p_yes": None, "value": None, "mode": "text", "raw": res.text,
                     "error": res.error} for q, v in zip(qs, verdicts)]

        out.append(Work(item["id"], "generate", req, [(q["id"], "", dim) for q in qs], parse))
    return out


def plan_geval(item: dict[str, Any], ctx: dict[str, Any]) -> list[Work]:
    label = OUTPUT_LABEL.get(ctx["kind"], "Output")
    out = []
    for d in ctx["content"]["dimensions"]:
        dim = d["name"]
        if not any(q["dimension"] == dim for q in ctx["content"]["questions"]):
            continue
        user = P.LIKERT_USER.format(material=_material(item, ctx["kind"]), label=label,
                                    label_lower=label.lower(), output=item["output"],
                                    dimension=dim, definition=d.get("definition", ""))
        req = GenerateRequest.chat(P.LIKERT_SYSTEM, user, max_tokens=4, top_logprobs=5,
                                   shared_parts=_shared(item, ctx["kind"], label),
                                   purpose="likert", payload={"text": item["output"],
                                                              "dimension": dim})

        def parse(res: Any, dim: str = dim) -> list[dict[str, Any]]:
            score = parse_likert(res.text) if not res.error else None
            prob = likert_from_logprobs(res.first_token_logprobs)
            return [{"question_id": 0, "unit": dim, "dimension": dim,
                     "verdict": "invalid" if score is None else "yes", "p_yes": prob,
                     "value": score, "mode": "logprob" if prob is not None else "text",
                     "raw": res.text, "error": res.error}]

        out.append(Work(item["id"], "generate", req, [(0, dim, dim)], parse))
    return out


def seal_units(item: dict[str, Any], ctx: dict[str, Any], dim: str,
               facts: Callable[[str], list[str]]) -> tuple[str, list[str]]:
    kind = unit_kind(dim, ctx["kind"], ctx["params"].get("seal_units"))
    if kind == "sentence":
        return kind, sentences(item["output"]) or [item["output"]]
    if kind == "pair":
        return kind, sentence_pairs(item["output"]) or [item["output"]]
    if kind == "fact":
        return kind, facts(item["output"]) or sentences(item["output"]) or [item["output"]]
    return "whole", [item["output"]]


def plan_seal(item: dict[str, Any], ctx: dict[str, Any],
              units_by_dim: dict[str, tuple[str, list[str]]]) -> list[Work]:
    label = OUTPUT_LABEL.get(ctx["kind"], "Output")
    parts = source_parts(item, ctx["kind"], include_source=True)
    out = []
    for d in ctx["content"]["dimensions"]:
        dim = d["name"]
        if dim not in units_by_dim:
            continue
        kind, units = units_by_dim[dim]
        for ui, unit in enumerate(units):
            for s in d["sub_dimensions"]:
                desc = f" ({s['description']})" if s.get("description") else ""
                q = P.UNIT_QUESTION.format(unit_kind={"pair": "pair of adjacent sentences",
                                                      "fact": "fact"}.get(kind, kind),
                                           label_lower=label.lower(), unit=unit,
                                           sub_dimension=s["name"], description=desc)
                tail = f"{label} to evaluate:\n{item['output']}{QUESTION_HEADER}"
                req = BinaryRequest(system=BINARY_SYSTEM, context=(*parts, tail), question=q)
                key = f"{dim}|{s['name']}|{ui}"
                out.append(Work(item["id"], "binary", req, [(0, key, dim)],
                                _binary_parser(0, key, dim)))
    return out


def prepare_seal(ctx: dict[str, Any]) -> None:
    """Ask once per run for each dimension's sub-dimension weights (normalised; uniform on
    garbage) and keep them in the run's params."""
    db, run, judge = ctx["db"], ctx["run"], ctx["judge"]
    if "seal_weights" in run["params"]:
        return
    dims = [d for d in ctx["content"]["dimensions"] if d["sub_dimensions"]]
    reqs = [weights_request(d["name"], d.get("definition", ""), d["sub_dimensions"])
            for d in dims]
    weights = {}
    if run["params"].get("seal_uniform_weights"):
        results = [None] * len(dims)
    else:
        results = judge.generate(reqs) if reqs else []
    for d, res in zip(dims, results):
        names = [s["name"] for s in d["sub_dimensions"]]
        raw = parse_weights(res.text) if res is not None and not res.error else {}
        weights[d["name"]] = normalize_weights(raw, names)
    run["params"]["seal_weights"] = weights
    db.execute("UPDATE run SET params = ? WHERE id = ?", [dumps(run["params"]), run["id"]])


def seal_item_units(item: dict[str, Any], ctx: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    """Each dimension's units of an item: stored ones first (a resumed run verifies the same
    units), else split now (facts asked of the judge) and stored in one transaction."""
    db, run, judge = ctx["db"], ctx["run"], ctx["judge"]
    stored: dict[str, list[tuple[int, str, str]]] = {}
    for r in db.execute("SELECT dimension, position, kind, text FROM seal_unit WHERE run_id = ? "
                        "AND item_id = ? ORDER BY position", [run["id"], item["id"]]):
        stored.setdefault(r[0], []).append((r[1], r[2], r[3]))
    out: dict[str, tuple[str, list[str]]] = {}
    facts_cache: dict[str, list[str]] = {}

    def facts(text: str) -> list[str]:
        if text not in facts_cache:
            res = judge.generate([facts_request(text)])[0]
            facts_cache[text] = (parse_json_list(res.text, "facts") or []) if not res.error \
                else []
        return facts_cache[text]

    dims = [d["name"] for d in ctx["content"]["dimensions"] if d["sub_dimensions"] and
            any(q["dimension"] == d["name"] for q in ctx["content"]["questions"])]
    for dim in dims:
        if dim in stored:
            out[dim] = (stored[dim][0][1], [t for _, _, t in stored[dim]])
            continue
        kind, units = seal_units(item, ctx, dim, facts)
        with transaction(db):
            for i, u in enumerate(units):
                db.execute("INSERT OR IGNORE INTO seal_unit (run_id, item_id, dimension, unit, "
                           "kind, text, position) VALUES (?,?,?,?,?,?,?)",
                           [run["id"], item["id"], dim, str(i), kind, u, i])
        out[dim] = (kind, units)
    return out


def plan_seal_item(item: dict[str, Any], ctx: dict[str, Any]) -> list[Work]:
    """SEAL's planner: the item's units (stored or split now), then :func:`plan_seal`."""
    return plan_seal(item, ctx, seal_item_units(item, ctx))


def facts_request(text: str) -> GenerateRequest:
    return GenerateRequest.chat(P.FACTS_SYSTEM, P.FACTS_USER.format(text=text), max_tokens=400,
                                json_mode=True, purpose="facts", payload={"text": text})


def weights_request(dim: str, definition: str, subs: list[dict[str, Any]]) -> GenerateRequest:
    crit = "\n".join(f"- {s['name']}" + (f": {s['description']}" if s.get("description") else "")
                     for s in subs)
    return GenerateRequest.chat(P.WEIGHTS_SYSTEM, P.WEIGHTS_USER.format(
        dimension=dim, definition=definition, criteria=crit), max_tokens=200, json_mode=True,
        purpose="weights", payload={"names": [s["name"] for s in subs]})


# -- the fake judge's deterministic answers ------------------------------------------------------
def _fake_grouped(req: GenerateRequest) -> str:
    text = req.payload.get("text", "")
    return "\n".join(f"Q{i + 1}: {'Yes' if fake_p_yes(q, text) >= 0.5 else 'No'}"
                     for i, q in enumerate(req.payload.get("questions", [])))


def _fake_likert(req: GenerateRequest) -> str:
    return str(1 + int(stable_unit(req.payload.get("dimension", ""),
                                   req.payload.get("text", "")) * 5))


def _fake_facts(req: GenerateRequest) -> str:
    return json.dumps({"facts": sentences(req.payload.get("text", ""))})


def _fake_weights(req: GenerateRequest) -> str:
    names = req.payload.get("names", [])
    return json.dumps({"weights": {n: i + 1 for i, n in enumerate(names)}})


register_fake_generator("grouped_answers", _fake_grouped)
register_fake_generator("likert", _fake_likert)
register_fake_generator("facts", _fake_facts)
register_fake_generator("weights", _fake_weights)
