"""Judge specs → backends. A backend's module is imported only when that backend is asked for.

Spec strings (the same in the UI, CLI and config; each backend declares its grammar once in
``spec.py``, which :func:`parse_spec` reads):

* ``embedded`` / ``embedded:quality`` — llama.cpp on the CPU with a model from a PyPI package
* ``openai:<model>`` — OpenAI API (key from ``OPENAI_API_KEY``)
* ``openai-compat:<base_url>#<model>`` — any OpenAI-compatible server
* ``vllm:<model>`` — in-process vLLM (optional extra, GPU)
* ``fake`` — deterministic rules, for tests
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from typing import Any

from checkeval_core.judges.base import Judge
from checkeval_core.judges.cached import CachedJudge
from checkeval_core.judges.keys import check_judge_hosts, judge_hosts, needs_key, resolve, urls_of
from checkeval_core.judges.model_files import model_missing
from checkeval_core.judges.pool import items_per_endpoint
from checkeval_core.judges.retry import DEFAULT_ATTEMPTS
from checkeval_core.judges.spec import (  # noqa: F401 - the registry's public names
    BACKENDS,
    Backend,
    JudgeSpec,
    JudgeSpecError,
    SpecField,
    as_spec,
    endpoint_urls,
    needs_gpu,
    parse_spec,
    register_backend,
    shown,
    spec_forms,
    spec_problems,
)


def install_problems(specs: list[str]) -> list[str]:
    """Why each judge in ``specs`` cannot be built on this machine — a backend's package or the
    embedded model not installed, a bad ``CHECKEVAL_POOL_ITEMS`` for a pool — found without
    importing or loading anything, so a batch is refused before any judge is asked."""
    out = []
    for spec in specs:
        parsed = parse_spec(spec)
        backend = BACKENDS[parsed.backend]
        missing = [m for m in backend.requires if importlib.util.find_spec(m) is None]
        if missing:
            out.append(f"judge {parsed.spec!r} needs a package that is not installed "
                       f"({missing[0]}); install it with: {backend.install}")
        elif parsed.backend == "embedded":
            problem = model_missing(parsed.get("variant", ""))
            if problem:
                out.append(f"judge {parsed.spec!r}: {problem}")
        if parsed.is_pool:
            try:
                items_per_endpoint()
            except ValueError as e:
                out.append(f"judge {parsed.spec!r}: {e}")
    return out


def load_backend(spec: str | JudgeSpec, **params: Any) -> Judge:
    """Instantiate the raw backend for ``spec`` (no cache, retries or concurrency around it)."""
    parsed = as_spec(spec)
    backend = BACKENDS[parsed.backend]
    factory = backend.factory
    if isinstance(factory, str):
        mod_name, cls_name = factory.split(":")
        try:
            module = importlib.import_module(mod_name)
        except ImportError as exc:  # the backend's heavy dependency is missing
            raise ImportError(f"judge {shown(spec)!r} needs a package that is not installed "
                              f"({exc.name}); install it with: {backend.install}") from exc
        factory = getattr(module, cls_name)
    return factory(parsed, **params)


def get_judge(spec: str | JudgeSpec, db: Any = None, *, cache: bool = True, key_env: str | None = None,
              secrets: Mapping[str, Any] | None = None, attempts: int = DEFAULT_ATTEMPTS,
              **params: Any) -> Judge:
    """The judge for ``spec`` wrapped once with caching (in ``db``), retries (up to
    ``attempts`` calls per request on a failure the backend calls transient), batching and
    concurrency (``cached.CachedJudge``).

    Without ``db`` (or with ``cache=False``) there is no response cache (the other policies
    still apply). Backends that declare key variables get their API key from
    :func:`checkeval_core.judges.keys.resolve` (the saved judge's ``key_env`` in ``db``,
    then the declared default variables; ``secrets`` is an extra mapping such as
    ``st.secrets``) unless the caller passes ``api_key``; a key goes only to an address the
    operator approved for its variable (``keys.KeyRefused`` otherwise).
    """
    spec = as_spec(spec)  # parsed once here; everything below reads the parsed spec
    check_judge_hosts(spec, secrets)  # outside CHECKEVAL_JUDGE_HOSTS: nothing is built
    allowed = judge_hosts(secrets) if urls_of(spec) else None
    if needs_key(spec) and not params.get("api_key"):
        params.pop("api_key", None)
        if spec.is_pool:  # a pool: each endpoint gets the key approved for its own address
            params["endpoint_keys"] = [resolve(db, spec, key_env=key_env, secrets=secrets,
                                               params=params, url=u) for u in urls_of(spec)]
        else:
            found = resolve(db, spec, key_env=key_env, secrets=secrets, params=params)
            if found:
                # the backend re-checks every request's address against this variable's
                # approval
                params.update(api_key=found.value, key_origins=found.origins)
    if allowed is not None:  # the backend checks every request's address against it too
        params["allowed_origins"] = allowed
    return CachedJudge(load_backend(spec, **params), db=db if cache else None,
                       attempts=attempts)
