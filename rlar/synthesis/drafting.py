"""Synthesis as an agent question: the request for a verifier, its retry turns, and reading the draft back.

``synthesis_request(task, history)`` asks the agent to call ``submit_reward_function`` with the source of a
module defining ``reward(query, response, reference, metadata) -> float`` and its declared score range. On a
retry, ``history`` holds the earlier drafts and why each was rejected; for a model they become proper
tool-use turns (the assistant's ``tool_use`` block, then a ``tool_result`` with ``is_error`` and the reason),
so the agent sees its failure and may fix it. The offline backend reads the same history from ``context``.

``parse_draft(reply)`` returns a :class:`~rlar.synthesis.compose.Draft` or the reason there is none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlar.agent.base import AgentReply, AgentRequest, AgentTool, Embed, OfflineRefusal
from rlar.synthesis.compose import ComposeError, Draft, SynthesisTask, compose

__all__ = ["SUBMIT_TOOL", "Attempt", "parse_draft", "synthesis_request"]


def _offline_draft(context: Mapping[str, Any], embed: Embed) -> dict[str, Any]:
    """The offline backend's answer: a draft composed from building blocks (:func:`compose`)."""
    task = SynthesisTask.from_dict(context["task"])
    try:
        draft = compose(
            task,
            attempt=int(context.get("attempt", 0)),
            feedback=list(context.get("feedback", [])),
            embed=embed,
        )
    except ComposeError as exc:
        raise OfflineRefusal(f"offline composer: {exc}") from exc
    return draft.to_tool_input()


SUBMIT_TOOL = AgentTool(
    name="submit_reward_function",
    description=(
        "Submit the Python source of a reward function for the task. It will be executed only in a sandbox"
        " and validated on probe responses before it is used."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": (
                    "A complete Python 3 module using only the standard library that defines"
                    " reward(query, response, reference, metadata) -> float and SCORE_RANGE = (lo, hi)."
                ),
            },
            "score_range": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
            "needs_reference": {
                "type": "boolean",
                "description": "True if the function compares with the reference.",
            },
            "rationale": {"type": "string"},
        },
        "required": ["code", "score_range", "needs_reference", "rationale"],
    },
    offline=_offline_draft,
)

_SYSTEM = (
    "You write reward functions (verifiers) for reinforcement learning of language models. Write a Python 3"
    " module that uses only the standard library and defines reward(query, response, reference, metadata) ->"
    " float and SCORE_RANGE = (lo, hi). Requirements: the score is always a finite number inside SCORE_RANGE;"
    " it is deterministic (no randomness, time, or hash-order dependence); it runs in well under 50 ms per call;"
    " it never reads files, the network or the environment, and never prints; good responses must score above"
    " bad ones (blank, off-task, wrong, or breaking the task's requirements). It will be validated in a sandbox"
    " on probe responses. Answer only by calling submit_reward_function."
)


@dataclass(slots=True)
class Attempt:
    """One earlier draft and why validation (or parsing) rejected it."""

    draft: dict[str, Any]
    reason: str
    call_id: str = ""


def _task_message(task: SynthesisTask) -> str:
    lines = [
        "# Task",
        f"name: {task.task or '-'}; domain: {task.domain or '-'}; type: {task.task_type or '-'}; answer format:"
        f" {task.answer_format or '-'}",
        f"description: {task.description}",
    ]
    cons = task.all_constraints()
    if cons:
        lines.append(f"checkable constraints (our reading): {json.dumps(cons)}")
    lines.append("# Examples (query, reference, metadata)")
    for ex in task.examples[:4]:
        lines.append(
            json.dumps(
                {k: ex.get(k) for k in ("query", "reference", "metadata")}, ensure_ascii=False, default=str
            )[:1500]
        )
    if not task.examples:
        lines.append("(none)")
    return "\n".join(lines)


def synthesis_request(
    task: SynthesisTask, history: Sequence[Attempt] = (), *, max_tokens: int = 4096
) -> AgentRequest:
    messages: list[dict[str, Any]] = [{"role": "user", "content": _task_message(task)}]
    for i, past in enumerate(history):
        call_id = past.call_id or f"toolu_attempt_{i + 1}"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": call_id, "name": SUBMIT_TOOL.name, "input": past.draft}
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call_id,
                        "is_error": True,
                        "content": (
                            f"Rejected by validation: {past.reason}\n"
                            "Fix it and call submit_reward_function again."
                        ),
                    }
                ],
            }
        )
    return AgentRequest(
        system=_SYSTEM,
        messages=messages,
        tools=[SUBMIT_TOOL],
        tool_choice=SUBMIT_TOOL.name,
        max_tokens=max_tokens,
        context={"task": task.to_dict(), "attempt": len(history), "feedback": [a.reason for a in history]},
        purpose="synthesize",
    )


def parse_draft(reply: AgentReply) -> tuple[Draft | None, str, str]:
    """(draft, reason if none, tool-call id) from a reply."""
    if not reply.ok:
        return None, f"agent {reply.status}: {reply.reason}", ""
    call = reply.call(SUBMIT_TOOL.name)
    if call is None:
        return None, "the agent did not call submit_reward_function", ""
    data = call.input
    code = data.get("code")
    if not isinstance(code, str) or not code.strip():
        return None, "the submission has no code", call.id
    rng = data.get("score_range")
    try:
        lo, hi = float(rng[0]), float(rng[1])  # type: ignore[index]
    except (TypeError, ValueError, IndexError, KeyError):
        return None, f"score_range {rng!r} is not [lo, hi]", call.id
    draft = Draft(
        code=code,
        score_range=(lo, hi),
        needs_reference=bool(data.get("needs_reference", False)),
        rationale=str(data.get("rationale", ""))[:1000],
        blocks=dict(data.get("blocks") or {}),
    )
    return draft, "", call.id
