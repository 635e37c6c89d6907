"""What wraps every backend once: the response cache, the concurrency cap, accounting.

* **Cache** — each request gets a deterministic id, sha256(backend spec, model, params,
  request payload); answers are stored in ``llm_cache`` as they arrive (with concurrent
  requests: in arrival order, not request order), so a rerun or another run asks the backend
  only for what is missing (like lm-evaluation-harness' CachingLM).
  Errors are never cached.
* **Concurrency** — remote backends get up to ``capabilities.max_concurrency`` requests in
  flight (a thread pool, one request per call); local backends get the whole batch at once
  so they can order it for prefix reuse. Database writes stay on the calling thread.
* **Accounting** — requests, cache hits, tokens and cost (prices per million tokens per
  model: :data:`PRICES`, overridable with ``CHECKEVAL_PRICES='{"model": [in, out]}'``; zero
  for local models).

Retries with backoff live in the remote adapter's single request call (see ``retry.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from checkeval_core.judges.base import (
    BinaryRequest,
    BinaryResult,
    GenerateRequest,
    GenerateResult,
    Judge,
)
from checkeval_core.store import now_iso

# USD per million tokens (input, output); extend with CHECKEVAL_PRICES.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
}


def price_for(model: str, local: bool) -> tuple[float, float]:
    if local:
        return (0.0, 0.0)
    extra = os.environ.get("CHECKEVAL_PRICES")
    table = dict(PRICES)
    if extra:
        try:
            table.update({k: (float(v[0]), float(v[1])) for k, v in json.loads(extra).items()})
        except (ValueError, TypeError, IndexError, KeyError):
            pass  # a malformed override is ignored (documented); prices are informative only
    return table.get(model, (0.0, 0.0))


def request_key(spec: str, model: str, params: dict[str, Any], kind: str,
                payload: dict[str, Any]) -> str:
    """The deterministic id of one request (hash of judge, params and prompt)."""
    blob = json.dumps({"spec": spec, "model": model, "params": params, "kind": kind,
                       "payload": payload}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CachedJudge:
    """A judge with caching, a concurrency cap and accounting around a raw backend."""

    def __init__(self, inner: Judge, db: Any = None) -> None:
        self.inner = inner
        self.db = db
        self.spec = inner.spec
        self.capabilities = inner.capabilities
        self.params = {k: v for k, v in dict(getattr(inner, "params", {}) or {}).items()
                       if "key" not in k.lower() and "secret" not in k.lower()}
        self.n_requests = 0
        self.n_cache_hits = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost = 0.0
        self._price = price_for(self.capabilities.model, self.capabilities.local)

    # -- cache ---------------------------------------------------------------------------
    def _key(self, kind: str, payload: dict[str, Any]) -> str:
        return request_key(self.spec, self.capabilities.model, self.params, kind, payload)

    def _lookup(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        if self.db is None or not keys:
            return {}
        found: dict[str, dict[str, Any]] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            for k, resp in self.db.execute(
                    f"SELECT key, response FROM llm_cache WHERE key IN "
                    f"({','.join('?' * len(chunk))})", chunk):
                found[k] = json.loads(resp)
        return found

    def _store(self, kind: str, items: list[tuple[str, dict[str, Any]]]) -> None:
        if self.db is None or not items:
            return
        self.db.conn.executemany(
            "INSERT OR REPLACE INTO llm_cache (key, backend, model, kind, response, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(k, self.spec, self.capabilities.model, kind, json.dumps(v, ensure_ascii=False),
              now_iso()) for k, v in items])

    # -- running -------------------------------------------------------------------------
    def _run(self, requests: Sequence[Any], kind: str, call: Callable[[list[Any]], list[Any]],
             make: Callable[..., Any]) -> list[Any]:
        keys = [self._key(kind, r.cache_payload()) for r in requests]
        hits = self._lookup(keys)
        results: list[Any] = [None] * len(requests)
        misses = []
        for i, k in enumerate(keys):
            if k in hits:
                res = make(**hits[k])
                res.cached = True
                results[i] = res
                self.n_cache_hits += 1
            else:
                misses.append(i)
        if misses:
            if self.capabilities.local or self.capabilities.max_concurrency <= 1:
                # One request at a time, in the backend's preferred order (prefix reuse), each
                # answer cached as soon as it exists: a process killed mid-batch loses at most
                # the request in flight, and a resumed run never asks the backend twice.
                order = getattr(self.inner, "order", None) if kind == "binary" else None
                ordered = [misses[k] for k in order([requests[i] for i in misses])] \
                    if callable(order) else misses
                for i in ordered:
                    res = call([requests[i]])[0]
                    results[i] = res
                    self._account(kind, keys[i], res)
            else:
                # each response is cached the moment it arrives (not in request order): a
                # run killed while one slow request is pending keeps every answer that came
                # back behind it. Writes stay on this (the calling) thread.
                pool = ThreadPoolExecutor(self.capabilities.max_concurrency)
                futures = {pool.submit(lambda q: call([q])[0], requests[i]): i for i in misses}
                failure: BaseException | None = None
                try:
                    for fut in as_completed(futures):
                        i = futures[fut]
                        try:
                            res = fut.result()
                        except Exception as e:  # noqa: BLE001 - re-raised below
                            if failure is None:  # drop the queued requests, keep the rest
                                failure = e
                                for f in futures:
                                    f.cancel()
                            continue
                        results[i] = res
                        self._account(kind, keys[i], res)
                finally:
                    pool.shutdown(wait=True, cancel_futures=True)
                if failure is not None:
                    raise failure
        return results

    def _account(self, kind: str, key: str, res: Any) -> None:
        self.n_requests += 1
        self.tokens_in += res.tokens_in
        self.tokens_out += res.tokens_out
        self.cost += (res.tokens_in * self._price[0] + res.tokens_out * self._price[1]) / 1e6
        if not res.error:
            d = res.to_dict()
            d.pop("cached", None)
            self._store(kind, [(key, d)])

    def binary(self, requests: Sequence[BinaryRequest]) -> list[BinaryResult]:
        return self._run(requests, "binary", self.inner.binary, BinaryResult)

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]:
        return self._run(requests, "generate", self.inner.generate, GenerateResult)

    def counters(self) -> dict[str, Any]:
        return {"requests": self.n_requests, "cache_hits": self.n_cache_hits,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "cost": round(self.cost, 6)}
