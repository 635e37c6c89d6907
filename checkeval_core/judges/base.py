"""The judge protocol: request/result types and the interface every backend implements.

Two request kinds cover every method of the three papers:

* **binary** — a Yes/No question about an item. The user message is
  ``"".join(context) + question + suffix``; ``context`` is the shared prefix (instructions
  and the item's texts), split into parts from the most shared outwards (e.g. the source
  article shared by 16 summaries, then one summary) so a backend with prefix reuse can keep
  the KV cache of each part. The result carries the verdict (``yes``/``no``/``invalid``),
  p(Yes) = p(Yes)/(p(Yes)+p(No)) when log-probabilities exist, and accounting.
* **generate** — chat messages in, text out (augmentation, filtering, fact splitting,
  Likert scores).

Failures are data: a result with ``error`` set and verdict ``invalid``; an unparsable
answer is ``invalid``, never "no".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Verdict = Literal["yes", "no", "invalid"]
Mode = Literal["logprob", "text"]

DEFAULT_SUFFIX = "\nAnswer Yes or No."


@dataclass(frozen=True)
class BinaryRequest:
    """One Yes/No question. ``meta`` is caller bookkeeping and is not part of the cache key."""

    system: str
    context: tuple[str, ...]
    question: str
    suffix: str = DEFAULT_SUFFIX
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def prefix(self) -> str:
        return "".join(self.context)

    @property
    def user_text(self) -> str:
        return self.prefix + self.question + self.suffix

    def cache_payload(self) -> dict[str, Any]:
        return {"system": self.system, "context": list(self.context), "question": self.question,
                "suffix": self.suffix}


@dataclass
class BinaryResult:
    verdict: Verdict
    p_yes: float | None = None
    raw: str = ""
    mode: Mode = "text"
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    error: str = ""
    cached: bool = False
    # Share of probability mass on yes/no spellings (None when not measured); a logprob
    # backend whose candidates hold neither yes nor no sets it to 0.0 and p_yes to None.
    yes_no_mass: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GenerateRequest:
    """Chat messages in, text out. ``purpose``/``payload`` let the fake judge answer by rule;
    real backends ignore them (they are derived from the messages, so not in the cache key)."""

    messages: tuple[tuple[str, str], ...]  # (role, content) pairs
    temperature: float = 0.0
    max_tokens: int = 512
    json_mode: bool = False
    top_logprobs: int = 0  # >0: return the top log-probs of the first generated token
    purpose: str = field(default="", compare=False)
    payload: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # leading pieces of the user message that other requests share (e.g. the article, then
    # the judged text): a backend with prefix reuse evaluates them once. A hint only: it is
    # derived from the messages, so it is not part of the cache key.
    shared_parts: tuple[str, ...] = field(default=(), compare=False)
    # A GBNF grammar the output must follow (the embedded backend enforces it; others ignore
    # it and rely on the prompt), and a sampling seed (None = the backend's fixed seed). Both
    # enter the cache key only when set, so older cache entries stay valid.
    grammar: str = ""
    seed: int | None = None

    def cache_payload(self) -> dict[str, Any]:
        out = {"messages": [list(m) for m in self.messages], "temperature": self.temperature,
               "max_tokens": self.max_tokens, "json_mode": self.json_mode,
               "top_logprobs": self.top_logprobs}
        if self.grammar:
            out["grammar"] = self.grammar
        if self.seed is not None:
            out["seed"] = self.seed
        return out

    @staticmethod
    def chat(system: str, user: str, **kw: Any) -> GenerateRequest:
        msgs = ((("system", system),) if system else ()) + (("user", user),)
        return GenerateRequest(messages=msgs, **kw)


@dataclass
class GenerateResult:
    text: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    error: str = ""
    cached: bool = False
    # token -> logprob for the first generated token, when asked and available
    first_token_logprobs: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do; the wrapper (``cached.py``) reads ``batch_size`` and
    ``max_concurrency`` to decide how to send it requests, and ``local`` for prices."""

    logprobs: bool = False
    prefix_reuse: bool = False
    max_concurrency: int = 1  # single requests in flight at once (remote backends)
    local: bool = True  # runs on this machine: no per-token price
    model: str = ""
    batch_size: int = 0  # >1: the backend answers up to this many requests in one call
    # >1: a run sends this many items' requests in one call (a pool of servers: each item's
    # questions go to one server, several items are answered at once)
    items_at_once: int = 1
    # an in-process engine whose item questions can also be evaluated side by side as
    # parallel sequences over the shared prefix (what ``bench speed`` times)
    parallel_sequences: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class Judge(Protocol):
    """A backend: answers batches of requests, in order, one result per request.

    A backend may also define ``should_retry(exc) -> RetryDecision | None`` (which raised
    failures are transient; see ``retry.py``) and ``order(requests) -> list[int]`` (the order
    it prefers to be asked in); the wrapper in ``cached.py`` uses both.
    """

    spec: str
    capabilities: Capabilities

    def binary(self, requests: Sequence[BinaryRequest]) -> list[BinaryResult]: ...

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]: ...
