"""``embedded``: a small instruction-tuned model run in process on the CPU with llama.cpp.

No network, no key. Binary questions are answered from the next-token logits (normalised
p(Yes) over every single-token spelling of yes/no), and the shared prompt prefix is
evaluated once: a request's tokens are cut into *segments* at the boundaries of its context
parts (e.g. [chat header + article], [summary], [question + suffix]). The KV cache keeps the
segments evaluated so far; a request whose leading segments equal the cached ones only
evaluates the rest. Segments are always evaluated as the same chunks, so a score does not
depend on which requests came before it (the reuse path is deterministic; it differs from
one single full pass by a small numerical amount, see docs). Requests are ordered so that
items sharing a source are answered together (the article is evaluated once per group).
Short deterministic generations (G-Eval's Likert score, CheckEval's grouped Yes/No lines) are
decoded greedily on the same segment cache when the request names its shared parts.

The questions of one item (requests that differ only in their last segment) are evaluated
side by side: the shared prefix once in sequence 0, then every question's last segment as its
own llama.cpp sequence in one batch, each sequence seeing the prefix's KV cells (shared, not
copied) and its own tokens. One batch of ~400 tokens runs at the engine's prefill rate where 15
batches of ~25 tokens did not. A question's p(Yes) then differs from the one-by-one path by a
small numerical amount that may depend on which questions share its batch (see docs).

One model per process, guarded by a lock: a ``Llama`` context is not thread-safe.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from checkeval_core.judges.base import (
    BinaryRequest,
    BinaryResult,
    Capabilities,
    GenerateRequest,
    GenerateResult,
)
from checkeval_core.judges.model_files import VARIANTS, model_path

# llama_cpp is imported inside the functions that use it: loading its native library is paid
# only by a process that runs the embedded judge, not by every CLI start or page.

N_CTX = int(os.environ.get("CHECKEVAL_EMBEDDED_N_CTX", "8192"))
N_THREADS = int(os.environ.get("CHECKEVAL_EMBEDDED_THREADS", str(os.cpu_count() or 2)))
SEED = 1234
# generate requests up to this many tokens with ``shared_parts`` are decoded greedily on the
# segment cache (Likert scores, grouped Yes/No lines); longer or JSON ones use llama.cpp's
# chat completion
SHORT_ANSWER_TOKENS = 256
# sequences in one context: sequence 0 holds the shared prefix, the others one question each;
# it bounds how many questions of an item are evaluated in one batch
N_SEQ = 64
_SENTINEL = "\x00USER\x00"
YES_SPELLINGS = ("Yes", "yes", "YES", " Yes", " yes", " YES")
NO_SPELLINGS = ("No", "no", "NO", " No", " no", " NO")

_LOCK = threading.Lock()
_ENGINES: dict[str, _Engine] = {}
EXTRA_BUFFERS_ENV = "CHECKEVAL_EMBEDDED_EXTRA_BUFFERS"


def extra_buffers_safe() -> bool:
    """Whether llama.cpp may use its extra weight buffer types (AMX tiles, repacked weights).

    A llama.cpp built with its AMX kernels ends the process with SIGSEGV on the first prompt
    on CPUs that report AMX (seen in a VM with ``amx_tile``), so the extra buffers are off
    when both hold. ``scripts/setup.sh`` builds llama.cpp without AMX, so they stay on there
    (the repacked weights are the fast path on AVX2);
    ``CHECKEVAL_EMBEDDED_EXTRA_BUFFERS=1`` (or ``0``) decides instead."""
    forced = os.environ.get(EXTRA_BUFFERS_ENV, "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    try:
        import llama_cpp

        if b"AMX" not in llama_cpp.llama_print_system_info():
            return True
    except Exception:  # noqa: BLE001 - no llama.cpp: nothing to protect
        return True
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return " amx_tile" not in f.read()
    except OSError:
        return True


@contextlib.contextmanager
def llama_model_defaults() -> Iterator[None]:
    """While active, every ``Llama`` created (here or by ``llama_cpp.server`` in the same
    process) loads its weights without the extra buffer types when they are unsafe."""
    import llama_cpp.llama_cpp as lc

    if extra_buffers_safe():
        yield
        return
    original = lc.llama_model_default_params

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    lc.llama_model_default_params = defaults
    try:
        yield
    finally:
        lc.llama_model_default_params = original


@contextlib.contextmanager
def _parallel_context_defaults() -> Iterator[None]:
    """While active, a ``Llama`` context holds :data:`N_SEQ` sequences in one unified KV cache
    (``Llama()`` does not take these parameters): the questions' sequences then share the
    prefix's cells, so a question costs only its own tokens."""
    import llama_cpp.llama_cpp as lc

    original = lc.llama_context_default_params

    def defaults() -> Any:
        params = original()
        params.n_seq_max = N_SEQ
        params.kv_unified = True
        return params

    lc.llama_context_default_params = defaults
    try:
        yield
    finally:
        lc.llama_context_default_params = original


class _Engine:
    """One loaded model with its KV-cache bookkeeping (used under ``_LOCK`` only)."""

    def __init__(self, path: str) -> None:
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError as e:  # pragma: no cover - depends on the install
            raise ImportError("the embedded judge needs llama-cpp-python==0.3.36: "
                              "pip install -r requirements.txt") from e
        self.path = path
        with llama_model_defaults(), _parallel_context_defaults():
            self.llm = Llama(model_path=path, n_ctx=N_CTX, n_threads=N_THREADS,
                             n_threads_batch=N_THREADS, n_batch=512, logits_all=False,
                             seed=SEED, verbose=False)
        meta = self.llm.metadata
        self.name = meta.get("general.name", os.path.basename(path))
        template = meta.get("tokenizer.chat_template")
        eos_id = self.llm.token_eos()
        eos = self.llm.detokenize([eos_id]).decode("utf-8", "ignore") if eos_id >= 0 else ""
        self.formatter = Jinja2ChatFormatter(template=template, eos_token=eos or "<|im_end|>",
                                             bos_token="") if template else None
        self.yes_ids = self._single_tokens(YES_SPELLINGS)
        self.no_ids = self._single_tokens(NO_SPELLINGS)
        self.kv_tokens: list[int] = []  # tokens whose KV is cached, in segment order
        self.kv_bounds: list[int] = []  # segment end positions evaluated so far

    def _single_tokens(self, words: Sequence[str]) -> list[int]:
        ids = []
        for w in words:
            toks = self.llm.tokenize(w.encode(), add_bos=False, special=False)
            if len(toks) == 1 and toks[0] not in ids:
                ids.append(toks[0])
        return ids

    def tokenize(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def chat_prompt(self, system: str, user: str) -> str:
        messages = ([{"role": "system", "content": system}] if system else []) + \
                   [{"role": "user", "content": user}]
        if self.formatter is None:  # a GGUF without a chat template: plain layout
            return (system + "\n\n" if system else "") + user + "\nAnswer:"
        return self.formatter(messages=messages).prompt

    def segments(self, req: BinaryRequest) -> tuple[list[int], list[int]]:
        """Tokens of the whole prompt and the segment end positions (last = len(tokens))."""
        return self.segments_of(req.system, req.user_text, req.context)

    def segments_of(self, system: str, user: str,
                    parts: Sequence[str]) -> tuple[list[int], list[int]]:
        """As :meth:`segments` for a system text, a user text and its leading parts."""
        pre, post = self.chat_prompt(system, _SENTINEL).split(_SENTINEL)
        full = self.tokenize(pre + user + post)
        bounds = []
        acc = pre
        for part in parts:
            acc += part
            toks = self.tokenize(acc)
            # keep a boundary only where the prefix tokenizes as a prefix of the full prompt
            if 0 < len(toks) < len(full) and full[:len(toks)] == toks and \
                    (not bounds or len(toks) > bounds[-1]):
                bounds.append(len(toks))
        bounds.append(len(full))
        return full, bounds

    def eval_segments(self, tokens: list[int], bounds: list[int], reuse: bool = True,
                      logits: bool = True) -> int:
        """Evaluate ``tokens`` segment by segment, reusing cached leading segments.

        The last segment is evaluated again even when cached, for its next-token logits,
        unless ``logits`` is False (a shared prefix whose continuations follow).
        Returns the number of tokens actually evaluated now.
        """
        if len(tokens) > N_CTX:
            raise ValueError(f"the prompt has {len(tokens)} tokens, more than the context "
                             f"window of {N_CTX} (set CHECKEVAL_EMBEDDED_N_CTX)")
        start_idx = 0  # index into bounds of the first segment to evaluate
        if reuse:
            for j, b in enumerate(bounds if not logits else bounds[:-1]):
                if j < len(self.kv_bounds) and self.kv_bounds[j] == b and \
                        self.kv_tokens[:b] == tokens[:b]:
                    start_idx = j + 1
                else:
                    break
        pos = bounds[start_idx - 1] if start_idx else 0
        if not reuse:
            self.llm.reset()
            self.llm.eval(tokens)
            self.kv_tokens, self.kv_bounds = list(tokens), [len(tokens)]
            return len(tokens)
        self.llm.n_tokens = pos  # eval() drops cached KV cells at positions >= n_tokens
        self.kv_tokens = self.kv_tokens[:pos]
        self.kv_bounds = self.kv_bounds[:start_idx]
        if start_idx == len(bounds):  # all cached: no eval() to drop the cells beyond
            import llama_cpp

            llama_cpp.llama_memory_seq_rm(self.llm._ctx.memory, 0, pos, -1)
        for b in bounds[start_idx:]:
            self.llm.eval(tokens[pos:b])
            self.kv_tokens.extend(tokens[pos:b])
            self.kv_bounds.append(b)
            pos = b
        return len(tokens) - (bounds[start_idx - 1] if start_idx else 0)

    def eval_parallel(self, tokens: list[int], bounds: list[int],
                      suffixes: Sequence[list[int]]) -> tuple[list[np.ndarray], int]:
        """The shared prefix ``tokens`` (segment ends ``bounds``) in sequence 0, then each
        suffix as sequence 1, 2, … in one batch; the next-token logits after each suffix and
        the number of tokens evaluated now. The suffixes' cells are dropped afterwards, the
        prefix stays cached for the next call."""
        import llama_cpp

        total = sum(len(s) for s in suffixes)
        if not 0 < len(suffixes) < N_SEQ or total > self.llm.n_batch or \
                len(tokens) + total > N_CTX or not all(suffixes):
            raise ValueError("the questions do not fit one batch")
        n = self.eval_segments(tokens, bounds, reuse=True, logits=False)
        mem = self.llm._ctx.memory
        batch = self.llm._batch.batch
        last: list[int] = []
        k = 0
        try:
            for seq, suffix in enumerate(suffixes, start=1):
                llama_cpp.llama_memory_seq_cp(mem, 0, seq, -1, -1)
                for j, t in enumerate(suffix):
                    batch.token[k] = t
                    batch.pos[k] = len(tokens) + j
                    batch.n_seq_id[k] = 1
                    batch.seq_id[k][0] = seq
                    batch.logits[k] = j == len(suffix) - 1
                    k += 1
                last.append(k - 1)
            batch.n_tokens = k
            self.llm._ctx.decode(self.llm._batch)
            n_vocab = self.llm.n_vocab()
            out = [np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self.llm.ctx, i),
                                         shape=(n_vocab,)).astype(np.float64) for i in last]
        finally:
            for seq in range(1, len(suffixes) + 1):
                llama_cpp.llama_memory_seq_rm(mem, seq, -1, -1)
        return out, n + total

    def last_logits(self) -> np.ndarray:
        import llama_cpp

        ptr = llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.llm.n_vocab(),)).astype(np.float64)

    def stop_ids(self) -> set[int]:
        """End-of-generation tokens: EOS and the chat template's end-of-turn markers."""
        ids = {self.llm.token_eos()}
        for marker in ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<end_of_turn>"):
            t = self.tokenize(marker)
            if len(t) == 1:
                ids.add(t[0])
        return ids

    def forget_kv(self) -> None:
        """After a high-level call (generation) our segment bookkeeping no longer holds."""
        self.kv_tokens, self.kv_bounds = [], []


def _engine(variant: str) -> _Engine:
    path = str(model_path(variant))
    eng = _ENGINES.get(path)
    if eng is None:
        eng = _ENGINES[path] = _Engine(path)
    return eng


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    m = logits.max()
    return logits - (m + math.log(np.exp(logits - m).sum()))


def _binary_result(eng: _Engine, logits: np.ndarray, tokens_in: int,
                   latency_ms: float) -> BinaryResult:
    """Yes/No from the next-token logits: p(Yes) over every single-token spelling."""
    lp = _log_softmax(logits)
    p_y = float(np.exp(lp[eng.yes_ids]).sum()) if eng.yes_ids else 0.0
    p_n = float(np.exp(lp[eng.no_ids]).sum()) if eng.no_ids else 0.0
    top = int(np.argmax(lp))
    raw = eng.llm.detokenize([top]).decode("utf-8", "ignore")
    mass = p_y + p_n
    p_yes = p_y / mass if mass > 0 else None
    verdict = "invalid" if p_yes is None else ("yes" if p_yes >= 0.5 else "no")
    return BinaryResult(verdict=verdict, p_yes=p_yes, raw=raw, mode="logprob",
                        tokens_in=tokens_in, tokens_out=1, yes_no_mass=mass,
                        latency_ms=latency_ms)


class EmbeddedJudge:
    """The default judge: llama.cpp in process, yes/no from logits with prefix reuse."""

    def __init__(self, parsed: Any, reuse: bool = True, parallel: bool | None = None,
                 **params: Any) -> None:
        self.variant = getattr(parsed, "variant", "")
        self.spec = "embedded" + (f":{self.variant}" if self.variant else "")
        self.reuse = reuse
        # an item's questions as parallel sequences in one batch (needs ``reuse``). Off by
        # default: llama.cpp rounds a row differently in a larger batch, so p(Yes) would depend
        # on which questions are asked together (up to 0.035 apart; a resumed run would not
        # reproduce an uninterrupted one) for about 8 % less CPU per item (docs/benchmarks.md).
        # CHECKEVAL_EMBEDDED_PARALLEL=1 switches it on.
        if parallel is None:
            parallel = os.environ.get("CHECKEVAL_EMBEDDED_PARALLEL", "").strip() == "1"
        self.parallel = parallel and reuse
        self.params = params
        pkg = VARIANTS[self.variant]
        model = os.environ.get("CHECKEVAL_EMBEDDED_MODEL") or pkg.file_name
        # batch_size: the wrapper hands over an item's questions in one call, so they can be
        # evaluated side by side
        self.capabilities = Capabilities(logprobs=True, prefix_reuse=True, max_concurrency=1,
                                         local=True, model=os.path.basename(model),
                                         batch_size=N_SEQ - 1, parallel_sequences=True)
        self.tokens_evaluated = 0  # prompt tokens actually computed (reuse makes it smaller)

    @staticmethod
    def order(requests: Sequence[BinaryRequest]) -> list[int]:
        """Indices sorted so requests sharing context parts are adjacent (stable)."""
        return sorted(range(len(requests)), key=lambda i: (requests[i].system,
                                                          requests[i].context))

    def binary(self, requests: Sequence[BinaryRequest]) -> list[BinaryResult]:
        results: list[BinaryResult | None] = [None] * len(requests)
        with _LOCK:
            eng = _engine(self.variant)
            todo: list[tuple[int, list[int], list[int]]] = []
            for i in self.order(requests):
                t0 = time.perf_counter()
                try:
                    tokens, bounds = eng.segments(requests[i])
                except Exception as e:  # noqa: BLE001 - a failure is a result, not a crash
                    results[i] = BinaryResult(verdict="invalid", error=f"embedded: {e}",
                                              latency_ms=(time.perf_counter() - t0) * 1000)
                    continue
                todo.append((i, tokens, bounds))
            for group in self._batches(todo, eng) if self.parallel else [[t] for t in todo]:
                if len(group) > 1 and self._answer_parallel(eng, group, results):
                    continue
                for i, tokens, bounds in group:
                    t0 = time.perf_counter()
                    try:
                        self.tokens_evaluated += eng.eval_segments(tokens, bounds, self.reuse)
                        logits = eng.last_logits()
                    except Exception as e:  # noqa: BLE001 - a failure is a result, not a crash
                        eng.forget_kv()
                        results[i] = BinaryResult(verdict="invalid", error=f"embedded: {e}",
                                                  latency_ms=(time.perf_counter() - t0) * 1000)
                        continue
                    results[i] = _binary_result(eng, logits, len(tokens),
                                                (time.perf_counter() - t0) * 1000)
        return [r for r in results if r is not None]

    def prompt_segments(self, req: BinaryRequest | GenerateRequest) -> tuple[list[int], list[int]]:
        """The tokens this judge evaluates for ``req`` and the segment ends it caches (the
        last = the whole prompt), counted with the model's own tokenizer without loading its
        weights: what a cost estimate reads (``runs/estimate.py``) to count prompt tokens
        after prefix reuse. A generate request outside the segment path gets one segment."""
        vocab = _vocab(self.variant)
        if isinstance(req, BinaryRequest):
            if not self.reuse:
                tokens, _ = vocab.segments_of(req.system, req.user_text, ())
                return tokens, [len(tokens)]
            return vocab.segments_of(req.system, req.user_text, req.context)
        system, user = _split_system(req.messages)
        if _short_path(req):
            parts = [p for p in req.shared_parts if p] if self.reuse else []
            if parts and not user.startswith("".join(parts)):
                parts = []
            return vocab.segments_of(system, user, parts)
        tokens = vocab.tokenize(vocab.chat_prompt(system, user))
        return tokens, [len(tokens)]

    @staticmethod
    def _batches(todo: list[tuple[int, list[int], list[int]]],
                 eng: _Engine) -> list[list[tuple[int, list[int], list[int]]]]:
        """Runs of adjacent requests with the same leading segments (an item's questions),
        cut so that each fits one batch of sequences."""
        out: list[list[tuple[int, list[int], list[int]]]] = []
        key: Any = None
        size = 0
        for t in todo:
            _, tokens, bounds = t
            k = (bounds[:-1], tokens[:bounds[-2]]) if len(bounds) > 1 else None
            n = len(tokens) - bounds[-2] if k else 0
            if k is None or k != key or len(out[-1]) >= N_SEQ - 1 or \
                    size + n > eng.llm.n_batch or bounds[-2] + size + n > N_CTX:
                out.append([])
                size = 0
            out[-1].append(t)
            key = k
            size += n
        return out

    def _answer_parallel(self, eng: _Engine, group: list[tuple[int, list[int], list[int]]],
                         results: list[BinaryResult | None]) -> bool:
        """Answer ``group`` (same leading segments) in one batch of sequences; False when
        llama.cpp refused it (the caller then answers one by one)."""
        t0 = time.perf_counter()
        _, tokens, bounds = group[0]
        prefix = bounds[-2]
        try:
            logits, n = eng.eval_parallel(tokens[:prefix], bounds[:-1],
                                          [t[prefix:] for _, t, _ in group])
        except Exception:  # noqa: BLE001 - e.g. no KV slot for the batch: one by one
            eng.forget_kv()
            return False
        self.tokens_evaluated += n
        latency = (time.perf_counter() - t0) * 1000 / len(group)  # the batch's share
        for (i, toks, _), lg in zip(group, logits):
            results[i] = _binary_result(eng, lg, len(toks), latency)
        return True

    def _short_greedy(self, eng: _Engine, req: GenerateRequest) -> GenerateResult:
        """Greedy decoding on the segment cache: the request's shared parts (article, judged
        text) are evaluated once for every request that shares them, as in :meth:`binary`.
        Used for short deterministic answers (Likert scores, grouped Yes/No lines)."""
        t0 = time.perf_counter()
        system, user = _split_system(req.messages)
        parts = [p for p in req.shared_parts if p] if self.reuse else []
        if parts and not user.startswith("".join(parts)):
            parts = []  # the hint does not match the message: no segment boundaries
        tokens, bounds = eng.segments_of(system, user, parts)
        self.tokens_evaluated += eng.eval_segments(tokens, bounds, self.reuse)
        stop = eng.stop_ids()
        first: dict[str, float] | None = None
        gen: list[int] = []
        for step in range(req.max_tokens):
            lp = _log_softmax(eng.last_logits())
            if step == 0 and req.top_logprobs > 0:
                first = {}
                for t in np.argsort(lp)[::-1][: req.top_logprobs]:
                    tok = eng.llm.detokenize([int(t)]).decode("utf-8", "ignore")
                    first[tok] = max(first.get(tok, -1e9), float(lp[t]))
            nxt = int(np.argmax(lp))
            if nxt in stop or len(tokens) + len(gen) + 1 >= N_CTX:
                break
            gen.append(nxt)
            eng.llm.eval([nxt])  # beyond the cached segments: dropped by the next request
        text = eng.llm.detokenize(gen).decode("utf-8", "ignore")
        return GenerateResult(text=text, tokens_in=len(tokens), tokens_out=len(gen),
                              latency_ms=(time.perf_counter() - t0) * 1000,
                              first_token_logprobs=first)

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]:
        out = []
        with _LOCK:
            eng = _engine(self.variant)
            for req in requests:
                t0 = time.perf_counter()
                messages = [{"role": r, "content": c} for r, c in req.messages]
                first: dict[str, float] | None = None
                if req.shared_parts and not req.json_mode and not req.grammar \
                        and req.temperature == 0 \
                        and req.max_tokens <= SHORT_ANSWER_TOKENS:
                    try:
                        out.append(self._short_greedy(eng, req))
                    except Exception as e:  # noqa: BLE001 - failures are data
                        eng.forget_kv()
                        out.append(GenerateResult(error=f"embedded: {e}",
                                                  latency_ms=(time.perf_counter() - t0) * 1000))
                    continue
                try:
                    if req.top_logprobs > 0:
                        prompt = eng.tokenize(eng.chat_prompt(
                            *(_split_system(req.messages))))
                        eng.eval_segments(prompt, [len(prompt)], reuse=False)
                        lp = _log_softmax(eng.last_logits())
                        best = np.argsort(lp)[::-1][: req.top_logprobs]
                        first = {}
                        for t in best:
                            tok = eng.llm.detokenize([int(t)]).decode("utf-8", "ignore")
                            first[tok] = max(first.get(tok, -1e9), float(lp[t]))
                    kw: dict[str, Any] = {}
                    if req.grammar:
                        kw["grammar"] = _grammar(req.grammar)
                    elif req.json_mode:
                        kw["response_format"] = {"type": "json_object"}
                    eng.forget_kv()
                    resp = eng.llm.create_chat_completion(
                        messages=messages, temperature=req.temperature,
                        max_tokens=req.max_tokens,
                        seed=SEED if req.seed is None else req.seed, **kw)
                    eng.forget_kv()
                    usage = resp.get("usage", {})
                    self.tokens_evaluated += usage.get("prompt_tokens", 0)
                    out.append(GenerateResult(
                        text=resp["choices"][0]["message"]["content"] or "",
                        tokens_in=usage.get("prompt_tokens", 0),
                        tokens_out=usage.get("completion_tokens", 0),
                        latency_ms=(time.perf_counter() - t0) * 1000,
                        first_token_logprobs=first))
                except Exception as e:  # noqa: BLE001 - failures are data
                    eng.forget_kv()
                    out.append(GenerateResult(error=f"embedded: {e}",
                                              latency_ms=(time.perf_counter() - t0) * 1000))
        return out


def _short_path(req: GenerateRequest) -> bool:
    """Whether :meth:`EmbeddedJudge.generate` answers ``req`` greedily on the segment cache
    (the same test as in ``generate``)."""
    return bool(req.shared_parts) and not req.json_mode and not req.grammar \
        and req.temperature == 0 and req.max_tokens <= SHORT_ANSWER_TOKENS


class _Vocab:
    """The model's tokenizer and chat template without its weights (``vocab_only``): loads
    in a fraction of a second, so a page can count a run's tokens before it starts. It
    shares :class:`_Engine`'s prompt layout and segmenting code, so both count alike."""

    def __init__(self, path: str) -> None:
        from llama_cpp import Llama
        from llama_cpp._utils import suppress_stdout_stderr
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        with suppress_stdout_stderr(disable=False):  # llama.cpp logs its context even here
            self.llm = Llama(model_path=path, vocab_only=True, verbose=False)
        template = self.llm.metadata.get("tokenizer.chat_template")
        eos_id = self.llm.token_eos()
        eos = self.llm.detokenize([eos_id]).decode("utf-8", "ignore") if eos_id >= 0 else ""
        self.formatter = Jinja2ChatFormatter(template=template, eos_token=eos or "<|im_end|>",
                                             bos_token="") if template else None
        self._memo: dict[str, list[int]] = {}

    def tokenize(self, text: str) -> list[int]:
        # the same article prefix is tokenized for every question of every item: memoised
        toks = self._memo.get(text)
        if toks is None:
            if len(self._memo) > 4096:
                self._memo.clear()
            toks = self._memo[text] = self.llm.tokenize(text.encode("utf-8"), add_bos=False,
                                                        special=True)
        return toks

    chat_prompt = _Engine.chat_prompt
    segments_of = _Engine.segments_of


_VOCABS: dict[str, _Vocab] = {}


def _vocab(variant: str) -> _Vocab:
    path = str(model_path(variant))
    with _LOCK:
        if path not in _VOCABS:
            _VOCABS[path] = _Vocab(path)
        return _VOCABS[path]


@functools.lru_cache(maxsize=32)
def _grammar(text: str) -> Any:
    """A compiled GBNF grammar (compiling takes a few ms; prompts reuse a handful)."""
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)


def _split_system(messages: Sequence[tuple[str, str]]) -> tuple[str, str]:
    system = "\n".join(c for r, c in messages if r == "system")
    user = "\n\n".join(c for r, c in messages if r != "system")
    return system, user
