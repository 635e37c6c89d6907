"""Judges: one batch-in/batch-out protocol over several LLM backends.

Use :func:`checkeval_core.judges.registry.get_judge` with a spec string (``embedded``,
``openai:<model>``, ``openai-compat:<base_url>#<model>``, ``vllm:<model>``, ``fake``). Each
backend is declared once in ``spec.py`` (spec fields, key variables, its class); the one
wrapper in ``cached.py`` gives every backend the cache, retries, batching and concurrency.
"""

from checkeval_core.judges.base import (  # noqa: F401
    BinaryRequest,
    BinaryResult,
    Capabilities,
    GenerateRequest,
    GenerateResult,
    Judge,
)
