"""The options a run accepts (its ``params``), in one place for the app, the CLI and the bench.

Prompt layout (``rocketeval``; the other methods keep their fixed layouts):

* ``include_definition`` — add the dimension's definition under the text being judged.
* ``include_reference`` — add the item's reference (e.g. SummEval's human summary) after the
  source; items without a reference are unchanged.

Wording: ``phrasing`` (an integer, default 0) — which rewording of the method's instructions
the judge is asked with (``prompts/judge.py`` ``BINARY_PHRASINGS`` for ``rocketeval``,
``prompts/methods.py`` ``GROUPED_PHRASINGS`` for ``checkeval``; 0 is the default prompt, other
methods have only 0). The wording is part of every request's text, hence of its cache key: a
run with another phrasing asks the judge afresh. Runs of one checklist version that differ only
in ``phrasing`` measure each question's reliability (``analysis/reliability.py``). Sampling
seeds are not an option: binary answers are read from the first token's log-probabilities at
temperature 0, which a seed does not change.

Method options: ``aggregation`` (the run's primary aggregation; one of its method's
aggregations in :mod:`checkeval_core.runs.registry`), ``seal_units`` (SEAL: a dimension → ``sentence|pair|fact|whole``
override), ``seal_uniform_weights`` (SEAL: skip the weight request, weigh sub-dimensions
equally), ``instance`` (set for instance checklists).

Integrity: ``max_error_share`` (a number in [0, 1], default :data:`DEFAULT_MAX_ERROR_SHARE`,
or ``$CHECKEVAL_MAX_ERROR_SHARE``) — a run whose share of answers with a judge error
(transport/HTTP failures, not unparsable answers) is above it ends ``failed``.
Values given as text on the command line are read as JSON when they parse (``true``, ``3``,
``{"fluency": "sentence"}``), else kept as strings; a value that starts like JSON (``[``,
``{``, ``"``) must be valid JSON and goes through the bounded reader of every import
(:func:`checkeval_core.safeio.load_json_text`: nesting depth, duplicate keys, lone surrogates).

The other numbers a command takes (``--limit``, ``--bootstrap``, ``--tie-margin``,
``--epsilon``, ``--seed``, ``--docs``/``--queries``), raw bytes in a text option and the
aggregation ``analyze`` reads are checked here too (one rule per kind of option), so every
command, the CLI and the pages refuse the same values with the same message listing what is
valid.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from checkeval_core.fields import MAX_SEED, check_seed  # noqa: F401 - the seed rule
from checkeval_core.runs.registry import check_aggregation
from checkeval_core.runs.registry import method as method_entry
from checkeval_core.safeio import LIMITS, InputError, has_surrogate, load_json_text

RUN_OPTIONS: dict[str, type] = {
    "include_definition": bool,
    "include_reference": bool,
    "aggregation": str,
    "seal_units": dict,
    "seal_uniform_weights": bool,
    "instance": bool,
    "max_error_share": float,
    "phrasing": int,
}
# written by the run itself, ignored when comparing the options two runs were asked with
DERIVED = ("aggregation", "seal_weights", "bundle", "bundle_hash", "escalation")

# SEAL unit granularities a dimension can be given (runs/methods.py ``unit_kind``)
SEAL_UNIT_KINDS = ("sentence", "pair", "fact", "whole")
MAX_BOOTSTRAP = 100_000  # resamples for an interval; more only makes a command slower
# the benchmarks' sizes: enough for any real use, small enough that a typo (1e9) is refused
# up front instead of running out of memory or running for days
MAX_BENCH_DRAWS = 100_000
MAX_BENCH_DOCS = 10_000
MAX_SCALE_ANSWERS = 20_000_000
MAX_SCALE_ITEMS = 1_000_000

DEFAULT_MAX_ERROR_SHARE = 0.5
MAX_ERROR_SHARE_ENV = "CHECKEVAL_MAX_ERROR_SHARE"


def _share(value: Any, where: str) -> float:
    """A number in [0, 1] (bools refused), else a ValueError naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(str(value).strip())
        except ValueError:
            raise ValueError(f"{where}: expected a number between 0 and 1") from None
    value = float(value)
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise ValueError(f"{where}: expected a number between 0 and 1")
    return value


def max_error_share(params: dict[str, Any]) -> float:
    """The run's error threshold: its ``max_error_share`` param, else the environment, else
    the default."""
    if "max_error_share" in params:
        return _share(params["max_error_share"], "--param max_error_share")
    env = os.environ.get(MAX_ERROR_SHARE_ENV, "").strip()
    if env:
        return _share(env, f"${MAX_ERROR_SHARE_ENV}")
    return DEFAULT_MAX_ERROR_SHARE


def check_params(method: str, params: dict[str, Any]) -> None:
    """Refuse options that would make a run silently useless (ValueError naming the option):
    an aggregation the method does not compute, a bad error threshold."""
    agg = params.get("aggregation")
    valid = method_entry(method).aggregations
    if agg is not None and agg not in valid:
        raise ValueError(f"--param aggregation={agg}: method {method} has no such aggregation "
                         f"(valid: {', '.join(valid)})")
    if "max_error_share" in params:
        _share(params["max_error_share"], "--param max_error_share")
    if "phrasing" in params:
        n, ph = method_entry(method).phrasings, params["phrasing"]
        if isinstance(ph, bool) or not isinstance(ph, int) or not 0 <= ph < n:
            raise ValueError(f"--param phrasing={ph}: method {method} has phrasings 0 to {n - 1}"
                             if n > 1 else f"--param phrasing={ph}: method {method} has one "
                             "wording only (phrasing=0); rocketeval and checkeval have more")
    if "seal_units" in params:
        check_seal_units(params["seal_units"])


def check_seal_units(units: Any) -> dict[str, str]:
    """``{dimension: sentence|pair|fact|whole}``; a ValueError naming the entry otherwise."""
    if not isinstance(units, dict):
        raise ValueError("--param seal_units: expected an object {dimension: unit}, e.g. "
                         '{"fluency": "sentence"}')
    for dim, kind in units.items():
        if kind not in SEAL_UNIT_KINDS:
            shown = json.dumps(kind, ensure_ascii=False)[:40]
            raise ValueError(f"--param seal_units: {shown} for dimension {str(dim)[:60]!r} is "
                             f"not a unit (valid: {', '.join(SEAL_UNIT_KINDS)})")
    return units


def check_method(method: str) -> str:
    """A registered method's name, or ``--method: Unknown method 'x'. Available: …``."""
    try:
        method_entry(method)
    except ValueError as e:
        raise ValueError(f"--method: {e}") from None
    return method


def check_limit(limit: int | None, where: str = "--limit") -> int | None:
    """None (every item) or a whole number from 1 to the row limit of one import."""
    if limit is None:
        return None
    top = LIMITS["rows"]
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= top:
        raise ValueError(f"{where} {str(limit)[:30]}: give a positive number of items, at most "
                         f"{top:,} (or leave it out for every item)")
    return limit


def check_bootstrap(n: int, where: str = "--bootstrap") -> int:
    """0 (no intervals) or a number of resamples up to :data:`MAX_BOOTSTRAP`."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_BOOTSTRAP:
        raise ValueError(f"{where} {str(n)[:30]}: give 0 (no intervals) or a number of "
                         f"resamples from 1 to {MAX_BOOTSTRAP:,}")
    return n


def check_tie_margin(x: float, where: str = "--tie-margin", shown: str | None = None) -> float:
    """A finite score gap ≥ 0 below which two answers tie (``shown``: the value as the user
    typed it, for the message)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) \
            or x < 0:
        raise ValueError(f"{where} {shown if shown is not None else x}: give a finite score "
                         "gap ≥ 0 (0 = only equal scores tie; e.g. 0.1)")
    return float(x)


MAX_EPSILON = 1.0  # a change in an agreement coefficient; above 1 nothing is ever dropped


def check_epsilon(x: float, where: str = "--epsilon", shown: str | None = None) -> float:
    """A finite gain in agreement from 0 to :data:`MAX_EPSILON` that a drop must exceed."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) \
            or not 0 <= x <= MAX_EPSILON:
        raise ValueError(f"{where} {shown if shown is not None else x}: give a finite gain in "
                         f"agreement from 0 to {MAX_EPSILON:g} (e.g. 0.005)")
    return float(x)


def check_count(n: int, where: str, what: str, low: int = 1, top: int | None = None) -> int:
    """A whole number of ``what`` from ``low`` to ``top`` (default: the row limit of one
    import, :data:`checkeval_core.safeio.LIMITS`)."""
    top = LIMITS["rows"] if top is None else top
    if isinstance(n, bool) or not isinstance(n, int) or not low <= n <= top:
        raise ValueError(f"{where} {str(n)[:30]}: give {low:,} or more {what}, at most "
                         f"{top:,}")
    return n


def check_out_path(path: str, where: str = "--out") -> str:
    """A file a command will write after its work: checked before the work (its folder exists
    and is writable, it is not a folder), so an hour's benchmark is not lost at the end."""
    p = Path(path).expanduser()
    folder = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise ValueError(f"{where} {path}: is a folder; give a file name")
    if not folder.is_dir():
        raise ValueError(f"{where} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise ValueError(f"{where} {path}: cannot be written (no permission)")
    return path


def check_text_arg(value: str, where: str) -> str:
    """A command-line value the shell decoded: raw bytes that are not UTF-8 arrive as lone
    surrogates, which no name, file or database text can hold."""
    if has_surrogate(value):
        bad = next(ch for ch in value if 0xD800 <= ord(ch) <= 0xDFFF)
        byte = f" (the raw byte 0x{ord(bad) - 0xDC00:02X})" if 0xDC80 <= ord(bad) <= 0xDCFF \
            else ""
        raise ValueError(f"{where}: the value is not valid UTF-8 text{byte}; check the "
                         "shell's encoding")
    return value


def check_run_aggregation(method_name: str, aggregation: str | None,
                          where: str = "--aggregation") -> str | None:
    """``aggregation`` when the method's scores hold it (None = the run's own); a ValueError
    listing the method's aggregations otherwise."""
    if aggregation is None:
        return None
    method_entry(method_name)
    try:
        return check_aggregation(method_name, aggregation)
    except ValueError as e:
        raise ValueError(f"{where} {aggregation[:40]!r}: {e}") from None


def parse_params(pairs: list[str] | None) -> dict[str, Any]:
    """``["include_definition=true", "seal_units={...}"]`` → checked dict; a ValueError names
    the offending ``--param``."""
    out: dict[str, Any] = {}
    for p in pairs or []:
        if "=" not in p:
            raise ValueError(f"--param {p!r}: use KEY=VALUE")
        k, v = (x.strip() for x in p.split("=", 1))
        if k not in RUN_OPTIONS:
            raise ValueError(f"--param {k!r}: unknown option (known: {', '.join(RUN_OPTIONS)})")
        shown = v if len(v) <= 60 else v[:57] + "..."
        if has_surrogate(v):
            raise ValueError(f"--param {k}: the value is not valid text (a lone surrogate; "
                             "check the shell's encoding)")
        try:
            val = load_json_text(v, f"--param {k}")
        except InputError as e:
            if v[:1] in "[{\"":  # meant as JSON: say what is wrong with it
                raise ValueError(str(e)) from None
            val = v
        if RUN_OPTIONS[k] is float:
            val = _share(val, f"--param {k}={shown}")
        elif not isinstance(val, RUN_OPTIONS[k]) or isinstance(val, bool) is not (
                RUN_OPTIONS[k] is bool):
            raise ValueError(f"--param {k}={shown}: expected {RUN_OPTIONS[k].__name__}")
        if k == "seal_units":  # (an aggregation is checked against the run's method later)
            check_seal_units(val)
        out[k] = val
    return out


def requested(params: dict[str, Any]) -> dict[str, Any]:
    """The options a user asked for, without the ones a run writes itself."""
    return {k: v for k, v in params.items() if k not in DERIVED}


def options_text(params: str | dict[str, Any] | None) -> str:
    """A run's options as short ``key=value`` text for run lists ("" when none); the values a
    run computes itself (SEAL weights, bundle origin) are left out."""
    if isinstance(params, str):
        params = json.loads(params or "{}")
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted((params or {}).items())
                     if k not in ("seal_weights", "bundle", "bundle_hash", "escalation"))
