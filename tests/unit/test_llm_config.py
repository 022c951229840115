"""``[llm]``: one block names the endpoints; each role (router, synthesizer, judge) gets its own from it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rlar.agent.endpoints import LLMSection, ModelEndpoint, judge_params
from rlar.app.runconfig import validate_run_config
from rlar.app.served import assign_urls
from rlar.runconfig import ConfigProblems, actor_config_dict
from rlar.tools import make_tool

LOCAL = {"api": "openai", "base_url": "http://127.0.0.1:8000/v1", "model": "smollm2", "api_key_env": "MY_KEY"}


def doc_with(**llm: Any) -> dict[str, Any]:
    return {"llm": {"endpoints": {"local": dict(LOCAL)}, **llm}}


def test_each_role_gets_the_endpoint_it_names() -> None:
    doc = doc_with(router="local", synthesizer="local")
    router = actor_config_dict(doc, "router", {})["agent"]
    assert router["backend"] == "openai" and router["base_url"] == LOCAL["base_url"]
    assert (
        router["model"] == "smollm2"
        and router["api_key_env"] == "MY_KEY"
        and router["tool_calling"] == "auto"
    )
    assert actor_config_dict(doc, "synthesizer", {})["agent"] == router
    assert "agent" not in actor_config_dict(doc, "feeder", {})
    built = validate_run_config(doc, actors=["router", "synthesizer"])
    assert built["router"].agent.base_url == LOCAL["base_url"] and built["llm"].endpoint_for("judge") is None


def test_a_role_set_twice_or_naming_no_endpoint_is_refused() -> None:
    doc = doc_with(router="local")
    doc["router"] = {"agent": {"backend": "offline"}}
    with pytest.raises(ConfigProblems, match=r"\[router\] agent and \[llm\] router"):
        actor_config_dict(doc, "router", {})
    with pytest.raises(ValidationError, match="names no endpoint"):
        LLMSection.model_validate(doc_with(judge="remote")["llm"])
    with pytest.raises(ValidationError, match="needs base_url, or serve"):
        ModelEndpoint(model="m")
    with pytest.raises(
        ConfigProblems, match=r"\[llm\]: unknown key 'endpoints.x.modle' \(did you mean 'model'\?\)"
    ):
        validate_run_config(
            {"llm": {"endpoints": {"x": {"base_url": "http://h", "model": "m", "modle": "m"}}}}
        )


def test_a_served_endpoint_gets_its_url_before_the_actors_read_it() -> None:
    doc = {
        "llm": {
            "router": "mine",
            "endpoints": {"mine": {"model": "smollm2", "serve": {"checkpoint": "smollm2"}}},
        }
    }
    assert "agent" not in actor_config_dict(doc, "router", {})  # no URL yet: nothing derived
    assign_urls(doc)
    port = doc["llm"]["endpoints"]["mine"]["serve"]["port"]
    assert port > 0 and doc["llm"]["endpoints"]["mine"]["base_url"] == f"http://127.0.0.1:{port}/v1"
    assert actor_config_dict(doc, "router", {})["agent"]["base_url"].endswith(f":{port}/v1")
    assign_urls(doc)  # idempotent: a resumed run keeps its URL
    assert doc["llm"]["endpoints"]["mine"]["serve"]["port"] == port


def test_judge_params_point_llm_judge_at_the_endpoint() -> None:
    from rlar.tools import builtin_specs

    params = judge_params(ModelEndpoint(**LOCAL, judge_max_tokens=64))
    base = next(s for s in builtin_specs() if s.name == "llm_judge")
    tool = make_tool(base.replace(params={**base.params, **params}))
    assert tool._url == "http://127.0.0.1:8000/v1/chat/completions"  # type: ignore[attr-defined]
    assert tool.configured and params["model"] == "smollm2" and params["max_tokens"] == 64  # type: ignore[attr-defined]


def test_the_shipped_local_model_config_passes_rlar_trains_checks() -> None:
    from rlar.app.train import load_checked
    from rlar.resources import ROOT

    doc, built, pre, _, _ = load_checked(str(ROOT / "deploy/configs/local_judge.toml"), [], None)
    served = doc["llm"]["endpoints"]["local"]
    assert (
        served["base_url"] == f"http://127.0.0.1:{served['serve']['port']}/v1"
    )  # assigned before the actors
    assert actor_config_dict(doc, "synthesizer", {})["agent"]["base_url"] == served["base_url"]
    assert "agent" not in actor_config_dict(doc, "router", {})  # the router keeps its offline default
    assert len(built["router"].labelled["three_words"]) == 4 and built["llm"].judge == "local"
    assert [t.name for t in pre.tasks] == ["arith", "three_words"]
