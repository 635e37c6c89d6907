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
from checkeval_core.judges.spec import (
    MAX_POOL_ENDPOINTS,
    JudgeSpecError,
    endpoint_spec,
    parse_spec,
)

# openai is imported where a failure is classified (about 0.6 s to import): only a pool of
# remote judges pays it.

DOWN_SECONDS = 30.0  # an endpoint that failed to answer is left alone this long
# items a run sends at once per endpoint: 1 keeps a server with one prompt cache (llama.cpp's
# Python server) on one item at a time — two interleaved items re-read their texts at every
# question (measured: 1 vs 2 servers 1.97x with 1, 1.25x with 2); a GPU server batching many
# sequences with a shared prefix cache (vLLM) wants more (CHECKEVAL_POOL_ITEMS=8)
ITEMS_ENV = "CHECKEVAL_POOL_ITEMS"
_MAX_ASSIGNED = 10_000  # items remembered per pool (oldest forgotten first)
MAX_POOL_FILE_BYTES = 1 << 20  # a pool file's size: 100 URLs with comments fit many times


def openai_compat(parsed: Any, endpoint_keys: Sequence[Any] | None = None,
                  **params: Any) -> Any:
    """The ``openai-compat`` factory: one server's judge, or a pool for several URLs."""
    if parsed.is_pool:
        return PoolJudge(parsed, endpoint_keys=endpoint_keys, **params)
    return OpenAIJudge(parsed, **params)


class PoolJudge:
    """Requests of one item to one endpoint; a dead endpoint's requests to the others."""

    def __init__(self, parsed: Any, endpoint_keys: Sequence[Any] | None = None,
                 allowed_origins: Any = None, **params: Any) -> None:
        self.spec = parsed.spec
        self.model = parsed.model
        self.params = params  # never holds a key (see CachedJudge)
        self.urls = parsed.urls
        keys = list(endpoint_keys or [None] * len(self.urls))
        self.endpoints = _Endpoints(self.spec, self.urls, keys, params, allowed_origins)
        n = len(self.endpoints)
        self._lock = threading.Lock()
        self._pending = [0] * n
        self._down_until = [0.0] * n
        self._assigned: OrderedDict[Any, int] = OrderedDict()
        self.answered = [0] * n  # requests each endpoint answered (docs, tests)
        self.resent = 0  # requests re-sent after their endpoint failed
        self.capabilities = Capabilities(
            logprobs=True, prefix_reuse=False, local=False, model=self.model,
            max_concurrency=_concurrency(params) * n,
            items_at_once=items_per_endpoint() * n)

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


class _Endpoints:
    """The pool's endpoints, each an :class:`OpenAIJudge` built when it is first asked (a
    client costs ~1 MB and ~27 ms: a pool that is only parsed, estimated or partly used
    builds none or few)."""

    def __init__(self, spec: str, urls: list[str], keys: list[Any], params: dict[str, Any],
                 allowed_origins: Any) -> None:
        self._spec, self._urls, self._keys = spec, urls, keys
        self._params, self._allowed = params, allowed_origins
        self._built: dict[int, OpenAIJudge] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._urls)

    def __getitem__(self, i: int) -> OpenAIJudge:
        with self._lock:
            if i not in self._built:
                kw = dict(self._params)
                key = self._keys[i] if i < len(self._keys) else None
                if key is not None:
                    kw.update(api_key=key.value, key_origins=key.origins)
                if self._allowed is not None:
                    kw["allowed_origins"] = self._allowed
                single = parse_spec(endpoint_spec(self._spec, self._urls[i]))
                self._built[i] = OpenAIJudge(single, **kw)
            return self._built[i]

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def built(self) -> int:
        """How many endpoints' clients exist (tests, the memory benchmark)."""
        return len(self._built)


def _concurrency(params: dict[str, Any]) -> int:
    """Requests in flight per endpoint, as :class:`OpenAIJudge` takes it."""
    return max(1, int(params.get("concurrency") or os.environ.get("CHECKEVAL_CONCURRENCY", "8")))


def items_per_endpoint() -> int:
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
        if not p.exists():
            raise JudgeSpecError(f"judge pool file {path}: cannot be read (no such file)")
        if not p.is_file():  # /dev/zero, a pipe, a folder: never read to the end
            raise JudgeSpecError(f"judge pool file {path}: cannot be read (not a regular file)")
        with open(p, "rb") as f:
            data = f.read(MAX_POOL_FILE_BYTES + 1)
        if len(data) > MAX_POOL_FILE_BYTES:
            raise JudgeSpecError(f"judge pool file {path}: larger than the "
                                 f"{MAX_POOL_FILE_BYTES:,} bytes allowed")
        lines = data.decode("utf-8").splitlines()
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
        if len(urls) > MAX_POOL_ENDPOINTS:
            raise JudgeSpecError(f"judge pool file {path}, line {n}: more than the "
                                 f"{MAX_POOL_ENDPOINTS} endpoints a pool may have")
    if not urls:
        raise JudgeSpecError(f"judge pool file {path}: no URL in it")
    return parse_spec(f"{name}:{','.join(urls)}{sep}{model}").spec
