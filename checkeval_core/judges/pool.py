"""Several OpenAI-compatible servers of one model answering one run: a pool.

``openai-compat:http://a:8000/v1,http://b:8001/v1#model`` names a pool (``spec.py``: the base
URL field takes several comma-separated URLs; the CLI also reads them from a file,
``openai-compat:@servers.txt#model``, see :func:`expand_pool_file`). Each endpoint is an
:class:`~checkeval_core.judges.openai_compat.OpenAIJudge` of its own, with the key the
resolver approved for *its* address (``registry.get_judge`` resolves one per endpoint).

* **Work split by item.** A request goes to the endpoint its item is assigned to — the
  item is recognised by its shared prompt prefix (system + context parts; a generation's
  shared parts) — so every question of an item reaches one server and that server's prefix
  cache stays warm. A new item goes to the live endpoint with the fewest requests pending.
  The pool declares ``items_at_once`` = 1 × endpoints (``CHECKEVAL_POOL_ITEMS`` per endpoint),
  so a run sends several items in one call and every server has work; the wrapper (``cached.py``) keeps
  ``max_concurrency`` = the endpoints' sum in flight and caches each answer as it arrives.
  The pool's :meth:`PoolJudge.order` hands the wrapper the items in turn, so the requests
  in flight belong to different items, hence different servers (in request order, every
  worker would wait on the first item's server while the others idle).
* **An endpoint that dies** (connection refused, reset, timed out) is marked down for
  :data:`DOWN_SECONDS`; the request in flight is re-sent at once to another live endpoint,
  and its item's later questions follow it there. Answers already received are in the
  response cache and never asked again. Only when every endpoint is down does the failure
  reach the wrapper, which retries with backoff (a failure is data after the last attempt).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checkeval_core.judges.base import (
    BinaryRequest,
    BinaryResult,
    Capabilities,
    GenerateRequest,
    GenerateResult,
)
from checkeval_core.judges.openai_compat import OpenAIJudge
from checkeval_core.judges.retry import RetryDecision
from checkeval_core.judges.spec import JudgeSpecError, endpoint_spec, endpoint_urls, parse_spec

# openai is imported where a failure is classified (about 0.6 s to import): only a pool of
# remote judges pays it.

DOWN_SECONDS = 30.0  # an endpoint that failed to answer is left alone this long
# items a run sends at once per endpoint: 1 keeps a server with one prompt cache (llama.cpp's
# Python server) on one item at a time — two interleaved items re-read their texts at every
# question (measured: 1 vs 2 servers 1.97x with 1, 1.25x with 2); a GPU server batching many
# sequences with a shared prefix cache (vLLM) wants more (CHECKEVAL_POOL_ITEMS=8)
ITEMS_ENV = "CHECKEVAL_POOL_ITEMS"
_MAX_ASSIGNED = 10_000  # items remembered per pool (oldest forgotten first)


def openai_compat(parsed: Any, endpoint_keys: Sequence[Any] | None = None,
                  **params: Any) -> Any:
    """The ``openai-compat`` factory: one server's judge, or a pool for several URLs."""
    if len(endpoint_urls(parsed.spec)) > 1:
        return PoolJudge(parsed, endpoint_keys=endpoint_keys, **params)
    return OpenAIJudge(parsed, **params)


class PoolJudge:
    """Requests of one item to one endpoint; a dead endpoint's requests to the others."""

    def __init__(self, parsed: Any, endpoint_keys: Sequence[Any] | None = None,
                 **params: Any) -> None:
        self.spec = parsed.spec
        self.model = parsed.model
        self.params = params  # never holds a key (see CachedJudge)
        self.urls = endpoint_urls(self.spec)
        keys = list(endpoint_keys or [None] * len(self.urls))
        self.endpoints = []
        for url, key in zip(self.urls, keys):
            single = parse_spec(endpoint_spec(self.spec, url))
            kw = dict(params)
            if key is not None:
                kw.update(api_key=key.value, key_origins=key.origins)
            self.endpoints.append(OpenAIJudge(single, **kw))
        n = len(self.endpoints)
        self._lock = threading.Lock()
        self._pending = [0] * n
        self._down_until = [0.0] * n
        self._assigned: OrderedDict[Any, int] = OrderedDict()
        self.answered = [0] * n  # requests each endpoint answered (docs, tests)
        self.resent = 0  # requests re-sent after their endpoint failed
        self.capabilities = Capabilities(
            logprobs=True, prefix_reuse=False, local=False, model=self.model,
            max_concurrency=sum(e.capabilities.max_concurrency for e in self.endpoints),
            items_at_once=_items_per_endpoint() * n)

    # -- routing ---------------------------------------------------------------------------
    @staticmethod
    def _item_key(req: Any) -> Any:
        if isinstance(req, BinaryRequest):
            return (req.system, req.context)
        if req.shared_parts:
            return (req.messages[0][1] if req.messages else "", req.shared_parts)
        return req.messages  # no shared prefix: each request is its own item

    def _pick(self, key: Any, tried: set[int]) -> int | None:
        with self._lock:
            now = time.monotonic()
            live = [i for i in range(len(self.endpoints))
                    if i not in tried and self._down_until[i] <= now]
            if not live:
                return None
            i = self._assigned.get(key)
            if i is None or i not in live:
                i = min(live, key=lambda k: (self._pending[k], k))
                self._assigned[key] = i
                if len(self._assigned) > _MAX_ASSIGNED:
                    self._assigned.popitem(last=False)
            self._assigned.move_to_end(key)
            self._pending[i] += 1
            return i

    def _down(self, exc: BaseException) -> bool:
        """The endpoint is unreachable (refused, reset, timed out): try another."""
        import openai

        return isinstance(exc, openai.APIConnectionError)

    def _one(self, kind: str, req: Any) -> Any:
        tried: set[int] = set()
        last: BaseException | None = None
        while True:
            i = self._pick(self._item_key(req), tried)
            if i is None:
                if last is None:
                    raise ConnectionError(f"judge {self.spec}: every endpoint is down")
                raise last
            ep = self.endpoints[i]
            try:
                res = (ep.binary if kind == "binary" else ep.generate)([req])[0]
            except Exception as e:
                if not self._down(e):
                    raise
                with self._lock:
                    self._down_until[i] = time.monotonic() + DOWN_SECONDS
                    self.resent += 1
                tried.add(i)
                last = e
                continue
            finally:
                with self._lock:
                    self._pending[i] -= 1
            with self._lock:
                self.answered[i] += 1
            return res

    def order(self, requests: Sequence[BinaryRequest]) -> list[int]:
        """The requests' order for the wrapper's workers: the items taken in turn (first
        question of each item, then the second of each, …), so the requests in flight belong
        to different items — on different servers — instead of all waiting on the server of
        the first item (each item's questions keep their own order)."""
        by_item: OrderedDict[Any, list[int]] = OrderedDict()
        for i, r in enumerate(requests):
            by_item.setdefault(self._item_key(r), []).append(i)
        queues = list(by_item.values())
        out: list[int] = []
        for k in range(max((len(q) for q in queues), default=0)):
            out += [q[k] for q in queues if k < len(q)]
        return out

    # -- the judge protocol ------------------------------------------------------------------
    def binary(self, requests: Sequence[BinaryRequest]) -> list[BinaryResult]:
        return [self._one("binary", r) for r in requests]

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]:
        return [self._one("generate", r) for r in requests]

    def should_retry(self, exc: BaseException) -> RetryDecision | None:
        if isinstance(exc, ConnectionError) and "every endpoint is down" in str(exc):
            return RetryDecision(str(exc))
        return self.endpoints[0].should_retry(exc)


def _items_per_endpoint() -> int:
    raw = os.environ.get(ITEMS_ENV, "").strip()
    try:
        value = int(raw) if raw else 1
    except ValueError:
        raise ValueError(f"{ITEMS_ENV}={raw!r}: give a whole number of items (1 to 1000)") \
            from None
    if not 1 <= value <= 1000:
        raise ValueError(f"{ITEMS_ENV}={raw!r}: give a whole number of items (1 to 1000)")
    return value


def expand_pool_file(spec: str) -> str:
    """``openai-compat:@FILE#model`` → the spec with FILE's URLs (one per line; blank lines
    and ``#`` comments skipped). A bad line is refused naming the file and line (its text is
    not echoed). Other specs are returned unchanged. Read by the CLI only: a page never
    reads a file a client names."""
    name, _, rest = (spec or "").strip().partition(":")
    if not rest.startswith("@"):
        return spec
    path, sep, model = rest[1:].partition("#")
    p = Path(path).expanduser()
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise JudgeSpecError(f"judge pool file {path}: cannot be read ({type(e).__name__})") \
            from None
    urls = []
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not line.startswith(("http://", "https://")) or "," in line or " " in line:
            raise JudgeSpecError(f"judge pool file {path}, line {n}: not an http(s):// URL")
        urls.append(line)
    if not urls:
        raise JudgeSpecError(f"judge pool file {path}: no URL in it")
    return parse_spec(f"{name}:{','.join(urls)}{sep}{model}").spec
