"""Your reward in Python: call styles, the TRL adapter, return types, exceptions, concurrency and deadlines, trust,
versioning, the sandbox, and the CLI."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from actors.reward import RewardConfig, RewardWorker
from bus import subjects
from bus.client import Bus
from bus.config import NatsConfig
from bus.messages import RewardGroup, ScoreGroup, ScoreItem, ToolRef
from rlar.registry import ToolRegistry
from rlar.tools import ToolExecutor, ToolInput, make_tool
from rlar.tools.pyfunc import PythonToolConfig, PythonToolError, python_tool_spec
from tests.support.env import REPO, actor_env
from tests.support.reward_tools import running
from tests.support.servers import TEST_TOPOLOGY

SOURCE = '''
import asyncio


def capitalised(query, response, reference, metadata):
    """1 when the response is the reference exactly (case matters), with a reason."""
    ok = response.strip() == reference
    return {"score": float(ok), "reason": "exact" if ok else f"{response.strip()!r} != {reference!r}"}


def batch(queries, responses, references, metadatas):
    return [float(r.strip() == ref) for r, ref in zip(responses, references)]


def trl_reward(prompts, completions, solution, **kwargs):
    # TRL-style: conversational completions are lists of messages; extra dataset columns come as lists.
    texts = [c[0]["content"] if isinstance(c, list) else c for c in completions]
    return [None if s is None else (1.0 if t.strip() == s else 0.0) + 0.0 * len(kwargs["topic"])
            for t, s in zip(texts, solution)]


async def slow_half(query, response, reference, metadata):
    await asyncio.sleep(0)
    return 0.5 if response else None


def out_of_range(query, response, reference, metadata):
    return 7.0


def as_text(query, response, reference, metadata):
    return "0.7"


def as_dict_text(query, response, reference, metadata):
    return {"score": "0.7", "reason": "looks fine"}


def as_bool(query, response, reference, metadata):
    return response == reference


def mixed(queries, responses, references, metadatas):
    import numpy as np

    return [np.float32(0.5), "0.7", None, b"1", np.int64(1), float("nan")][: len(responses)]


def one_short(prompts, completions, **kwargs):
    return [1.0] * (len(completions) - 1)


def one_text(prompts, completions, **kwargs):
    return "0.7"


def plural_reward(query, response, reference, metadata):
    if response.endswith("s"):
        raise ValueError("boom")
    return 1.0


def sleeper(query, response, reference, metadata):
    import time

    time.sleep(30)
    return 1.0
'''

APPLE = ToolInput("cap:apple=", "Apple", "Apple", {"topic": "fruit"})
LOWER = ToolInput("cap:apple=", "apple", "Apple", {"topic": "fruit"})
NOREF = ToolInput("cap:kiwi=", "Kiwi", None, {"topic": "fruit"})
NONE_REASON = "the reward function returned None (cannot judge this sample)"


@pytest.fixture
def module(tmp_path: Path) -> str:
    """A fresh user module (a unique name, so each test imports its own file)."""
    name = f"user_rewards_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(SOURCE)
    return name


def _spec(module: str, fn: str, tmp_path: Path, **kw: Any) -> Any:
    return python_tool_spec(
        PythonToolConfig(
            name=fn, python=f"{module}:{fn}", description="test reward", path=str(tmp_path), **kw
        )
    )


async def _scores(spec: Any, module: str, inputs: list[ToolInput]) -> list[tuple[str, float | None, str]]:
    tool = make_tool(spec, allowed_prefixes=["rlar.", module])
    return [(r.status, r.score, r.reason) for r in await tool.score_batch(inputs)]


async def test_each_call_style_scores_with_reasons_abstains_on_none_and_errors_out_of_range(
    module: str, tmp_path: Path
) -> None:
    sample = _spec(module, "capitalised", tmp_path)
    assert sample.params["style"] == "sample" and sample.provenance["origin"] == "user"
    assert await _scores(sample, module, [APPLE, LOWER]) == [
        ("ok", 1.0, "exact"),
        ("ok", 0.0, "'apple' != 'Apple'"),
    ]
    batched = _spec(module, "batch", tmp_path)
    assert batched.params["style"] == "batched"
    assert await _scores(batched, module, [APPLE, LOWER]) == [("ok", 1.0, ""), ("ok", 0.0, "")]
    slow = _spec(module, "slow_half", tmp_path)
    assert await _scores(slow, module, [APPLE, ToolInput("q", "", "r")]) == [
        ("ok", 0.5, ""),
        ("abstain", None, NONE_REASON),
    ]
    bad = await _scores(_spec(module, "out_of_range", tmp_path), module, [APPLE])
    assert bad[0][0] == "error" and "outside declared range" in bad[0][2]


async def test_a_string_a_bool_or_bytes_from_a_reward_function_is_an_error_never_a_score(
    module: str, tmp_path: Path
) -> None:
    for fn in ("as_text", "as_dict_text"):
        ((status, score, reason),) = await _scores(_spec(module, fn, tmp_path), module, [APPLE])
        assert (status, score) == ("error", None) and "score is a str ('0.7')" in reason
    ((status, score, reason),) = await _scores(_spec(module, "as_bool", tmp_path), module, [APPLE])
    assert (status, score) == ("error", None) and "score is a bool (True)" in reason
    five = [ToolInput("q", f"r{i}", "ref") for i in range(6)]
    got = await _scores(_spec(module, "mixed", tmp_path), module, five)
    assert [g[:2] for g in got] == [
        ("ok", 0.5),
        ("error", None),
        ("abstain", None),
        ("error", None),
        ("ok", 1.0),
        ("error", None),
    ]
    assert (
        "str" in got[1][2]
        and got[2][2] == NONE_REASON
        and "bytes" in got[3][2]
        and got[5][2] == "score is NaN"
    )


async def test_a_trl_function_returning_one_score_too_few_is_an_error_naming_both_counts(
    module: str, tmp_path: Path
) -> None:
    inputs = [ToolInput("q", f"r{i}", "ref") for i in range(40)]
    got = await _scores(_spec(module, "one_short", tmp_path), module, inputs)
    assert {g[:2] for g in got} == {("error", None)}
    assert got[0][2] == f"{module}:one_short returned 39 scores for 40 completions"
    got = await _scores(_spec(module, "one_text", tmp_path), module, inputs[:3])
    assert (
        got[0][:2] == ("error", None)
        and "returned a str, not a list of scores for 3 completions" in got[0][2]
    )


async def test_a_function_that_raises_is_an_error_with_its_exception_and_traceback_not_an_abstain(
    module: str, tmp_path: Path
) -> None:
    spec = _spec(module, "plural_reward", tmp_path)
    tool = make_tool(spec, allowed_prefixes=["rlar.", module])
    ok, bad = await tool.score_batch([ToolInput("q", "apple"), ToolInput("q", "apples")])
    assert (ok.status, ok.score) == ("ok", 1.0)
    assert bad.status == "error" and bad.score is None
    line = SOURCE.splitlines().index('        raise ValueError("boom")') + 1
    assert bad.reason == f"raised ValueError: boom (at {module}.py:{line} in plural_reward)"
    assert bad.details["exception"] == "ValueError"
    tb = bad.details["traceback"]
    assert 'raise ValueError("boom")' in tb and tb.endswith("ValueError: boom") and "pyfunc.py" not in tb


async def test_hung_samples_of_a_user_function_time_out_together_not_one_after_another(
    module: str, tmp_path: Path
) -> None:
    spec = _spec(module, "sleeper", tmp_path, deadline_s=2.0, concurrency=8)
    assert spec.params["concurrency"] == 8
    assert _spec(module, "capitalised", tmp_path).params["concurrency"] == 4  # the default
    inputs = [ToolInput("q", f"r{i}", "ref") for i in range(8)]
    async with ToolExecutor(timeout_s=2.0, load_timeout_s=60, allowed_prefixes=["rlar.", module]) as ex:
        assert await ex.prepare(spec) is None  # the workers are up: the clock below measures the deadlines
        t0 = time.perf_counter()
        got = await ex.score_batch(spec, inputs)
        wall = time.perf_counter() - t0
    assert [(r.status, r.reason) for r in got] == [("abstain", "timeout after 2s")] * 8
    assert wall < 8.0, f"8 samples with a 2 s deadline took {wall:.1f}s: serialised (16 s) or worse"


async def test_a_trl_reward_function_works_unchanged_through_the_adapter(module: str, tmp_path: Path) -> None:
    spec = _spec(
        module, "trl_reward", tmp_path, reference_kwarg="solution", conversational=True, needs_reference=False
    )
    assert spec.params["style"] == "trl"
    got = await _scores(spec, module, [APPLE, LOWER, NOREF])
    assert got == [("ok", 1.0, ""), ("ok", 0.0, ""), ("abstain", None, NONE_REASON)]


async def test_a_module_the_worker_does_not_trust_is_refused_and_a_changed_one_needs_a_new_version(
    module: str, tmp_path: Path
) -> None:
    spec = _spec(module, "capitalised", tmp_path)
    async with ToolExecutor(timeout_s=20, load_timeout_s=60) as ex:  # default prefixes: rlar. only
        (res,) = await ex.score_batch(spec, [APPLE])
    assert (
        res.status == "error"
        and f"imports module {module!r}, which is not under an allowed prefix" in res.reason
    )
    (tmp_path / f"{module}.py").write_text(SOURCE.replace('"exact"', '"EXACT"'))
    async with ToolExecutor(timeout_s=20, load_timeout_s=60, allowed_prefixes=["rlar.", module]) as ex:
        (res,) = await ex.score_batch(spec, [APPLE])
        assert res.status == "error" and "changed since capitalised v1 was registered" in res.reason
        new = _spec(module, "capitalised", tmp_path)
        assert new.content_hash != spec.content_hash
        (res,) = await ex.score_batch(new, [APPLE])
        assert (res.status, res.reason) == ("ok", "EXACT")


@pytest.mark.sandbox
async def test_an_untrusted_function_runs_only_in_the_sandbox_jail(module: str, tmp_path: Path) -> None:
    spec = _spec(module, "trl_reward", tmp_path, kind="sandbox", reference_kwarg="solution")
    assert spec.impl == "rlar.tools.synthesized:SynthesizedTool" and "def trl_reward" in spec.code
    tool = make_tool(spec)  # no prefix needed: nothing is imported here
    got = [(r.status, r.score) for r in await tool.score_batch([APPLE, LOWER])]
    assert got == [("ok", 1.0), ("ok", 0.0)]
    with pytest.raises(PythonToolError, match="no function 'nope'"):
        _spec(module, "nope", tmp_path, kind="sandbox")


def test_config_errors_are_caught_when_the_tool_is_declared(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="String should match pattern"):
        PythonToolConfig(name="x", python="not a path", description="d")
    with pytest.raises(PythonToolError, match="cannot import 'no_such_module_here'"):
        python_tool_spec(
            PythonToolConfig(name="x", python="no_such_module_here:f", description="d", path=str(tmp_path))
        )


def _register(module: str, tmp_path: Path, nats_url: str) -> str:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlar.app.cli",
            "tools",
            "register",
            "--python",
            f"{module}:capitalised",
            "--name",
            f"cap_{module}",
            "--description",
            "exact case-sensitive match of a capitalised word",
            "--task-types",
            "capitalize",
            "--path",
            str(tmp_path),
            "--needs-reference",
            "--nats",
            nats_url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=actor_env(),
        cwd=REPO,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


async def test_registered_from_the_cli_and_scored_by_a_reward_worker_that_trusts_it(
    bus: Bus, nats_url: str, module: str, tmp_path: Path
) -> None:
    out = await asyncio.to_thread(_register, module, tmp_path, nats_url)
    assert f"registered cap_{module} v1 (rule, sample style" in out and "allowed_prefixes" in out
    assert f"registered cap_{module} v1" in await asyncio.to_thread(_register, module, tmp_path, nats_url)
    spec = await ToolRegistry(bus).get(f"cap_{module}")
    assert spec is not None and spec.task_types == ["capitalize"] and spec.params["needs_reference"] is True
    cfg = RewardConfig(
        nats=NatsConfig(url=nats_url),
        topology=TEST_TOPOLOGY,
        run_dir=str(tmp_path / "w"),
        kinds=["rule"],
        allowed_prefixes=["rlar.", module],
        python_path=[str(tmp_path)],
        heartbeat_s=0.5,
    )
    got: list[RewardGroup] = []
    done = asyncio.Event()

    async def on_reward(msg: RewardGroup, raw: object) -> None:
        got.append(msg)
        done.set()

    task = f"cap_{module}"
    await bus.subscribe(subjects.rewards(task), RewardGroup, on_reward)
    async with running(RewardWorker(cfg)):
        req = ScoreGroup(
            prompt_id=f"{task}-p",
            generation="g",
            task=task,
            tools=[ToolRef(tool=spec.name, kind="rule")],
            query=APPLE.query,
            reference=APPLE.reference,
            items=[ScoreItem(index=0, response=APPLE.response), ScoreItem(index=1, response=LOWER.response)],
        )
        await bus.js_publish(subjects.score("rule"), req, msg_id=f"req/{req.prompt_id}")
        await asyncio.wait_for(done.wait(), 60)
    (group,) = got
    assert group.tool_version == 1
    by_index = {item.index: item for item in group.items}
    assert (by_index[0].status, by_index[0].score) == ("ok", 1.0)
    assert (by_index[1].status, by_index[1].score, by_index[1].reason) == ("ok", 0.0, "'apple' != 'Apple'")
    (tmp_path / f"{module}.py").write_text(
        SOURCE
        + textwrap.dedent("""

        def extra(query, response, reference, metadata):
            return 1.0
        """)
    )
    assert f"registered cap_{module} v2" in await asyncio.to_thread(_register, module, tmp_path, nats_url)
