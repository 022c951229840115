"""Web retrieval of reward models: find, vet, deploy and validate them from a model hub with a browser.

Modules, in pipeline order: ``config`` (settings and the request), ``browser`` (a Chromium pool through
Playwright), ``adapters`` (page structure of the hub and of leaderboards), ``ranking`` (filters, task fit,
quality signals), ``deploy`` (fetch and vet weights), ``probes`` and ``validate`` (the gate before
registration), ``records`` (the evidence trail) and ``report`` (its text form), ``pipeline`` (one
retrieval end to end) and ``mirror`` (a local hub-shaped site for tests and the demo). Importing this
package is light: Playwright, torch and transformers are imported only when used.
"""

from rlar.retrieval.config import (
    BrowserConfig,
    FetchConfig,
    RankingConfig,
    RetrievalConfig,
    RetrievalRequest,
    SearchConfig,
    ValidationConfig,
)
from rlar.retrieval.records import Candidate, PageEvidence, RetrievalRecord, load_record

__all__ = [
    "BrowserConfig",
    "Candidate",
    "FetchConfig",
    "PageEvidence",
    "RankingConfig",
    "RetrievalConfig",
    "RetrievalRecord",
    "RetrievalRequest",
    "SearchConfig",
    "ValidationConfig",
    "load_record",
]
