"""Site adapters: page structure lives here and nowhere else (see ``base`` for what they return)."""

from rlar.retrieval.adapters.base import EXPECTED_FIELDS, ListingItem, ModelFacts, parse_count, parse_number
from rlar.retrieval.adapters.hub import HubAdapter
from rlar.retrieval.adapters.leaderboard import LeaderboardAdapter, LeaderboardTable

__all__ = [
    "EXPECTED_FIELDS",
    "HubAdapter",
    "LeaderboardAdapter",
    "LeaderboardTable",
    "ListingItem",
    "ModelFacts",
    "parse_count",
    "parse_number",
]
