"""One import point for issue 14's ranking features (the name in the H4/H5 contract).

Imports of human preferences and reference ratings live in :mod:`checkeval_core.preferences`;
the list- and instance-level analysis in :mod:`checkeval_core.analysis.rankings`.
"""

from checkeval_core.analysis.rankings import (
    bradley_terry,
    elo_fit,
    judge_outcome,
    list_level,
    pair_agreement,
    pair_detail,
    pairs_report,
    query_answers,
    rank_correlation,
    rankings_report,
    score_matches,
    system_scores,
)
from checkeval_core.preferences import (
    PreferenceError,
    import_preferences,
    import_ratings,
    preferences,
    rating_sources,
    ratings,
)

__all__ = [
    "PreferenceError", "bradley_terry", "elo_fit", "import_preferences", "import_ratings",
    "judge_outcome", "list_level", "pair_agreement", "pair_detail", "pairs_report",
    "preferences", "query_answers", "rank_correlation", "rankings_report", "rating_sources",
    "ratings", "score_matches", "system_scores",
]
