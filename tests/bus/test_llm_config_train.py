"""``[llm]`` in a run: ``rlar train`` registers the judge its config names as the newest version of the tool."""

from __future__ import annotations

from typing import Any

from bus.client import Bus
from rlar.app.train import register_judge
from rlar.registry import ToolRegistry

LOCAL = {"api": "openai", "base_url": "http://127.0.0.1:8000/v1", "model": "smollm2", "api_key_env": "MY_KEY"}


def doc_with(**llm: Any) -> dict[str, Any]:
    return {"llm": {"endpoints": {"local": dict(LOCAL)}, **llm}}


async def test_rlar_train_registers_the_configured_judge_as_the_newest_version(bus: Bus) -> None:
    registry = ToolRegistry(bus)
    got = await register_judge(registry, doc_with(judge="local"))
    assert got.params["base_url"] == LOCAL["base_url"] and got.params["api"] == "openai"
    again = await registry.ensure_builtins()  # a worker registering the built-ins later changes nothing
    default = next(s for s in again if s.name == "llm_judge")
    assert default.version < got.version and (await registry.get("llm_judge")).version == got.version  # type: ignore[union-attr]
    assert await register_judge(registry, doc_with()) is None
