"""OpenAI batch files: a judge request as a batch input line, a result line read back.

Input (``.jsonl``, one request a line; OpenAI's Batch API and vLLM's ``run_batch`` read it)::

    {"custom_id": "<the request's deterministic id>", "method": "POST",
     "url": "/v1/chat/completions",
     "body": {"model": "<the judge's model>", "messages": [...], "max_tokens": 1,
              "temperature": 0, "seed": 1234, "logprobs": true, "top_logprobs": 20}}

The body holds exactly the arguments the online backend sends (``openai_compat.py``:
:func:`binary_arguments` / :func:`generate_arguments`).

Output (OpenAI's Batch API and vLLM's ``run_batch`` write the same)::

    {"id": "batch_req_…", "custom_id": "…",
     "response": {"status_code": 200, "request_id": "…", "body": {<a chat.completion>}},
     "error": null}

A result is read with the online backend's own reader (:func:`binary_result` /
:func:`generate_result`) over the same ``ChatCompletion`` object the ``openai`` client builds
from an HTTP answer, so a batch answer gets the verdict and p(Yes) an online one would.

Parsing is bounded and linear: the file's size (``CHECKEVAL_MAX_IMPORT_MB``), its line count
(``CHECKEVAL_MAX_IMPORT_ROWS``), each line's length (:data:`MAX_LINE`) and JSON nesting are
capped, and each line is parsed once. A line that is not a result object is refused naming the
file and line (:class:`BatchFileError`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from checkeval_core.judges.base import BinaryResult, GenerateResult
from checkeval_core.judges.openai_compat import (
    binary_arguments,
    binary_result,
    generate_arguments,
    generate_result,
)
from checkeval_core.safeio import InputError, check_count, decode_text, load_json_text

# openai (its ChatCompletion type) is imported where a result is read: about 0.6 s, which
# writing batch files and the CLI's start do not pay.

URL = "/v1/chat/completions"
MAX_LINE = 8 * 1024 * 1024  # characters: a chat completion with 20 log-probs is ~4 KB
MAX_REQUESTS_PER_FILE = 50_000  # OpenAI's limit of requests in one batch
_DATED = re.compile(r"\d{4}-\d{2}-\d{2}")


class BatchFileError(ValueError):
    """A batch result file that cannot be stored; the message names the file and line."""


def request_line(custom_id: str, model: str, kind: str, request: Any) -> str:
    """One input line for ``request`` (``kind`` ``binary`` or ``generate``)."""
    args = binary_arguments(request) if kind == "binary" else generate_arguments(request)
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": URL,
                       "body": {"model": model, **args}}, ensure_ascii=False)


@dataclass
class ResultLine:
    """One line of a result file: its id, the model that answered, and the chat completion
    (``body``) or why there is none (``error``: the request failed at the provider)."""

    line: int
    custom_id: str
    model: str | None
    body: dict[str, Any] | None
    error: str = ""


def _field(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise BatchFileError(f"{where}: no {key!r} field (not an OpenAI batch result line)")
    return obj[key]


def parse_result_line(text: str, name: str, lineno: int) -> ResultLine:
    """Read one result line; :class:`BatchFileError` naming ``name`` and ``lineno``."""
    where = f"{name}: line {lineno}"
    if len(text) > MAX_LINE:
        raise BatchFileError(f"{where}: longer than {MAX_LINE:,} characters (the limit)")
    try:
        obj = load_json_text(text, name, where=f"line {lineno}")
    except InputError as e:
        raise BatchFileError(str(e).replace(f"{name}, line", f"{name}: line", 1)) from None
    cid = _field(obj, "custom_id", where)
    if not isinstance(cid, str) or not cid:
        raise BatchFileError(f"{where}: 'custom_id' must be a non-empty string")
    err = obj.get("error")
    resp = obj.get("response")
    if err:
        msg = err.get("message", "") if isinstance(err, dict) else str(err)
        return ResultLine(lineno, cid, None, None, f"the provider's error: {str(msg)[:300]}")
    if not isinstance(resp, dict):
        raise BatchFileError(f"{where}: neither a 'response' object nor an 'error'")
    status = resp.get("status_code")
    body = resp.get("body")
    if not isinstance(status, int) or isinstance(status, bool):
        raise BatchFileError(f"{where}: 'response.status_code' must be an integer")
    if status != 200:
        msg = body.get("error", body) if isinstance(body, dict) else body
        if isinstance(msg, dict):
            msg = msg.get("message", msg)
        return ResultLine(lineno, cid, None, None, f"HTTP {status}: {str(msg)[:300]}")
    if not isinstance(body, dict):
        raise BatchFileError(f"{where}: 'response.body' must be a chat completion object")
    model = body.get("model")
    if not isinstance(model, str):
        raise BatchFileError(f"{where}: 'response.body.model' must be a string")
    if not isinstance(body.get("choices"), list):
        raise BatchFileError(f"{where}: 'response.body.choices' must be a list")
    return ResultLine(lineno, cid, model, body)


def result_lines(data: bytes, name: str) -> Iterator[ResultLine]:
    """Every non-blank line of a result file, in order (see :func:`parse_result_line`)."""
    try:
        text = decode_text(data, name)
        check_count(text.count("\n") + 1, name)
    except InputError as e:
        raise BatchFileError(str(e)) from None
    for i, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield parse_result_line(line, name, i)


def shard_lines(lines: list[str], shards: int) -> list[list[str]]:
    """Contiguous slices of about equal size (an item's requests stay together): at least
    ``shards`` (fewer only when there are fewer lines), each at most :data:`MAX_REQUESTS_PER_FILE` lines; none without lines."""
    if not lines:
        return []
    n = min(len(lines), max(shards, math.ceil(len(lines) / MAX_REQUESTS_PER_FILE)))
    q, r = divmod(len(lines), n)
    bounds = [k * q + min(k, r) for k in range(n + 1)]
    return [lines[bounds[k]:bounds[k + 1]] for k in range(n)]


def same_model(answered: str, model: str) -> bool:
    """Whether a result's model is the judge's: the same name, or the provider's dated
    snapshot of it (OpenAI answers ``gpt-4o-mini`` as ``gpt-4o-mini-2024-07-18``)."""
    if answered == model:
        return True
    return answered.startswith(model + "-") and \
        _DATED.fullmatch(answered[len(model) + 1:]) is not None


def result_of(kind: str, body: dict[str, Any]) -> BinaryResult | GenerateResult:
    """The judge's result for a chat completion ``body``, read as the online backend reads
    an HTTP answer (``latency_ms`` 0: a batch answer has none). A completion without an
    answer gives a result with ``error`` set."""
    from openai.types.chat import ChatCompletion  # slow import, see the module top

    # construct() builds the nested objects without validating them, as the openai client
    # does with an HTTP response: the same attribute access then reads them
    resp = ChatCompletion.construct(**body)
    if kind == "binary":
        return binary_result(resp, 0.0)
    try:
        return generate_result(resp, 0.0)
    except ValueError as e:
        return GenerateResult(error=f"ValueError: {e}")


__all__ = ["BatchFileError", "ResultLine", "request_line", "result_lines", "result_of",
           "same_model", "shard_lines", "URL", "MAX_REQUESTS_PER_FILE"]


def chat_completion(model: str, text: str, p_yes: float | None = None, tokens_in: int = 0,
                    tokens_out: int = 1, cid: str = "chatcmpl-1") -> dict[str, Any]:
    """A ``chat.completion`` as an OpenAI-compatible server writes it (the body of a result
    line); with ``p_yes``, the first token's top log-probabilities hold Yes and No. Written
    by the batch benchmark's stand-in server and the tests, read back by
    :func:`parse_result_line`."""
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": text},
                              "finish_reason": "stop", "logprobs": None}
    if p_yes is not None:
        top = [{"token": t, "logprob": math.log(p), "bytes": None}
               for t, p in (("Yes", p_yes), ("No", 1 - p_yes)) if p > 0]
        choice["logprobs"] = {"content": [{"token": text, "logprob": top[0]["logprob"],
                                           "bytes": None, "top_logprobs": top}]}
    return {"id": cid, "object": "chat.completion", "created": 1, "model": model,
            "choices": [choice], "usage": {"prompt_tokens": tokens_in,
                                           "completion_tokens": tokens_out,
                                           "total_tokens": tokens_in + tokens_out}}
