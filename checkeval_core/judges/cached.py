"""The one wrapper around every backend: cache, retries, concurrency, batching, accounting.

A backend only translates requests into its own calls and classifies its failures; every
policy lives here, so a new backend gets all of it (like Inspect AI's ``Model.generate``
around a ``ModelAPI``):

* **Cache** — each request gets a deterministic id, sha256(backend spec, model, params,
  request payload); answers are stored in ``llm_cache`` as they arrive (with concurrent
  requests: in arrival order, not request order), so a rerun or another run asks the backend
  only for what is missing (like lm-evaluation-harness' CachingLM).
  Errors are never cached.
* **Retries** — when a call raises, the backend's ``should_retry(exc)`` decides: a
  :class:`~checkeval_core.judges.retry.RetryDecision` means wait (its delay, else backoff)
  and ask again, up to ``attempts`` calls; after the last one each request gets a result with
  ``error`` set (failures are data). ``None`` (or no ``should_retry``) re-raises.
* **Batching and concurrency**, from the backend's capabilities — ``batch_size > 1``: the
  missing requests go to the backend in batches of that size (vLLM generates a batch at
  once); ``max_concurrency > 1`` on a remote backend: that many single requests in flight
  (a thread pool); otherwise one request at a time in the backend's preferred ``order``
  (prefix reuse). Database writes stay on the calling thread.
* **Accounting** — requests, cache hits, retries, tokens and cost (prices per million tokens
  per judge spec or model: ``prices.py``, extended with ``CHECKEVAL_PRICES``; zero for local
  models).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
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
from checkeval_core.judges.prices import PRICES, PriceError, price_of  # noqa: F401
from checkeval_core.judges.retry import DEFAULT_ATTEMPTS, MAX_WAIT, wait_before_retry
from checkeval_core.store import now_iso


def price_for(model: str, local: bool, spec: str = "") -> tuple[float, float]:
    """Prices for the running cost (``prices.py``); unknown or unreadable: zero, since a
    run's cost column is informative only (the estimate says when a price is unknown)."""
    try:
        return price_of(spec, model, local) or (0.0, 0.0)
    except PriceError:
        return (0.0, 0.0)


def request_key(spec: str, model: str, params: dict[str, Any], kind: str,
                payload: dict[str, Any]) -> str:
    """The deterministic id of one request (hash of judge, params and prompt)."""
    blob = json.dumps({"spec": spec, "model": model, "params": params, "kind": kind,
                       "payload": payload}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _failed(kind: str, error: str, latency_ms: float) -> Any:
    if kind == "binary":
        return BinaryResult(verdict="invalid", error=error, latency_ms=latency_ms)
    return GenerateResult(error=error, latency_ms=latency_ms)


class CachedJudge:
    """A judge with caching, retries, batching, a concurrency cap and accounting around a
    raw backend (see the module docstring)."""

    def __init__(self, inner: Judge, db: Any = None, attempts: int = DEFAULT_ATTEMPTS,
                 max_wait: float = MAX_WAIT, sleep: Callable[[float], None] | None = None
                 ) -> None:
        self.inner = inner
        self.db = db
        self.attempts = max(1, int(attempts))
        self.max_wait = max_wait
        self._sleep = sleep or time.sleep
        self._lock = threading.Lock()  # retries are counted from the worker threads too
        self.spec = inner.spec
        self.capabilities = inner.capabilities
        self.params = {k: v for k, v in dict(getattr(inner, "params", {}) or {}).items()
                       if "key" not in k.lower() and "secret" not in k.lower()}
        self.n_requests = 0
        self.n_cache_hits = 0
        self.n_retries = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost = 0.0
        # what the answers handed out took the backend when each was asked (a cached answer
        # keeps its latency): a benchmark resumed from the cache still reports the time its
        # requests cost, not the milliseconds of the lookup
        self.answer_ms = 0.0
        self._price = price_for(self.capabilities.model, self.capabilities.local, self.spec)

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
    def _ask(self, call: Callable[[list[Any]], list[Any]], batch: list[Any],
             kind: str) -> list[Any]:
        """One backend call for ``batch``, retried while the backend classifies the failure
        as transient; after the last attempt every request gets an error result."""
        classify = getattr(self.inner, "should_retry", None)
        t0 = time.perf_counter()
        for attempt in range(self.attempts):
            try:
                out = list(call(batch))
            except Exception as exc:
                decision = classify(exc) if callable(classify) else None
                if decision is None:
                    raise
                if attempt == self.attempts - 1:
                    latency = (time.perf_counter() - t0) * 1000
                    return [_failed(kind, decision.message, latency) for _ in batch]
                with self._lock:
                    self.n_retries += 1
                self._sleep(wait_before_retry(decision, attempt, self.max_wait))
                continue
            if len(out) != len(batch):
                raise RuntimeError(f"judge {self.spec}: {len(out)} results for "
                                   f"{len(batch)} requests")
            return out
        raise AssertionError("unreachable")  # pragma: no cover

    def split_cached(self, kind: str, requests: Sequence[Any]
                     ) -> tuple[list[str], list[Any], list[int]]:
        """The requests' deterministic ids, their results so far (cache hits, marked
        ``cached``; None elsewhere) and the positions of the misses. A driver that has the
        misses answered elsewhere (``runs/ray_engine.py``) hands each answer back through
        :meth:`record`, so it is cached and counted exactly as if asked here."""
        make = BinaryResult if kind == "binary" else GenerateResult
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
                self.answer_ms += res.latency_ms
            else:
                misses.append(i)
        return keys, results, misses

    def record(self, kind: str, key: str, res: Any) -> None:
        """Count and cache an answer to the request ``key`` obtained outside :meth:`_run`."""
        self._account(kind, key, res)

    def _run(self, requests: Sequence[Any], kind: str, call: Callable[[list[Any]], list[Any]],
             make: Callable[..., Any]) -> list[Any]:
        keys, results, misses = self.split_cached(kind, requests)
        if not misses:
            return results
        # the backend's preferred order (prefix reuse: requests sharing an article together)
        order = getattr(self.inner, "order", None) if kind == "binary" else None
        if callable(order):
            misses = [misses[k] for k in order([requests[i] for i in misses])]
        caps = self.capabilities
        if caps.batch_size > 1 or caps.local or caps.max_concurrency <= 1:
            # In order, in batches: whole batches to a backend that generates them at once,
            # else one request at a time. Each batch's answers are cached when it returns, so
            # a process killed mid-run loses at most the batch (or request) in flight and a
            # resumed run never asks the backend twice.
            size = max(1, caps.batch_size)
            for start in range(0, len(misses), size):
                chunk = misses[start:start + size]
                for i, res in zip(chunk, self._ask(call, [requests[i] for i in chunk], kind)):
                    results[i] = res
                    self._account(kind, keys[i], res)
        else:
            # each response is cached the moment it arrives (not in request order): a run
            # killed while one slow request is pending keeps every answer that came back
            # behind it. Retries wait on the worker threads; writes stay on this thread.
            pool = ThreadPoolExecutor(caps.max_concurrency)
            futures = {pool.submit(lambda q: self._ask(call, [q], kind)[0], requests[i]): i
                       for i in misses}
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
        self.answer_ms += res.latency_ms
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
                "retries": self.n_retries,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "cost": round(self.cost, 6)}
