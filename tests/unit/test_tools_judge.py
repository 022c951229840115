"""The LLM judge against a local server speaking the Messages API, through the real anthropic SDK.

The server (http.server in a thread, 127.0.0.1, free port) replays a script per test: proper message JSON,
429 with retry-after, 500s, slow replies. It stands in for the paid remote API only.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from rlar.standins.anthropic_server import MessagesServer
from rlar.tools import ToolExecutor, ToolInput, builtin_specs, make_tool
from rlar.tools.base import ToolSpec
from rlar.tools.judge import parse_judge_score, retry_after_seconds

pytestmark = pytest.mark.usefixtures("no_ambient_anthropic")


def judge_spec(server: MessagesServer | None = None, **params: Any) -> ToolSpec:
    base = next(s for s in builtin_specs() if s.name == "llm_judge")
    extra = {"base_url": server.url} if server else {}
    return base.replace(
        params={**base.params, "model": "judge-test", "backoff_base_s": 0.05, **extra, **params}
    )


SAMPLE = ToolInput("What is the capital of France?", "Paris.", "Paris")


async def test_without_key_or_base_url_the_judge_abstains():
    res = await make_tool(judge_spec()).score(SAMPLE)
    assert res.status == "abstain" and res.reason == "no judge configured"


async def test_judge_sends_the_rubric_prompt_and_maps_the_score(messages_server, monkeypatch):
    monkeypatch.setenv("TEST_JUDGE_KEY", "sk-test-123")
    messages_server.script.append({"text": "Correct and concise.\n**Score:** 8"})
    tool = make_tool(
        judge_spec(messages_server, api_key_env="TEST_JUDGE_KEY", rubric="Be harsh on verbosity.")
    )
    res = await tool.score(SAMPLE)
    assert res.status == "ok" and res.score == pytest.approx(0.8) and res.details["judge_score"] == 8
    body, headers = messages_server.requests[0], messages_server.headers_seen[0]
    assert body["model"] == "judge-test" and body["max_tokens"] == 512
    user = body["messages"][0]["content"]
    assert "Be harsh on verbosity." in user and "Paris." in user and "capital of France" in user
    assert "Score: N" in body["system"]
    assert "anthropic-version" in headers
    assert "sk-test-123" in headers.get("x-api-key", "") + headers.get("authorization", "")
    await tool.aclose()


async def test_429_with_retry_after_is_honoured_then_succeeds(messages_server):
    messages_server.script.extend(
        [{"status": 429, "etype": "rate_limit_error", "headers": {"retry-after": "1"}}, {"text": "Score: 10"}]
    )
    tool = make_tool(judge_spec(messages_server))
    t0 = time.perf_counter()
    res = await tool.score(SAMPLE)
    elapsed = time.perf_counter() - t0
    assert res.status == "ok" and res.score == 1.0 and res.details["attempts"] == ["HTTP 429"]
    assert elapsed >= 1.0 and len(messages_server.requests) == 2
    await tool.aclose()


async def test_persistent_500_abstains_after_bounded_retries(messages_server):
    messages_server.default = {"status": 500}
    tool = make_tool(judge_spec(messages_server, max_retries=2))
    res = await tool.score(SAMPLE)
    assert res.status == "abstain" and res.reason == "judge failed after 3 attempts: HTTP 500"
    assert len(messages_server.requests) == 3
    await tool.aclose()


async def test_a_500_then_success_recovers(messages_server):
    messages_server.script.extend([{"status": 529, "etype": "overloaded_error"}, {"text": "Score: 3"}])
    tool = make_tool(judge_spec(messages_server))
    res = await tool.score(SAMPLE)
    assert res.status == "ok" and res.score == pytest.approx(0.3) and res.details["attempts"] == ["HTTP 529"]
    await tool.aclose()


async def test_slow_reply_past_the_timeout_abstains_without_retry(messages_server):
    messages_server.script.append({"text": "Score: 9", "delay": 3.0})
    tool = make_tool(judge_spec(messages_server, timeout_s=0.5))
    t0 = time.perf_counter()
    res = await tool.score(SAMPLE)
    assert res.status == "abstain" and res.reason == "judge timeout after 0.5s"
    assert time.perf_counter() - t0 < 2.0 and len(messages_server.requests) == 1
    await tool.aclose()


async def test_client_errors_are_errors_not_retried(messages_server):
    messages_server.default = {"status": 400, "etype": "invalid_request_error"}
    tool = make_tool(judge_spec(messages_server))
    res = await tool.score(SAMPLE)
    assert (
        res.status == "error"
        and res.reason.startswith("judge HTTP 400")
        and len(messages_server.requests) == 1
    )
    await tool.aclose()


async def test_unparseable_or_out_of_scale_replies_abstain(messages_server):
    messages_server.script.extend([{"text": "I refuse to grade this."}, {"text": "Score: 15"}])
    tool = make_tool(judge_spec(messages_server, repair=False))
    first = await tool.score(SAMPLE)
    second = await tool.score(SAMPLE)
    assert first.status == "abstain" and "could not parse" in first.reason
    assert second.status == "abstain" and "outside scale" in second.reason
    await tool.aclose()


async def test_a_reply_without_a_score_is_asked_again_once_then_abstains(messages_server):
    messages_server.script.extend(
        [{"text": "I refuse to grade this."}, {"text": "Score: 8"}, {"text": "Hmm."}, {"text": "Score: 15"}]
    )
    tool = make_tool(judge_spec(messages_server))
    repaired = await tool.score(SAMPLE)
    refused = await tool.score(SAMPLE.__class__("Other?", "Paris.", "Paris"))
    assert repaired.status == "ok" and repaired.score == pytest.approx(0.8) and repaired.details["repaired"]
    # The repair turn shows the model its own reply and asks for the score line alone.
    second = messages_server.requests[1]["messages"]
    assert second[1] == {"role": "assistant", "content": "I refuse to grade this."}
    assert "Score: N" in second[2]["content"]
    assert (
        refused.status == "abstain"
        and "outside scale" in refused.reason
        and "after one repair" in refused.reason
    )
    assert len(messages_server.requests) == 4
    await tool.aclose()


async def test_concurrency_is_capped_by_the_semaphore(messages_server):
    messages_server.default = {"text": "Score: 5", "delay": 0.2}
    tool = make_tool(judge_spec(messages_server, max_concurrency=2))
    results = await tool.score_batch([SAMPLE] * 6)
    assert all(r.score == pytest.approx(0.5) for r in results)
    assert messages_server.max_in_flight == 2
    await tool.aclose()


async def test_judge_runs_in_process_under_the_executor(messages_server):
    async with ToolExecutor(timeout_s=10) as ex:
        res = await ex.score_batch(judge_spec(messages_server), [SAMPLE, ToolInput("q", "other", None)])
        assert ex.stats.spawns == 0
    assert [r.score for r in res] == [pytest.approx(0.7)] * 2


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("Reasoning...\nScore: 7", 7.0),
        ("**Score:** 9/10", 9.0),
        ("score = 3.5", 3.5),
        ("Score: 2\nOn reflection, Score: 6", 6.0),
        ("I would give it 8/10.", 8.0),
        ("No number at all", None),
    ],
)
def test_parse_judge_score(text, score):
    assert parse_judge_score(text) == score


def test_retry_after_parses_milliseconds_seconds_and_dates():
    assert retry_after_seconds({"retry-after-ms": "250"}) == pytest.approx(0.25)
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after_seconds({}) is None


async def test_the_configured_calls_in_flight_all_reach_the_endpoint_on_one_pooled_client(messages_server):
    messages_server.default = {"text": "Score: 5", "delay": 1.0}
    tool = make_tool(judge_spec(messages_server, max_concurrency=16))
    results = await tool.score_batch([SAMPLE] * 16)
    assert all(r.score == pytest.approx(0.5) for r in results)
    assert messages_server.max_in_flight == 16
    await tool.aclose()


async def test_the_rate_limit_spaces_calls_out(messages_server):
    tool = make_tool(judge_spec(messages_server, max_concurrency=2, rate_limit_per_s=20))
    t0 = time.perf_counter()
    results = await tool.score_batch([SAMPLE] * 10)
    elapsed = time.perf_counter() - t0
    assert all(r.status == "ok" for r in results)
    assert elapsed >= (10 - 2) / 20  # a burst of 2, then one call per 1/20 s
    await tool.aclose()


async def test_a_connection_refused_is_retried_then_abstains():
    from bus.embedded import free_port

    port = free_port()  # nothing listens there
    tool = make_tool(judge_spec(None, base_url=f"http://127.0.0.1:{port}", max_retries=1))
    res = await tool.score(SAMPLE)
    assert res.status == "abstain" and res.reason.startswith(
        "judge failed after 2 attempts: connection error"
    )
    await tool.aclose()
