"""Judge specs → backends. Heavy dependencies are imported only when a backend is asked for.

Spec strings (the same in the UI, CLI and config):

* ``embedded`` / ``embedded:quality`` — llama.cpp on the CPU with a model from a PyPI package
* ``openai:<model>`` — OpenAI API (key from ``OPENAI_API_KEY``)
* ``openai-compat:<base_url>#<model>`` — any OpenAI-compatible server
* ``vllm:<model>`` — in-process vLLM (optional extra, GPU)
* ``fake`` — deterministic rules, for tests
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from checkeval_core.judges.base import Judge

# backend name -> "module:Class" (imported lazily) and what to install when it is missing
BACKENDS: dict[str, tuple[str, str]] = {
    "embedded": ("checkeval_core.judges.embedded:EmbeddedJudge",
                 "pip install -r requirements.txt  (llama-cpp-python and the model packages)"),
    "openai": ("checkeval_core.judges.openai_compat:OpenAIJudge", "pip install openai"),
    "openai-compat": ("checkeval_core.judges.openai_compat:OpenAIJudge", "pip install openai"),
    "vllm": ("checkeval_core.judges.vllm_backend:VLLMJudge",
             "pip install -e '.[vllm]'  (needs a CUDA GPU)"),
    "fake": ("checkeval_core.judges.fake:FakeJudge", ""),
}


class JudgeSpecError(ValueError):
    """A judge spec string that cannot be understood; the message shows the accepted forms."""


@dataclass(frozen=True)
class JudgeSpec:
    backend: str
    model: str = ""
    base_url: str = ""
    variant: str = ""  # e.g. "quality" for embedded:quality

    @property
    def spec(self) -> str:
        if self.backend == "openai-compat":
            return f"openai-compat:{self.base_url}#{self.model}"
        if self.backend in ("openai", "vllm"):
            return f"{self.backend}:{self.model}"
        if self.variant:
            return f"{self.backend}:{self.variant}"
        return self.backend


FORMS = ("embedded, embedded:quality, openai:<model>, openai-compat:<base_url>#<model>, "
         "vllm:<model>, fake")


def parse_spec(spec: str) -> JudgeSpec:
    """Parse a spec string; raises :class:`JudgeSpecError` with the accepted forms."""
    s = (spec or "").strip()
    backend, _, rest = s.partition(":")
    if backend not in BACKENDS:
        raise JudgeSpecError(f"unknown judge {spec!r}; use one of: {FORMS}")
    if backend == "openai-compat":
        base_url, sep, model = rest.partition("#")
        if not base_url or not sep or not model:
            raise JudgeSpecError(
                f"judge {spec!r}: write openai-compat:<base_url>#<model>, "
                "e.g. openai-compat:http://localhost:8000/v1#Qwen/Qwen2.5-7B-Instruct")
        return JudgeSpec(backend, model=model, base_url=base_url)
    if backend in ("openai", "vllm"):
        if not rest:
            raise JudgeSpecError(f"judge {spec!r}: write {backend}:<model>")
        return JudgeSpec(backend, model=rest)
    if backend == "embedded":
        if rest not in ("", "quality"):
            raise JudgeSpecError(f"judge {spec!r}: embedded variants are 'embedded' and "
                                 "'embedded:quality'")
        return JudgeSpec(backend, variant=rest)
    if rest:
        raise JudgeSpecError(f"judge {spec!r}: '{backend}' takes no argument")
    return JudgeSpec(backend)


def spec_problems(specs: list[str]) -> list[str]:
    """Why each malformed spec in ``specs`` cannot be used (empty when all parse): checked
    before a batch of runs starts, so one bad spec starts nothing."""
    out = []
    for spec in specs:
        try:
            parse_spec(spec)
        except JudgeSpecError as e:
            out.append(str(e))
    return out


def load_backend(spec: str, **params: Any) -> Judge:
    """Instantiate the raw backend for ``spec`` (no cache, retries or concurrency around it)."""
    parsed = parse_spec(spec)
    target, install = BACKENDS[parsed.backend]
    mod_name, cls_name = target.split(":")
    try:
        module = importlib.import_module(mod_name)
    except ImportError as exc:  # the backend's heavy dependency is missing
        raise ImportError(f"judge {spec!r} needs a package that is not installed ({exc.name}); "
                          f"install it with: {install}") from exc
    return getattr(module, cls_name)(parsed, **params) if parsed.backend != "fake" \
        else getattr(module, cls_name)(spec, **params)


def get_judge(spec: str, db: Any = None, *, cache: bool = True, key_env: str | None = None,
              secrets: Mapping[str, Any] | None = None, **params: Any) -> Judge:
    """The judge for ``spec`` wrapped once with caching (in ``db``), retries and concurrency.

    Without ``db`` (or with ``cache=False``) there is no response cache (retries and the
    concurrency cap still apply). Remote backends get their API key from
    :func:`checkeval_core.judges.keys.resolve_key` (the saved judge's ``key_env`` in ``db``,
    then the default variables; ``secrets`` is an extra mapping such as ``st.secrets``)
    unless the caller passes ``api_key``.
    """
    from checkeval_core.judges.cached import CachedJudge
    from checkeval_core.judges.keys import needs_key, resolve_key

    if needs_key(spec) and not params.get("api_key"):
        params.pop("api_key", None)
        key = resolve_key(db, spec, key_env=key_env, secrets=secrets, params=params)
        if key:
            params["api_key"] = key
    return CachedJudge(load_backend(spec, **params), db=db if cache else None)
