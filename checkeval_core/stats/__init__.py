"""The statistics floor: one implementation per statistic, pure functions, below every
package that computes a figure (``analysis/``, ``annotation/``, ``checklists/``, ``runs/``).

* :mod:`~checkeval_core.stats.bootstrap` — the group bootstrap (one draw rule), the paired
  bootstrap, percentile and Wilson intervals, shares, the small-sample rule
  (:data:`~checkeval_core.stats.bootstrap.MIN_GROUPS`), the minimum detectable effect and the
  verdict sentence of a Δ;
* :mod:`~checkeval_core.stats.correlation` — correlations with human scores at three levels,
  per-group correlations;
* :mod:`~checkeval_core.stats.intervals` — closed-form intervals: Fisher's z of a correlation,
  Student's t of a mean;
* :mod:`~checkeval_core.stats.significance` — Wilcoxon's signed-rank test and
  Benjamini–Hochberg, Fisher's exact test, Spearman's ρ with its p-value;
* :mod:`~checkeval_core.stats.agreement` — Krippendorff's α, Cohen's and Fleiss' κ;
* :mod:`~checkeval_core.stats.ranking` — Bradley–Terry / Elo, rank correlations;
* :mod:`~checkeval_core.stats.values` — undefined numbers (NaN / None with a reason) and how
  they print.
* :mod:`~checkeval_core.stats.variance` — a small sample's variance moderated toward the
  pooled variance of like samples (the calibrated held-out-mean interval);
* :mod:`~checkeval_core.stats.draws` — seeded sampling draws (a sample of items, the items a
  person labels, a simulation's draws): one seed rule.

It imports numpy, scipy, pandas, statsmodels, scikit-learn and krippendorff only — never
another package of the project — and is the only package that imports ``scipy.stats``,
``sklearn.metrics`` or ``krippendorff`` (``tests/test_stats_pure.py``).
"""
