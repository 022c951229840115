"""Web retrieval of reward models: find, vet, deploy and validate them from a model hub with a browser.

Modules, in pipeline order: ``config`` (settings and the request), ``browser`` (a Chromium pool through
Playwright), ``adapters`` (page structure of the hub and of leaderboards), ``ranking`` and ``taskfit``
(filters, the task-fit gate, quality signals), ``hub_api`` and ``deploy`` (the hub's file API; fetch and
vet weights within a byte cap), ``probes`` and ``validate`` (the gate before registration), ``records``
(the evidence trail) and ``report`` (its text form), ``pipeline`` (one retrieval end to end). The local
hub-shaped site for tests and the demo is :mod:`rlar.standins.hub`, outside this package. Importing this
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
