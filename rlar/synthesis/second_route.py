"""A second, independent route from a task description to labelled probes, so a verifier cannot validate itself.

The verifier is composed from :func:`rlar.tasks.reading.read_instruction`. Probes built from that same reading
would agree with any misreading ("20 words or fewer" read as exactly 20 makes a 20-word "good" probe that the
wrong verifier passes). Probes here come from elsewhere:

- ``agent``: the agent is asked (``submit_probes``) to write good and bad responses from the task description
  and examples alone — it never sees our reading. With the Messages API backend this is a language model.
- the offline backend answers ``submit_probes`` with :func:`second_reading`: a separately written reader
  (:mod:`rlar.synthesis.second`: token windows around numbers and quoted strings, its own vocabulary and
  comparator lists; it shares no pattern with :mod:`rlar.tasks.phrasings`) whose constraints are rendered by
  :func:`rlar.synthesis.builder.build` into one good response and one bad response per constraint, each
  labelled by this reading. This is N-version reading: where both readers agree, a wrong verifier still
  passes; where they disagree, the probes reject it and the reason names the disagreement. It reads fewer
  phrasings than the main reader and stays silent (no probes) where it reads nothing.

``write_probes(description, examples)`` returns the probe dicts ``{query, response, label, why}``;
``probes_request`` / ``parse_probes`` carry the same question through an agent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rlar.agent.base import AgentReply, AgentRequest, AgentTool
from rlar.constraints.checks import holds
from rlar.constraints.vocabulary import canonical
from rlar.synthesis.builder import build, violations
from rlar.synthesis.second import second_reading

__all__ = [
    "PROBES_TOOL",
    "constraint_key",
    "independent_constraints",
    "parse_probes",
    "probes_request",
    "second_reading",
    "vouched_keys",
    "write_probes",
]


def _merge_key(c: Mapping[str, Any]) -> str:
    return "|".join(
        str(c.get(k, ""))
        for k in ("rule", "per", "text", "letter", "unit", "test", "rel", "agg", "of", "index", "as")
    )


def _merged(mine: Sequence[Mapping[str, Any]], primary: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The second reading, completed from ``primary`` where it is silent (see :func:`write_probes`)."""
    by_key = {_merge_key(c): dict(c) for c in primary}
    for c in mine:
        base = by_key.get(_merge_key(c), {})
        new = {**{k: v for k, v in base.items() if k not in c and k not in ("min", "max")}, **c}
        for k in ("keys", "words", "options"):  # items it did not name: silent about them, not against them
            if k in base and k in c:
                new[k] = [*c[k], *(v for v in base[k] if v not in c[k])]
        if "types" in base and "types" in c:
            new["types"] = {**base["types"], **c["types"]}
        by_key[_merge_key(c)] = new
    return canonical(by_key.values())


def independent_constraints(text: str, primary: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The second reading of ``text`` completed from ``primary`` (empty when it reads nothing): what the canary
    labels live responses with."""
    mine = second_reading(text)
    return _merged(mine, primary) if mine else []


def write_probes(
    description: str, examples: Sequence[Mapping[str, Any]] = (), primary: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """Labelled probes from :func:`second_reading` of the description and the first example's query.

    Constraints the second reading is silent about (``primary`` ones of a rule and scope it did not read, and
    parameters it did not set, such as JSON value types) are taken from ``primary`` so the good probe does not
    break what only the main reader understood; the bad probes break the second reading's own constraints
    only. Where both read a constraint, the second reading's parameters win: a disagreement shows up as a good
    probe the verifier fails or a bad one it passes."""
    query = str((examples[0].get("query") if examples else "") or "")
    text = f"{description}\n{query}" if query and query not in description else description
    mine = second_reading(text)
    if not mine:
        return []
    merged = _merged(mine, primary)
    out: list[dict[str, Any]] = []
    try:
        good = build(merged, query)
        bad = violations(merged, query)
    except Exception:  # no probes rather than a crash: the candidate is then rejected for want of them
        return []
    if all(holds(c, good) for c in merged):
        out.append(
            {"query": query, "response": good, "label": "good", "why": "second reading: all constraints"}
        )
    own = {str(c["rule"]) + (f"/{c['per']}" if c.get("per") else "") for c in mine}
    for why, text in bad:
        target = why.split(":")[0]
        if target not in own:
            continue
        broken = [c for c in merged if target == str(c["rule"]) + (f"/{c['per']}" if c.get("per") else "")]
        if broken and not all(holds(c, text) for c in broken):
            out.append({"query": query, "response": text, "label": "bad", "why": f"second reading: {why}"})
    return out


def _offline_probes(context: Mapping[str, Any], embed: Any) -> dict[str, Any]:
    """The offline backend's answer to ``submit_probes``: :func:`write_probes` (no model, no embeddings), and
    ``read``: the constraints the second reading itself read (what its probes can vouch for)."""
    examples = context.get("examples", [])
    query = str((examples[0].get("query") if examples else "") or "")
    desc = str(context["description"])
    text = f"{desc}\n{query}" if query and query not in desc else desc
    return {
        "probes": write_probes(desc, examples, context.get("primary", [])),
        "read": second_reading(text),
    }


def vouched_keys(reply: AgentReply) -> set[str] | None:
    """The ``rule/per`` keys the offline second reading read itself (None when the reply does not say: a
    model's probes, which cannot be mapped to constraints)."""
    if not reply.ok:
        return None
    call = reply.call(PROBES_TOOL.name)
    read = call.input.get("read") if call is not None else None
    if not isinstance(read, list):
        return None
    return {constraint_key(c) for c in read if isinstance(c, Mapping) and "rule" in c}


def constraint_key(c: Mapping[str, Any]) -> str:
    """``rule`` or ``rule/per`` (composed rules: ``rule/unit/test``): what a constraint checks, without its
    parameters."""
    if c.get("unit") and c["rule"] != "same":
        of = f"/{c['of']}" if c.get("of") else ""
        return f"{c['rule']}/{c['unit']}/{c.get('test', c.get('rel', c.get('agg', '')))}{of}"
    return str(c["rule"]) + (f"/{c['per']}" if c.get("per") else "")


PROBES_TOOL = AgentTool(
    name="submit_probes",
    description=(
        "Submit test responses for a task: some that fully follow the task's instructions (good) and some that"
        " clearly break one of them (bad). They are used to test a reward function written by someone else."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "probes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "response": {"type": "string"},
                        "label": {"type": "string", "enum": ["good", "bad"]},
                        "why": {"type": "string"},
                    },
                    "required": ["response", "label", "why"],
                },
            }
        },
        "required": ["probes"],
    },
    offline=_offline_probes,
)


def probes_request(
    description: str, examples: Sequence[Mapping[str, Any]], *, max_tokens: int = 2048
) -> AgentRequest:
    """The agent question: write probes from the task alone (our reading of it is not shown)."""
    shown = [{k: e.get(k) for k in ("query", "reference")} for e in list(examples)[:4]]
    text = (
        f"# Task\n{description}\n# Example queries\n{json.dumps(shown, ensure_ascii=False, default=str)[:3000]}\n"
        "Write 2 responses that follow every instruction of the task exactly (label good) and 4 responses that"
        " each clearly break one instruction while following the others (label bad); say in `why` which."
    )
    return AgentRequest(
        system="You write test cases for reward functions. Answer only by calling submit_probes.",
        messages=[{"role": "user", "content": text}],
        tools=[PROBES_TOOL],
        tool_choice=PROBES_TOOL.name,
        max_tokens=max_tokens,
        context={"description": description, "examples": [dict(e) for e in list(examples)[:4]]},
        purpose="write_probes",
    )


def parse_probes(reply: AgentReply) -> list[dict[str, Any]]:
    """Probe dicts from a reply (malformed entries are skipped; a failed reply gives none)."""
    if not reply.ok:
        return []
    call = reply.call(PROBES_TOOL.name)
    if call is None or not isinstance(call.input.get("probes"), list):
        return []
    out = []
    for p in call.input["probes"]:
        if (
            isinstance(p, Mapping)
            and isinstance(p.get("response"), str)
            and p.get("label") in ("good", "bad")
        ):
            out.append(
                {
                    "query": str(p.get("query", "")),
                    "response": p["response"],
                    "label": p["label"],
                    "why": str(p.get("why", ""))[:200],
                }
            )
    return out
