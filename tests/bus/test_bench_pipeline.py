"""``rlar bench pipeline``'s judge endpoint: it scores by similarity after its latency and counts the calls in flight
(the ways run side by side: tests/long/test_bench_pipeline_trl_ways.py)."""

from __future__ import annotations

import asyncio
import json
import urllib.request

from rlar.benchmarks.judge_endpoint import JudgeEndpoint


def _ask(url: str, response: str) -> str:
    user = f"# Rubric\nr\n\n# Query\n1+1=\n\n# Reference answer\n2\n\n# Response to evaluate\n{response}\n\nEnd with"
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": user}]}).encode()
    req = urllib.request.Request(url + "/v1/messages", body, {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return str(json.loads(r.read())["content"][0]["text"])


async def test_the_judge_endpoint_scores_by_similarity_after_its_latency_and_counts_calls_in_flight() -> None:
    with JudgeEndpoint(delay_s=0.5) as judge:
        assert _ask(judge.url, "2") == "Score: 10.00" and _ask(judge.url, "xyz") == "Score: 0.00"
        assert judge.stats() == {"calls": 2, "in_flight": 0, "max_in_flight": 1}
        judge.reset()
        await asyncio.gather(*(asyncio.to_thread(_ask, judge.url, str(i)) for i in range(5)))
        assert judge.stats() == {"calls": 5, "in_flight": 0, "max_in_flight": 5}
