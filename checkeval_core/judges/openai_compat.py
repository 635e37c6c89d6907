"""``openai:<model>`` and ``openai-compat:<base_url>#<model>``: one adapter for OpenAI and every
OpenAI-compatible server (vLLM's ``vllm serve``, llama.cpp's server, Ollama, LM Studio…).

Binary questions ask for one token with ``logprobs``/``top_logprobs`` and read p(Yes) from
the candidates (all spellings of yes/no summed); a server that refuses log-probabilities is
remembered and asked in text mode from then on. Transient failures (429, 5xx, timeouts,
connection errors) are raised and classified by :meth:`OpenAIJudge.should_retry`; the wrapper
(``cached.py``) retries them. Anything else becomes an ``error`` on the result. The API key is
passed in by ``registry.get_judge`` (resolved by ``keys.resolve_key``: the saved judge's
``key_env``, then the variables the backend declares in ``spec.py``), is never stored, and is
scrubbed from every error message.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

from checkeval_core.judges.base import (
    BinaryRequest,
    BinaryResult,
    Capabilities,
    GenerateRequest,
    GenerateResult,
)
from checkeval_core.judges.keys import (
    AddressRefused,
    KeyRefused,
    Origin,
    default_key_envs,
    origin_of,
    resolve,
    show_origin,
    target_url,
)
from checkeval_core.judges.parsing import p_yes_from_logprobs, parse_verdict
from checkeval_core.judges.retry import RetryDecision
from checkeval_core.judges.spec import BACKENDS

# openai is imported when a remote judge sends its first request (about 0.6 s): the CLI's
# start, an estimate, and the fake or embedded judges never pay it.

SEED = 1234
TOP_LOGPROBS = 20


class OpenAIJudge:
    """Chat-completions adapter; ``parsed`` is a :class:`spec.JudgeSpec`."""

    def __init__(self, parsed: Any, api_key: str | None = None, timeout: float | None = None,
                 concurrency: int | None = None,
                 key_origins: tuple[Origin, ...] | None = None,
                 allowed_origins: tuple[Origin, ...] | None = None, **params: Any) -> None:
        self.backend = parsed.backend
        self.spec = parsed.spec
        self.model = parsed.model
        # always explicit: the client's own default (OPENAI_BASE_URL) must not move the key
        self.base_url = target_url(self.spec)
        official = BACKENDS[parsed.backend].default_url if parsed.backend in BACKENDS else ""
        try:
            self._official = bool(official) and origin_of(self.base_url) == origin_of(official)
        except KeyRefused:
            self._official = False
        if not api_key:
            found = resolve(None, self.spec)
            api_key, key_origins = (found.value, found.origins) if found else (None, None)
        if not api_key and not parsed.get("base_url"):
            raise ValueError(f"judge 'openai:...' needs an API key: set "
                             f"{' or '.join(default_key_envs(self.spec))} (or the variable "
                             "named by the saved judge's --key-env) in the environment (or in "
                             ".streamlit/secrets.toml for the app)")
        key = api_key or "not-needed"  # an OpenAI-compatible server without authentication
        self._key = key
        # every request carrying the key must go to an address approved for it (the judge's
        # own address when the caller passed a key directly); redirects are never followed
        self._key_origins = (tuple(key_origins) if key_origins else
                             (origin_of(self.base_url),)) if api_key else None
        # CHECKEVAL_JUDGE_HOSTS (keys.judge_hosts): the only addresses any request may go to
        self._allowed_origins = tuple(allowed_origins) if allowed_origins is not None else None
        self.timeout = float(timeout or os.environ.get("CHECKEVAL_TIMEOUT", "60"))
        self.params = params  # never holds the key (see CachedJudge)
        conc = int(concurrency or os.environ.get("CHECKEVAL_CONCURRENCY", "8"))
        # the client (~1 MB, ~27 ms, and the openai import) is built at the first request: a
        # judge built to be estimated or checked costs nothing
        self._client: Any = None
        self._client_lock = threading.Lock()
        self.use_logprobs = True
        self.capabilities = Capabilities(logprobs=True, prefix_reuse=False,
                                         max_concurrency=max(1, conc), local=False,
                                         model=self.model)

    @property
    def _openai(self) -> Any:
        try:
            import openai
        except ImportError as e:  # pragma: no cover - openai is a hard requirement
            raise ImportError("pip install openai") from e
        return openai

    @property
    def client(self) -> Any:
        """The OpenAI client, built once; it reads nothing from the environment (see
        ``_SENT_HEADERS``) and every request passes :meth:`_guard`."""
        with self._client_lock:
            if self._client is None:
                openai = self._openai
                http = openai.DefaultHttpxClient(follow_redirects=False,
                                                 event_hooks={"request": [self._guard]})
                client = openai.OpenAI(api_key=self._key, base_url=self.base_url,
                                       max_retries=0, timeout=self.timeout, http_client=http,
                                       organization=None, project=None,
                                       default_headers=_no_ambient_headers(openai))
                _forget_environment(client, openai)
                self._client = client
            return self._client

    def _guard(self, request: Any) -> None:
        """Every request, before it leaves: only the headers this project sets (the server's
        ``OPENAI_CUSTOM_HEADERS``, ``OPENAI_ORG_ID`` … never ride along), ``Authorization``
        exactly the resolved key or absent, and the key only to an address approved for it."""
        for name, value in request.headers.items():
            low = name.lower()
            if low == "authorization":
                if value != f"Bearer {self._key}":
                    raise KeyRefused("refused to send an Authorization header other than the "
                                     "judge's own key")
            elif low not in _SENT_HEADERS:
                raise KeyRefused(f"refused to send the header {_short(name, 40)!r}: this "
                                 "project does not set it (headers from the server's "
                                 "environment are never sent; docs/security.md)")
        if self._allowed_origins is not None:
            if not _origin_in(request, self._allowed_origins):
                raise AddressRefused(f"refused to send a request to "
                                     f"{show_origin(_origin_or(request))}: not among the "
                                     "addresses the operator allows (CHECKEVAL_JUDGE_HOSTS)")
        if self._key_origins is None:
            return
        if not _origin_in(request, self._key_origins):
            raise KeyRefused(f"refused to send the key to {show_origin(_origin_or(request))}: "
                             "not an address approved for it")

    # -- one call, and which of its failures are worth retrying --------------------------
    def _scrub(self, text: str) -> str:
        if self._key and self._key != "not-needed":
            text = text.replace(self._key, "***")
        return text

    def _call(self, **kw: Any) -> Any:
        return self.client.chat.completions.create(model=self.model, **kw)

    def should_retry(self, exc: BaseException) -> RetryDecision | None:
        """Rate limits, timeouts, lost connections and server errors (5xx) are transient;
        everything else (a refused key, a bad request) is not."""
        o = self._openai
        if isinstance(exc, KeyRefused) or isinstance(exc.__cause__, KeyRefused):
            return None  # the key's address is refused: never retried
        if isinstance(exc, o.RateLimitError):
            return RetryDecision(self._scrub(f"rate limited (429){self._body(exc)}"),
                                 _retry_after(exc))
        if isinstance(exc, o.APITimeoutError):  # before APIConnectionError: a subclass
            return RetryDecision(f"timed out after {self.timeout:g} s")
        if isinstance(exc, o.APIConnectionError):
            return RetryDecision(self._scrub(f"cannot connect to {self._where()}: {exc}"))
        if isinstance(exc, o.APIStatusError) and exc.status_code >= 500:
            return RetryDecision(self._scrub(f"server error {exc.status_code}{self._body(exc)}"),
                                 _retry_after(exc))
        return None

    def _where(self) -> str:
        """The server's URL (no credentials) for connection errors."""
        url = str(getattr(self.client, "base_url", "") or "the OpenAI API")
        return re.sub(r"//[^/@]*@", "//", url)

    def _error(self, e: Exception) -> str:
        if isinstance(e.__cause__, KeyRefused):
            return self._scrub(str(e.__cause__))
        if isinstance(e, self._openai.APIStatusError) and 300 <= e.status_code < 400:
            return (f"the server answered {e.status_code} (a redirect); redirects are not "
                    "followed, so the key never leaves the approved address")
        if isinstance(e, self._openai.APIStatusError):
            return self._scrub(f"{type(e).__name__}: HTTP {e.status_code}{self._body(e)}")
        return self._scrub(f"{type(e).__name__}: {_short(e)}")

    def _body(self, e: Any) -> str:
        """An HTTP error is shown as its status only: the body of an answer from an address a
        visitor named (an internal service) is never shown back. The backend's official
        endpoint's message (a wrong model name, a quota) is kept (": …")."""
        return f": {_short(e)}" if self._official else ""

    # -- protocol ---------------------------------------------------------------------------
    def binary(self, requests: Sequence[BinaryRequest]) -> list[BinaryResult]:
        return [self._binary_one(r) for r in requests]

    def _binary_one(self, req: BinaryRequest) -> BinaryResult:
        t0 = time.perf_counter()
        kw = binary_arguments(req, logprobs=False)
        try:
            try:
                if self.use_logprobs:
                    resp = self._call(**binary_arguments(req))
                else:
                    resp = self._call(**kw)
            except self._openai.BadRequestError as e:
                if self.use_logprobs and "logprob" in str(e).lower():
                    self.use_logprobs = False  # remembered: text mode from now on
                    resp = self._call(**kw)
                else:
                    raise
        except Exception as e:  # noqa: BLE001 - every failure becomes data...
            if self.should_retry(e) is not None:
                raise  # ...except a transient one: the wrapper retries it
            return BinaryResult(verdict="invalid", error=self._error(e),
                                latency_ms=(time.perf_counter() - t0) * 1000)
        return binary_result(resp, (time.perf_counter() - t0) * 1000)

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]:
        out = []
        for req in requests:
            t0 = time.perf_counter()
            try:
                resp = self._call(**generate_arguments(req, self.use_logprobs))
                out.append(generate_result(resp, (time.perf_counter() - t0) * 1000))
            except Exception as e:  # noqa: BLE001 - failures are data...
                if self.should_retry(e) is not None:
                    raise  # ...except a transient one: the wrapper retries it
                out.append(GenerateResult(error=self._error(e),
                                          latency_ms=(time.perf_counter() - t0) * 1000))
        return out


# The headers a request may carry besides ``Authorization``: the HTTP client's own and the
# SDK's fixed ones (its name and version, the platform, a retry count and timeout). The SDK
# also reads OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_CUSTOM_HEADERS, OPENAI_ADMIN_KEY,
# OPENAI_WEBHOOK_SECRET and OPENAI_BASE_URL from the environment and would send the first three
# (and an Authorization of OPENAI_CUSTOM_HEADERS) to whatever base URL a visitor names: the
# client is built so it keeps none of them (``_forget_environment``), and ``_guard`` refuses
# any other header.
_SENT_HEADERS = frozenset({
    "host", "accept", "accept-encoding", "connection", "content-length", "content-type",
    "user-agent", "x-stainless-lang", "x-stainless-package-version", "x-stainless-os",
    "x-stainless-arch", "x-stainless-runtime", "x-stainless-runtime-version",
    "x-stainless-async", "x-stainless-retry-count", "x-stainless-read-timeout",
    "x-stainless-timeout", "x-stainless-raw-response"})


def _no_ambient_headers(openai: Any) -> dict[str, Any]:
    """Explicit default headers that drop the organisation and project the SDK would read
    from the environment (an ``openai.Omit`` value removes a header)."""
    return {"OpenAI-Organization": openai.Omit(), "OpenAI-Project": openai.Omit()}


def _forget_environment(client: Any, openai: Any) -> None:
    """Drop what the SDK's constructor read from the environment: the organisation, project,
    admin key and webhook secret, and every header of ``OPENAI_CUSTOM_HEADERS`` (the request
    hook refuses them anyway; this keeps a request from being refused for them)."""
    for attr in ("organization", "project", "admin_api_key", "webhook_secret"):
        if hasattr(client, attr):
            setattr(client, attr, None)
    if hasattr(client, "_custom_headers"):
        client._custom_headers = _no_ambient_headers(openai)
    if hasattr(client, "_ambient_authorizations"):
        client._ambient_authorizations = frozenset()


# -- what is sent and how an answer is read: the online calls above and the batch files of
# runs/batch.py (judges/batch_format.py) use these same functions ---------------------------
def binary_arguments(req: BinaryRequest, logprobs: bool = True) -> dict[str, Any]:
    """The chat-completions arguments (all but ``model``) of a Yes/No question: one token at
    temperature 0, with the top log-probabilities unless ``logprobs`` is off."""
    messages = ([{"role": "system", "content": req.system}] if req.system else []) + \
               [{"role": "user", "content": req.user_text}]
    kw: dict[str, Any] = dict(messages=messages, max_tokens=1, temperature=0, seed=SEED)
    if logprobs:
        kw.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
    return kw


def generate_arguments(req: GenerateRequest, logprobs: bool = True) -> dict[str, Any]:
    """The chat-completions arguments (all but ``model``) of a generation."""
    kw: dict[str, Any] = dict(
        messages=[{"role": r, "content": c} for r, c in req.messages],
        max_tokens=req.max_tokens, temperature=req.temperature,
        seed=SEED if req.seed is None else req.seed)
    if req.json_mode:
        kw["response_format"] = {"type": "json_object"}
    if req.top_logprobs > 0 and logprobs:
        kw.update(logprobs=True, top_logprobs=min(TOP_LOGPROBS, req.top_logprobs))
    return kw


def binary_result(resp: Any, latency: float) -> BinaryResult:
    """A Yes/No answer read from a chat completion: p(Yes) from the first token's candidates
    when there are log-probabilities, else the verdict parsed from the text."""
    usage = getattr(resp, "usage", None)
    n_in = getattr(usage, "prompt_tokens", 0) or 0
    n_out = getattr(usage, "completion_tokens", 0) or 0
    choices = getattr(resp, "choices", None) or []
    if not choices:
        return BinaryResult(verdict="invalid", error="the server returned no choices",
                            latency_ms=latency, tokens_in=n_in, tokens_out=n_out)
    choice = choices[0]
    raw = (getattr(choice.message, "content", None) or "") if choice.message else ""
    top = _first_token_top(choice)
    if top is not None:
        p_yes, mass = p_yes_from_logprobs(top)
        if p_yes is not None:
            return BinaryResult(verdict="yes" if p_yes >= 0.5 else "no", p_yes=p_yes,
                                raw=raw, mode="logprob", tokens_in=n_in, tokens_out=n_out,
                                latency_ms=latency, yes_no_mass=mass)
        # neither yes nor no among the candidates: recorded, verdict from the text
        return BinaryResult(verdict=parse_verdict(raw), p_yes=None, raw=raw, mode="text",
                            tokens_in=n_in, tokens_out=n_out, latency_ms=latency,
                            yes_no_mass=0.0)
    return BinaryResult(verdict=parse_verdict(raw), raw=raw, mode="text", tokens_in=n_in,
                        tokens_out=n_out, latency_ms=latency)


def generate_result(resp: Any, latency: float) -> GenerateResult:
    """A generation read from a chat completion; ValueError when it has no choices."""
    choices = getattr(resp, "choices", None) or []
    if not choices:
        raise ValueError("the server returned no choices")
    usage = getattr(resp, "usage", None)
    return GenerateResult(text=choices[0].message.content or "",
                          tokens_in=getattr(usage, "prompt_tokens", 0) or 0,
                          tokens_out=getattr(usage, "completion_tokens", 0) or 0,
                          latency_ms=latency, first_token_logprobs=_first_token_top(choices[0]))


def _origin_in(request: Any, origins: Any) -> bool:
    """Whether the request goes to one of ``origins`` (an address without an origin: no)."""
    try:
        return origin_of(str(request.url)) in origins
    except KeyRefused:
        return False


def _origin_or(request: Any) -> Origin:
    url = request.url
    return (url.scheme if url.scheme in ("http", "https") else "https", url.host or "?",
            url.port or (443 if url.scheme == "https" else 80))


def _first_token_top(choice: Any) -> dict[str, float] | None:
    lp = getattr(choice, "logprobs", None)
    content = getattr(lp, "content", None) if lp is not None else None
    if not content:
        return None
    first = content[0]
    top: dict[str, float] = {}
    for c in (getattr(first, "top_logprobs", None) or []):
        top[c.token] = max(top.get(c.token, float("-inf")), float(c.logprob))
    if not top and getattr(first, "token", None) is not None:
        top[first.token] = float(first.logprob)
    return top


def _retry_after(e: Any) -> float | None:
    resp = getattr(e, "response", None)
    value = resp.headers.get("retry-after") if resp is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _short(e: Exception, limit: int = 300) -> str:
    text = str(e)
    return text if len(text) <= limit else text[:limit] + "…"
