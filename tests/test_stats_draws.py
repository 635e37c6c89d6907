"""Seeded sampling draws go through one helper of the statistics floor (``stats/draws.py``):
its generator is numpy's ``default_rng(seed)`` unchanged, so the align sample and the
calibration's labelled items are the ones they were before the helper (pinned below); no seed
or a negative one is refused; and no module outside ``stats/`` makes its own generator."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from checkeval_core.analysis.align import stratified_sample
from checkeval_core.analysis.calibrate import draw_labelled
from checkeval_core.stats.draws import pick_without_replacement, sampling_rng, shuffled

CORE = Path(__file__).resolve().parent.parent / "checkeval_core"


def test_the_generator_is_numpys_default_rng_of_the_seed():
    for seed in (0, 3, 2**40):
        a, b = sampling_rng(seed), np.random.default_rng(seed)
        assert list(shuffled(a, 9)) == list(b.permutation(9))
        assert list(pick_without_replacement(a, 20, 5)) == list(b.choice(20, 5, replace=False))
    assert list(shuffled(sampling_rng(np.int64(4)), 6)) == list(shuffled(sampling_rng(4), 6))
    assert list(shuffled(sampling_rng(1), 30)) != list(shuffled(sampling_rng(2), 30))


def test_a_draw_without_a_usable_seed_is_refused():
    with pytest.raises(TypeError, match="integer seed"):
        sampling_rng(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="integer seed"):
        sampling_rng(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="≥ 0"):
        sampling_rng(-1)
    with pytest.raises(ValueError, match="cannot pick 4 of 3"):
        pick_without_replacement(sampling_rng(0), 3, 4)


def test_the_align_sample_and_the_labelled_items_are_the_same_as_before():
    items = [{"item_pk": i, "group": f"g{i % 5}", "system": f"s{i % 3}"} for i in range(30)]
    assert stratified_sample(items, 7, seed=3) == [14, 10, 3, 27, 16, 29, 25]
    assert stratified_sample(items, 12, seed=0) == [28, 17, 15, 21, 29, 13, 12, 10, 26, 24,
                                                     23, 22]
    df = pd.DataFrame([{"item_pk": i, "group": f"g{i % 6}", "system": f"s{i % 3}",
                        "human": 1.0, "metric": 0.5, "dimension": "d"} for i in range(36)])
    assert sorted(int(x) for x in draw_labelled(df, ["g0", "g1", "g2", "g3"], 3, seed=5)) == [
        0, 7, 8, 13, 18, 19, 20, 24, 26]
    assert sorted(int(x) for x in draw_labelled(df, None, 2, seed=0)) == [2, 7, 10, 21, 27, 35]


def test_no_module_outside_the_floor_makes_its_own_numpy_generator():
    pattern = re.compile(r"default_rng|np\.random\.(seed|choice|permutation|rand|RandomState)")
    outside = [f"{p.relative_to(CORE)}:{n}" for p in CORE.rglob("*.py")
               if p.parent.name != "stats" or p.parent.parent != CORE
               for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
               if pattern.search(line)]
    assert outside == []
