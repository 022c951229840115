"""LLM judge: a rubric prompt to a language model (Messages API or OpenAI chat completions), the score parsed
from its reply.

Configuration (``spec.params``): ``api`` (``anthropic``: ``POST {base_url}/v1/messages``, the default;
``openai``: ``POST {base_url}/v1/chat/completions``, the shape vLLM, SGLang, llama.cpp and Ollama serve — a run's
``[llm] judge`` endpoint sets these, :mod:`rlar.agent.endpoints`), ``model``, ``rubric``, ``scale`` ([lo, hi],
default [0, 10]), ``base_url`` (else, for ``anthropic`` only, ``$ANTHROPIC_BASE_URL``, else
``https://api.anthropic.com``), ``api_key_env`` (name of the environment
variable with the key, default ``ANTHROPIC_API_KEY``; keys are never stored in specs, which live in a shared
registry), ``timeout_s`` per HTTP call, ``max_concurrency`` calls in flight per tool (default 64),
``rate_limit_per_s`` (a token bucket: average calls started per second, bursts up to ``max_concurrency``;
None: unlimited), ``max_retries`` and ``backoff_base_s``/``backoff_max_s``; ``deadline_s`` is the executor's
backstop per ``max_concurrency`` inputs. Without a key and without a base URL the tool abstains with "no
judge configured". A base URL without a key (a local gateway) is allowed.

Each call is one ``POST {base_url}/v1/messages`` (headers ``x-api-key``, ``anthropic-version``) or
``POST {base_url}/v1/chat/completions`` (``Authorization: Bearer`` when a key is set; a base URL ending in
``/v1`` is not doubled) on the tool's pooled HTTP client (:mod:`rlar.tools.http`: keep-alive connections,
one session per tool instance), bounded as a whole by ``timeout_s``. The retry loop is ours so it can be
bounded and observed: 429, 5xx (529 overloaded included) and connection errors are retried with exponential
backoff and full jitter, waiting at least the server's ``retry-after-ms``/``retry-after`` (seconds or an HTTP
date). A timeout is not retried (the reward's latency budget is spent). Other 4xx are configuration errors →
status error.

The reply must end with ``Score: N`` (``N/10`` also parses); the last such line counts. A missing or
out-of-scale score is asked for once more (``repair``, default on: the model sees its reply and is asked for
the line alone), then → abstain with the reply's tail in details. The score maps linearly from ``scale`` to
[0, 1].
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import re
import time
from collections.abc import Sequence
from typing import Any, ClassVar

from rlar.tools.base import Outcome, RewardTool, ToolInput, ToolKind, ToolResult, ToolSpec
from rlar.tools.http import HttpClient, TokenBucket

__all__ = ["DEFAULT_RUBRIC", "LLMJudgeTool", "build_judge_prompt", "parse_judge_score", "retry_after_seconds"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"

DEFAULT_RUBRIC = (
    "Judge how well the response answers the query: correctness first (compare with the reference answer"
    " when one is given), then completeness and clarity. Penalise confident errors, irrelevant content and"
    " refusals of reasonable requests."
)

_SYSTEM = (
    "You are a strict, fair evaluator of AI responses. Follow the rubric. Think briefly, then end your reply"
    " with a final line of the form 'Score: N' where N is a number from {lo} to {hi}."
)

_SCORE_RE = re.compile(
    r"score\s*(?:\*\*)?\s*[:=]\s*(?:\*\*)?\s*(-?\d+(?:\.\d+)?)(?:\s*/\s*(\d+(?:\.\d+)?))?", re.IGNORECASE
)
_FRACTION_RE = re.compile(r"(?<![\d.])(-?\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)\s*\W*\s*$")


def build_judge_prompt(inp: ToolInput, rubric: str, lo: float, hi: float) -> tuple[str, str]:
    """(system, user) messages for one judgement."""
    parts = [f"# Rubric\n{rubric}", f"# Query\n{inp.query}"]
    if inp.reference is not None:
        ref = inp.reference if isinstance(inp.reference, str) else repr(inp.reference)
        parts.append(f"# Reference answer\n{ref}")
    parts.append(f"# Response to evaluate\n{inp.response}")
    parts.append(f"End with 'Score: N' (N from {lo:g} to {hi:g}).")
    return _SYSTEM.format(lo=f"{lo:g}", hi=f"{hi:g}"), "\n\n".join(parts)


def parse_judge_score(text: str) -> float | None:
    """The last 'Score: N' (or 'Score: N/M', or a trailing 'N/M') in a reply, as N; None if absent.

    'N/M' with M different from the scale's top is left to the caller's range check.
    """
    matches = list(_SCORE_RE.finditer(text))
    if matches:
        return float(matches[-1].group(1))
    m = _FRACTION_RE.search(text.strip())
    return float(m.group(1)) if m else None


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date); None if absent."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class LLMJudgeTool(RewardTool):
    """Scores responses with an LLM judge over the Anthropic Messages API (any compatible base URL)."""

    batched: ClassVar[bool] = True  # concurrency inside, capped by a semaphore
    in_process: ClassVar[bool] = True  # pure network I/O
    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="llm_judge",
        kind=ToolKind.JUDGE,
        description=(
            "LLM-as-judge: a language model grades the response against a rubric (and the reference answer if"
            " given) and returns a 0-10 score, mapped to [0,1]. Flexible and reference-optional; use for open-"
            " ended answers, explanations, writing quality and tasks no rule can check. Slow, costly and"
            " noisy; abstains when no judge endpoint is configured or the API fails."
        ),
        task_types=["open_ended", "explanation", "writing", "open_qa", "reasoning", "any"],
        answer_formats=["free_text", "paragraph", "any"],
        params={
            "api": "anthropic",
            "model": "claude-haiku-4-5",
            "rubric": DEFAULT_RUBRIC,
            "scale": [0, 10],
            "max_tokens": 512,
            "temperature": None,
            "base_url": None,
            "api_key_env": "ANTHROPIC_API_KEY",
            "timeout_s": 30.0,
            "max_concurrency": 64,
            "rate_limit_per_s": None,
            "max_retries": 4,
            "backoff_base_s": 0.5,
            "backoff_max_s": 30.0,
            "deadline_s": 120.0,
            "repair": True,
        },
    )

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        p = spec.params
        lo, hi = (float(x) for x in p.get("scale", [0, 10]))
        if not lo < hi:
            raise ValueError(f"judge scale must have lo < hi, got {p.get('scale')!r}")
        self.lo, self.hi = lo, hi
        self.rubric = p.get("rubric") or DEFAULT_RUBRIC
        self.timeout_s = float(p.get("timeout_s", 30.0))
        self.max_retries = int(p.get("max_retries", 4))
        self.backoff_base_s = float(p.get("backoff_base_s", 0.5))
        self.backoff_max_s = float(p.get("backoff_max_s", 30.0))
        self.api = str(p.get("api") or "anthropic")
        if self.api not in ("anthropic", "openai"):
            raise ValueError(f"judge api must be 'anthropic' or 'openai', got {self.api!r}")
        self.repair = bool(p.get("repair", True))
        env_url = os.environ.get("ANTHROPIC_BASE_URL") if self.api == "anthropic" else None
        self.base_url = p.get("base_url") or env_url or None
        key_env = p.get("api_key_env", "ANTHROPIC_API_KEY" if self.api == "anthropic" else "")
        self.api_key = (os.environ.get(key_env) if key_env else None) or None
        self.configured = bool(self.api_key or self.base_url)
        self.max_concurrency = max(1, int(p.get("max_concurrency") or 64))
        self._sem = asyncio.Semaphore(self.max_concurrency)
        rate = p.get("rate_limit_per_s")
        self._bucket = TokenBucket(float(rate), self.max_concurrency) if rate else None
        self._http = HttpClient(self.max_concurrency)
        root = (self.base_url or DEFAULT_BASE_URL).rstrip("/")
        if root.endswith("/v1"):
            root = root[: -len("/v1")]
        if self.api == "openai":
            self._url = root + "/v1/chat/completions"
            self._headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        else:
            self._url = root + "/v1/messages"
            self._headers = {
                "anthropic-version": API_VERSION,
                **({"x-api-key": self.api_key} if self.api_key else {}),
            }

    @classmethod
    def cacheable(cls, spec: ToolSpec) -> bool:
        return bool(spec.params.get("cache", True))

    async def _call(self, system: str, messages: list[dict[str, str]]) -> Any:
        """One API call: the reply (status, headers, body) whatever its status."""
        body: dict[str, Any] = {
            "model": self.params.get("model", "claude-haiku-4-5"),
            "max_tokens": int(self.params.get("max_tokens", 512)),
        }
        if self.api == "openai":
            body["messages"] = [{"role": "system", "content": system}, *messages]
        else:
            body["system"] = system
            body["messages"] = messages
        temperature = self.params.get("temperature")
        if temperature is not None:
            body["temperature"] = float(temperature)
        if self._bucket is not None:
            await self._bucket.acquire()
        return await self._http.post_json(self._url, body, self._headers, self.timeout_s)

    def _reply_text(self, msg: Any, tokens: dict[str, int]) -> tuple[str, str]:
        """(text, model) of a successful reply in the endpoint's shape, its token usage added to ``tokens``
        (which also counts the HTTP calls and their milliseconds, waits for a free slot excluded); raises
        ValueError when it has neither."""
        if not isinstance(msg, dict):
            raise ValueError("not a JSON object")
        raw_usage = msg.get("usage")
        usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        if self.api == "openai":
            choices = msg.get("choices") or []
            if not choices or not isinstance(choices[0], dict):
                raise ValueError("no choices")
            tokens["input"] += int(usage.get("prompt_tokens") or 0)
            tokens["output"] += int(usage.get("completion_tokens") or 0)
            return str((choices[0].get("message") or {}).get("content") or ""), str(msg.get("model", ""))
        tokens["input"] += int(usage.get("input_tokens") or 0)
        tokens["output"] += int(usage.get("output_tokens") or 0)
        blocks = msg.get("content") or []
        text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
        return text, str(msg.get("model", ""))

    def _backoff(self, attempt: int, server_wait: float | None) -> float:
        jittered = random.uniform(0.0, min(self.backoff_max_s, self.backoff_base_s * 2**attempt))
        return max(jittered, server_wait or 0.0)

    async def _ask(
        self, system: str, messages: list[dict[str, str]], attempts: list[str], tokens: dict[str, int]
    ) -> ToolResult | tuple[str, str]:
        """One judgement call with retries: (text, model), or the result that ends the judgement."""
        for attempt in range(self.max_retries + 1):
            server_wait: float | None = None
            try:
                async with self._sem:
                    t0 = time.perf_counter()
                    try:
                        reply = await self._call(system, messages)
                    finally:
                        tokens["calls"] += 1
                        tokens["call_ms"] += int(1000 * (time.perf_counter() - t0))
            except TimeoutError:
                return ToolResult.abstain(f"judge timeout after {self.timeout_s:g}s", attempts=attempts)
            except ConnectionError as exc:
                attempts.append(f"connection error: {exc}"[:200])
            else:
                code = reply.status
                if code == 200:
                    try:
                        return self._reply_text(reply.json(), tokens)
                    except (ValueError, AttributeError) as exc:
                        shape = "chat completion" if self.api == "openai" else "Messages API message"
                        return ToolResult.error(f"judge reply is not a {shape}: {exc}"[:300])
                attempts.append(f"HTTP {code}")
                if code != 429 and code < 500:
                    detail = reply.body[:300].decode("utf-8", "replace")
                    return ToolResult.error(f"judge HTTP {code}: {detail}", attempts=attempts)
                server_wait = retry_after_seconds(reply.headers)
            if attempt < self.max_retries:
                await asyncio.sleep(self._backoff(attempt, server_wait))
        return ToolResult.abstain(
            f"judge failed after {len(attempts)} attempts: {attempts[-1] if attempts else '?'}",
            attempts=attempts,
        )

    async def _judge(self, inp: ToolInput) -> ToolResult:
        if not self.configured:
            return ToolResult.abstain("no judge configured")
        if not inp.response.strip():  # nothing to judge: the lowest score, without a paid call
            return self.ok(0.0, "empty response")
        tokens = {"input": 0, "output": 0, "calls": 0, "call_ms": 0}
        result = await self._judgement(inp, tokens)
        result.details["tokens"] = dict(tokens)
        return result

    async def _judgement(self, inp: ToolInput, tokens: dict[str, int]) -> ToolResult:
        system, user = build_judge_prompt(inp, self.rubric, self.lo, self.hi)
        attempts: list[str] = []
        messages = [{"role": "user", "content": user}]
        got = await self._ask(system, messages, attempts, tokens)
        if isinstance(got, ToolResult):
            return got
        text, model = got
        first = self._parse(text, attempts, model)
        if first.ok or not self.repair:
            return first
        # One repair: the model sees its reply and is asked for the score line alone.
        messages += [
            {"role": "assistant", "content": text[-1500:] or "(empty)"},
            {
                "role": "user",
                "content": f"{first.reason}. Reply with one line only: 'Score: N' with N from {self.lo:g} to"
                f" {self.hi:g}.",
            },
        ]
        again = await self._ask(system, messages, attempts, tokens)
        if isinstance(again, ToolResult):
            return again
        second = self._parse(again[0], attempts, again[1])
        if second.ok:
            second.details["repaired"] = True
            return second
        return ToolResult.abstain(
            f"{second.reason} (after one repair; first: {first.reason})",
            reply_tail=again[0][-300:],
            first_reply_tail=text[-300:],
            attempts=list(attempts),
        )

    def _parse(self, text: str, attempts: list[str], model: str) -> ToolResult:
        raw = parse_judge_score(text)
        tail = text[-300:]
        if raw is None:
            return ToolResult.abstain("could not parse a score from the judge reply", reply_tail=tail)
        if not self.lo <= raw <= self.hi:
            return ToolResult.abstain(
                f"judge score {raw:g} outside scale [{self.lo:g}, {self.hi:g}]", reply_tail=tail
            )
        score = (raw - self.lo) / (self.hi - self.lo)
        return self.ok(
            score,
            f"judge score {raw:g}",
            judge_score=raw,
            model=model,
            attempts=list(attempts),
            reply_tail=tail,
        )

    async def _score(self, inp: ToolInput) -> Outcome:
        return await self._judge(inp)

    async def _score_batch(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        return list(await asyncio.gather(*(self._judge(x) for x in inputs)))

    async def aclose(self) -> None:
        await self._http.aclose()
