"""LLM judge: a rubric prompt to a Messages-API model, the score parsed from its reply.

Configuration (``spec.params``): ``model``, ``rubric``, ``scale`` ([lo, hi], default [0, 10]), ``base_url``
(else ``$ANTHROPIC_BASE_URL``, else the SDK default), ``api_key_env`` (name of the environment variable with
the key, default ``ANTHROPIC_API_KEY``; keys are never stored in specs, which live in a shared registry),
``timeout_s`` per HTTP call, ``max_concurrency`` calls in flight per tool, ``max_retries`` and
``backoff_base_s``/``backoff_max_s``; ``deadline_s`` is the executor's backstop per ``max_concurrency``
inputs. Without a key and without a base URL the tool abstains with "no judge configured". A base URL
without a key (a local gateway) is allowed.

Each call: ``anthropic.AsyncAnthropic(base_url, api_key, timeout, max_retries=0)`` — the retry loop is ours so
it can be bounded and observed — wrapped in ``asyncio.timeout(timeout_s)`` because httpx timeouts are
per-operation, not per-request. 429, 5xx (529 overloaded included) and connection errors are retried with
exponential backoff and full jitter, waiting at least the server's ``retry-after-ms``/``retry-after``
(seconds or an HTTP date). A timeout is not retried (the reward's latency budget is spent). Other 4xx are
configuration errors → status error.

The reply must end with ``Score: N`` (``N/10`` also parses); the last such line counts. A missing or
out-of-scale score → abstain with the reply's tail in details. The score maps linearly from ``scale`` to
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

__all__ = ["DEFAULT_RUBRIC", "LLMJudgeTool", "build_judge_prompt", "parse_judge_score", "retry_after_seconds"]

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
            "model": "claude-haiku-4-5",
            "rubric": DEFAULT_RUBRIC,
            "scale": [0, 10],
            "max_tokens": 512,
            "temperature": None,
            "base_url": None,
            "api_key_env": "ANTHROPIC_API_KEY",
            "timeout_s": 30.0,
            "max_concurrency": 4,
            "max_retries": 4,
            "backoff_base_s": 0.5,
            "backoff_max_s": 30.0,
            "deadline_s": 120.0,
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
        self.base_url = p.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.api_key = os.environ.get(p.get("api_key_env") or "ANTHROPIC_API_KEY") or None
        self.configured = bool(self.api_key or self.base_url)
        self._sem = asyncio.Semaphore(int(p.get("max_concurrency", 4)))
        self._client: Any = None

    @classmethod
    def cacheable(cls, spec: ToolSpec) -> bool:
        return bool(spec.params.get("cache", True))

    def _get_client(self) -> Any:
        if self._client is None:
            import anthropic

            self._client = anthropic.AsyncAnthropic(
                base_url=self.base_url,
                # A local gateway may need no key; the SDK still requires a value.
                api_key=self.api_key or "unused",
                timeout=self.timeout_s,
                max_retries=0,
            )
        return self._client

    async def _call(self, system: str, user: str) -> Any:
        client = self._get_client()
        kwargs: dict[str, Any] = {}
        temperature = self.params.get("temperature")
        if temperature is not None:
            # Not a named argument of current SDKs (newer models fix sampling); gateways may still take it.
            kwargs["extra_body"] = {"temperature": float(temperature)}
        async with asyncio.timeout(self.timeout_s):
            return await client.messages.create(
                model=self.params.get("model", "claude-haiku-4-5"),
                max_tokens=int(self.params.get("max_tokens", 512)),
                system=system,
                messages=[{"role": "user", "content": user}],
                **kwargs,
            )

    def _backoff(self, attempt: int, server_wait: float | None) -> float:
        jittered = random.uniform(0.0, min(self.backoff_max_s, self.backoff_base_s * 2**attempt))
        return max(jittered, server_wait or 0.0)

    async def _judge(self, inp: ToolInput) -> ToolResult:
        if not self.configured:
            return ToolResult.abstain("no judge configured")
        if not inp.response.strip():  # nothing to judge: the lowest score, without a paid call
            return self.ok(0.0, "empty response")
        import anthropic

        system, user = build_judge_prompt(inp, self.rubric, self.lo, self.hi)
        attempts: list[str] = []
        for attempt in range(self.max_retries + 1):
            server_wait: float | None = None
            try:
                async with self._sem:
                    msg = await self._call(system, user)
            except (TimeoutError, anthropic.APITimeoutError):
                return ToolResult.abstain(f"judge timeout after {self.timeout_s:g}s", attempts=attempts)
            except anthropic.APIStatusError as exc:
                code = exc.status_code
                attempts.append(f"HTTP {code}")
                if code != 429 and code < 500:
                    return ToolResult.error(f"judge HTTP {code}: {str(exc)[:300]}", attempts=attempts)
                server_wait = retry_after_seconds(exc.response.headers)
            except anthropic.APIConnectionError as exc:
                attempts.append(f"connection error: {exc}"[:200])
            else:
                text = "".join(getattr(b, "text", "") for b in msg.content)
                return self._parse(text, attempts, getattr(msg, "model", ""))
            if attempt < self.max_retries:
                await asyncio.sleep(self._backoff(attempt, server_wait))
        return ToolResult.abstain(
            f"judge failed after {len(attempts)} attempts: {attempts[-1] if attempts else '?'}",
            attempts=attempts,
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
            score, f"judge score {raw:g}", judge_score=raw, model=model, attempts=attempts, reply_tail=tail
        )

    async def _score(self, inp: ToolInput) -> Outcome:
        return await self._judge(inp)

    async def _score_batch(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        return list(await asyncio.gather(*(self._judge(x) for x in inputs)))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
