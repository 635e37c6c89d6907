"""Seeded sampling draws: which items a sample holds, which items a person labels, a
simulation's repeated draws. (The bootstrap's resamples have their own rule,
:func:`checkeval_core.stats.bootstrap.resample_index`.)

**Seed rule.** A draw takes one integer seed (≥ 0; the user's ``--seed``, 0 by default) and
makes one generator from it, ``numpy.random.default_rng(seed)`` (:func:`sampling_rng`), with
nothing else mixed in — no time, no task name, no process. The caller then draws from that one
generator in a fixed order over inputs it has put in a fixed order (sorted groups, systems,
item ids), so the same seed over the same input gives the same sample on every machine and
every run, and a changed seed gives an independent one. No seed means no draw: ``None`` is
refused, because a draw a person cannot repeat is not evidence.
"""

from __future__ import annotations

import numpy as np


def sampling_rng(seed: int) -> np.random.Generator:
    """The one generator of a seeded sampling draw (see the module's seed rule)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed {seed!r}: a sampling draw needs an integer seed")
    if seed < 0:
        raise ValueError(f"seed {seed}: give an integer ≥ 0")
    return np.random.default_rng(int(seed))


def shuffled(rng: np.random.Generator, n: int) -> np.ndarray:
    """Positions ``0 … n−1`` in a random order (one draw from ``rng``)."""
    return rng.permutation(n)


def pick_without_replacement(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """``k`` distinct positions out of ``0 … n−1``, in draw order (one draw from ``rng``)."""
    if not 0 <= k <= n:
        raise ValueError(f"cannot pick {k} of {n} without replacement")
    return rng.choice(n, k, replace=False)
