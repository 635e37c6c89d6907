"""``vllm:<model>``: in-process vLLM (GPU, optional extra ``pip install -e '.[vllm]'``).

One ``LLM(model, enable_prefix_caching=True)`` per process; binary requests go in one
batched ``generate`` with ``SamplingParams(max_tokens=1, temperature=0, logprobs=K,
allowed_token_ids=[yes/no ids])`` so the answer is forced to a yes/no token and p(Yes) comes
from the returned log-probabilities. vLLM is imported only when this backend is used; the
request construction below is pure and unit-tested without vLLM installed. The backend
declares ``batch_size`` so the wrapper (``cached.py``) hands it whole batches; a failure of
the engine becomes an ``error`` on each result of the batch (failures are data).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from checkeval_core.judges.base import (
    BinaryRequest,
    BinaryResult,
    Capabilities,
    GenerateRequest,
    GenerateResult,
)
from checkeval_core.judges.parsing import p_yes_from_logprobs, parse_verdict

YES_NO_WORDS = ("Yes", "yes", "YES", " Yes", " yes", "No", "no", "NO", " No", " no")
SEED = 1234
BATCH_SIZE = 256  # requests per generate call: a killed run loses at most one batch
INSTALL = "the vllm backend needs the optional extra: pip install -e '.[vllm]' (CUDA GPU required)"

_LOCK = threading.Lock()
_LLMS: dict[str, Any] = {}


def yes_no_token_ids(encode: Callable[[str], list[int]]) -> list[int]:
    """Token ids of every yes/no spelling that is a single token for this tokenizer."""
    ids: list[int] = []
    for w in YES_NO_WORDS:
        toks = encode(w)
        if len(toks) == 1 and toks[0] not in ids:
            ids.append(toks[0])
    return ids


def binary_sampling_kwargs(yes_no_ids: list[int]) -> dict[str, Any]:
    """Keyword arguments for ``SamplingParams`` of a binary request."""
    return {"max_tokens": 1, "temperature": 0.0, "seed": SEED, "logprobs": len(yes_no_ids),
            "allowed_token_ids": list(yes_no_ids)}


def generate_sampling_kwargs(req: GenerateRequest) -> dict[str, Any]:
    kw: dict[str, Any] = {"max_tokens": req.max_tokens, "temperature": req.temperature,
                          "seed": SEED}
    if req.top_logprobs > 0:
        kw["logprobs"] = req.top_logprobs
    return kw


def chat_messages(system: str, user: str) -> list[dict[str, str]]:
    return ([{"role": "system", "content": system}] if system else []) + \
           [{"role": "user", "content": user}]


def binary_prompts(requests: Sequence[BinaryRequest],
                   apply_template: Callable[[list[dict[str, str]]], str]) -> list[str]:
    """Prompt strings (chat template applied, generation prompt added) for binary requests."""
    return [apply_template(chat_messages(r.system, r.user_text)) for r in requests]


def result_from_logprobs(text: str, top: dict[str, float] | None, n_in: int,
                         latency_ms: float) -> BinaryResult:
    """A binary result from one vLLM output's first-token log-probabilities."""
    if top:
        p_yes, mass = p_yes_from_logprobs(top)
        if p_yes is not None:
            return BinaryResult(verdict="yes" if p_yes >= 0.5 else "no", p_yes=p_yes, raw=text,
                                mode="logprob", tokens_in=n_in, tokens_out=1,
                                latency_ms=latency_ms, yes_no_mass=mass)
    return BinaryResult(verdict=parse_verdict(text), raw=text, mode="text", tokens_in=n_in,
                        tokens_out=1, latency_ms=latency_ms, yes_no_mass=0.0 if top else None)


class VLLMJudge:
    def __init__(self, parsed: Any, **params: Any) -> None:
        self.spec = parsed.spec
        self.model = parsed.model
        self.params = params
        self.capabilities = Capabilities(logprobs=True, prefix_reuse=True, max_concurrency=1,
                                         local=True, model=self.model, batch_size=BATCH_SIZE)

    def _llm(self) -> Any:
        try:
            import vllm
        except ImportError as e:
            raise ImportError(INSTALL) from e
        with _LOCK:
            if self.model not in _LLMS:
                _LLMS[self.model] = vllm.LLM(model=self.model, enable_prefix_caching=True,
                                             seed=SEED, **self.params)
            return _LLMS[self.model]

    def binary(self, requests: Sequence[BinaryRequest]) -> list[BinaryResult]:
        t0 = time.perf_counter()
        try:
            return self._binary(requests)
        except ImportError:
            raise
        except Exception as e:  # noqa: BLE001 - an engine failure is a result per request
            latency = (time.perf_counter() - t0) * 1000
            return [BinaryResult(verdict="invalid", error=f"vllm: {e}", latency_ms=latency)
                    for _ in requests]

    def _binary(self, requests: Sequence[BinaryRequest]) -> list[BinaryResult]:
        import vllm

        llm = self._llm()
        tok = llm.get_tokenizer()
        ids = yes_no_token_ids(lambda w: tok.encode(w, add_special_tokens=False))
        prompts = binary_prompts(requests, lambda m: tok.apply_chat_template(
            m, tokenize=False, add_generation_prompt=True))
        t0 = time.perf_counter()
        outs = llm.generate(prompts, vllm.SamplingParams(**binary_sampling_kwargs(ids)))
        latency = (time.perf_counter() - t0) * 1000 / max(1, len(prompts))
        results = []
        for o in outs:
            comp = o.outputs[0]
            top = None
            if comp.logprobs:
                top = {tok.decode([tid]): float(lp.logprob) for tid, lp in comp.logprobs[0].items()}
            results.append(result_from_logprobs(comp.text, top, len(o.prompt_token_ids or []),
                                                latency))
        return results

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]:
        import vllm

        llm = self._llm()
        out = []
        for req in requests:
            t0 = time.perf_counter()
            msgs = [{"role": r, "content": c} for r, c in req.messages]
            try:
                res = llm.chat(msgs, vllm.SamplingParams(**generate_sampling_kwargs(req)))[0]
            except Exception as e:  # noqa: BLE001 - failures are data
                out.append(GenerateResult(error=f"vllm: {e}",
                                          latency_ms=(time.perf_counter() - t0) * 1000))
                continue
            comp = res.outputs[0]
            out.append(GenerateResult(text=comp.text, tokens_in=len(res.prompt_token_ids or []),
                                      tokens_out=len(comp.token_ids or []),
                                      latency_ms=(time.perf_counter() - t0) * 1000))
        return out
