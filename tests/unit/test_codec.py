from __future__ import annotations

from typing import Any

import msgpack
import pytest

from bus import codec
from bus import messages as m

EXAMPLES: list[Any] = [
    m.Heartbeat(
        actor="rollout",
        instance="h-1",
        host="h",
        pid=10,
        uptime_s=1.5,
        counters={"samples": 3},
        info={"policy_version": 2},
    ),
    m.DeadLetter(subject="rlar.samples.arith", reason="bad", payload=b"\x00\xff"),
    m.Event(actor="sup", kind="crash", message="exit 1", level="error", data={"rc": 1}),
    m.Metrics(actor="learner", step=3, values={"loss": 0.5, "reward/arith": 0.25}),
    m.Prompt(
        prompt_id="p1",
        task="arith",
        prompt=[{"role": "user", "content": "1+1="}],
        reference="2",
        tools=[m.ToolRef(tool="numeric_match", version=1, kind=m.ToolKind.RULE, weight=1.0)],
    ),
    m.SampleGroup(
        prompt_id="p1",
        generation="g1",
        task="arith",
        group_size=2,
        prompt_token_ids=[1, 2],
        completions=[
            m.Completion(index=0, token_ids=[3, 4], logprobs=[-0.1, -2.0], text="2"),
            m.Completion(index=1, token_ids=[5], logprobs=[-0.5], text="3", finish_reason="stop"),
        ],
        policy_version=4,
        sampling=m.Sampling(temperature=0.7, top_p=0.9, top_k=40),
    ),
    m.ScoreGroup(
        prompt_id="p1",
        generation="g1",
        task="arith",
        query="1+1=",
        reference="2",
        tools=[m.ToolRef(tool="numeric_match", kind=m.ToolKind.RULE, needs_reference=True)],
        items=[m.ScoreItem(index=0, response="2"), m.ScoreItem(index=1, response="3")],
    ),
    m.RewardGroup(
        prompt_id="p1",
        generation="g1",
        task="arith",
        tool="numeric_match",
        tool_version=1,
        items=[
            m.ScoredItem(index=0, status="ok", score=1.0),
            m.ScoredItem(index=1, status="abstain", reason="no number", details={"x": [1]}),
        ],
    ),
    m.WeightsAnnounce(version=3, uri="file:///tmp/w", sha256="ab", size_bytes=10, step=30),
    m.LearnerProgress(version=3, step=30, consumed_prompts=240, dropped_prompts=1, consumed_ids=["p1"]),
    m.SandboxRequest(code="print(1)", tests=["assert True"], style="mbpp", request_id="r1"),
    m.SandboxReply(request_id="r1", status="ok", result={"passed": 1}),
    m.ToolRegistered(name="three_bullets", version=1, kind="rule", by="synthesizer"),
    m.RouteDecision(
        signature="sig",
        task="arith",
        tools=[m.ToolRef(tool="numeric_match", kind=m.ToolKind.RULE)],
        backend="offline",
        confidence=0.9,
    ),
    m.ToolRequest(request_id="q1", signature="sig", task="bullets", description="three bullets"),
]


def test_examples_cover_every_registered_type() -> None:
    assert {type(e).__name__ for e in EXAMPLES} == set(codec.registered_types())


@pytest.mark.parametrize("msg", EXAMPLES, ids=lambda e: type(e).__name__)
def test_every_message_type_round_trips_through_msgpack(msg: Any) -> None:
    data = codec.encode(msg)
    assert isinstance(data, bytes)
    assert codec.decode(data, type(msg)) == msg
    assert codec.decode(data) == msg
    raw = msgpack.unpackb(data)
    assert raw["_v"] == codec.SCHEMA_VERSION and raw["_t"] == type(msg).__name__


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\xc1",
        b"\x92\x01",
        codec.encode(EXAMPLES[0])[:-4],
        msgpack.packb([1, 2, 3]),
        msgpack.packb({"a": 1}),
    ],
)
def test_malformed_bytes_raise_a_typed_error(payload: bytes) -> None:
    with pytest.raises(codec.MalformedPayload):
        codec.decode(payload)


def test_a_field_of_the_wrong_type_raises_field_error() -> None:
    d = codec.to_dict(EXAMPLES[5])
    d["prompt_token_ids"] = ["not", "ints"]
    with pytest.raises(codec.FieldError, match="prompt_token_ids"):
        codec.decode(msgpack.packb(d, use_bin_type=True))


def test_a_missing_required_field_raises_field_error() -> None:
    d = codec.to_dict(EXAMPLES[7])
    del d["prompt_id"]
    with pytest.raises(codec.FieldError, match="prompt_id"):
        codec.decode(msgpack.packb(d, use_bin_type=True))


def test_an_unexpected_message_type_raises_wrong_message_type() -> None:
    with pytest.raises(codec.WrongMessageType):
        codec.decode(codec.encode(EXAMPLES[0]), m.SampleGroup)


def test_an_unknown_type_tag_and_another_schema_version_are_rejected() -> None:
    d = codec.to_dict(EXAMPLES[0])
    with pytest.raises(codec.UnknownMessageType):
        codec.decode(msgpack.packb({**d, "_t": "Nope"}))
    with pytest.raises(codec.SchemaVersionMismatch):
        codec.decode(msgpack.packb({**d, "_v": 99}))


def test_ints_are_accepted_where_floats_are_declared_and_unknown_fields_are_ignored() -> None:
    d = codec.to_dict(EXAMPLES[7])
    d["weight"] = 1
    d["items"][0]["score"] = 1
    d["items"][0]["added_in_a_later_release"] = "x"
    d["added_in_a_later_release"] = "x"
    r = codec.decode(msgpack.packb(d), m.RewardGroup)
    assert r.weight == 1.0 and isinstance(r.weight, float)
    assert r.items[0].score == 1.0 and isinstance(r.items[0].score, float)


def test_bool_is_not_accepted_as_an_int() -> None:
    d = codec.to_dict(EXAMPLES[0])
    d["pid"] = True
    with pytest.raises(codec.FieldError):
        codec.decode(msgpack.packb(d))


def test_tool_refs_travel_as_plain_maps_and_come_back_typed() -> None:
    prompt = EXAMPLES[4]
    raw = msgpack.unpackb(codec.encode(prompt))
    assert raw["tools"] == [
        {"tool": "numeric_match", "kind": "rule", "version": 1, "weight": 1.0, "needs_reference": False}
    ]
    # a route written by hand (or by an older sender): ints for floats, no needs_reference
    raw["tools"] = [{"tool": "bleu2", "kind": "metric", "weight": 1}]
    back = codec.decode(msgpack.packb(raw), m.Prompt)
    assert back.tools == [m.ToolRef(tool="bleu2", kind=m.ToolKind.METRIC, version=0, weight=1.0)]
    assert isinstance(back.tools[0], m.ToolRef) and isinstance(back.tools[0].weight, float)


@pytest.mark.parametrize(
    "tools",
    [
        [{"tool": "x", "kind": "oracle"}],  # not a tool kind
        [{"tool": "x"}],  # no kind
        [{"tool": "x", "kind": "rule", "version": -1}],
        [{"tool": "x", "kind": "rule", "weight": "heavy"}],
        ["x"],
    ],
)
def test_a_malformed_tool_ref_raises_field_error(tools: list[Any]) -> None:
    raw = codec.to_dict(EXAMPLES[4])
    raw["tools"] = tools
    with pytest.raises(codec.FieldError):
        codec.decode(msgpack.packb(raw))


def test_tool_kinds_are_defined_once() -> None:
    from bus import subjects
    from rlar.tools import ToolKind

    assert ToolKind is m.ToolKind and subjects.TOOL_KINDS == tuple(k.value for k in m.ToolKind)


def test_a_nested_item_of_the_wrong_type_raises_field_error() -> None:
    d = codec.to_dict(EXAMPLES[5])
    d["completions"][1]["token_ids"] = [1, "x"]
    with pytest.raises(codec.FieldError, match="completions"):
        codec.decode(msgpack.packb(d))


@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("token_ids", [1, 2, 3], True),
        ("token_ids", [], True),
        ("token_ids", [1, True], False),  # a bool is not a token id
        ("token_ids", [1, 2.0], False),
        ("token_ids", [1, None], False),
        ("logprobs", [-0.5, -1], True),  # an int is a float on the wire
        ("logprobs", [-0.5, False], False),
        ("logprobs", [-0.5, "x"], False),
    ],
)
def test_lists_of_numbers_are_checked_element_by_element(field: str, value: Any, ok: bool) -> None:
    d = codec.to_dict(EXAMPLES[5])
    d["completions"][0][field] = value
    d["completions"][0]["logprobs" if field == "token_ids" else "token_ids"] = [0] * (len(value))
    if ok:
        got = codec.decode(msgpack.packb(d))
        assert list(getattr(got.completions[0], field)) == list(value)
    else:
        with pytest.raises(codec.FieldError, match="completions"):
            codec.decode(msgpack.packb(d))


@pytest.mark.parametrize(
    ("field", "value", "ok"),
    [
        ("score", None, True),  # float | None
        ("score", 0.5, True),
        ("score", 1, True),
        ("score", True, False),  # a bool is not a number in a union either
        ("score", "0.5", False),
        ("details", {"k": [1]}, True),  # dict
        ("details", [1], False),
        ("cached", False, True),  # bool
        ("cached", 0, False),
        ("reason", None, False),  # str: no None
        ("score", _MISSING := object(), True),  # an optional field left out takes its default
        ("reason", _MISSING, True),
    ],
)
def test_scalar_fields_and_unions_are_checked_by_their_decoded_type(field: str, value: Any, ok: bool) -> None:
    d = codec.to_dict(EXAMPLES[7])
    if value is _MISSING:
        del d["items"][0][field]
    else:
        d["items"][0][field] = value
    if ok:
        got = codec.decode(msgpack.packb(d), m.RewardGroup).items[0]
        assert getattr(got, field) == (
            getattr(m.ScoredItem(index=0, status="ok"), field) if value is _MISSING else value
        )
    else:
        with pytest.raises(codec.FieldError, match="items"):
            codec.decode(msgpack.packb(d), m.RewardGroup)


@pytest.mark.parametrize("n", [1, 3, 64, 257])
def test_a_group_too_large_for_one_payload_is_split_by_index_and_loses_nothing(n: int) -> None:
    group = m.SampleGroup(
        prompt_id="p",
        generation="g",
        task="t",
        group_size=n,
        prompt_token_ids=list(range(50)),
        completions=[
            m.Completion(index=i, token_ids=list(range(100)), logprobs=[-1.5] * 100, text="x" * (i % 7) * 40)
            for i in range(n)
        ],
        policy_version=1,
    )
    limit = 3000
    parts = codec.encode_parts(group, "completions", limit)
    assert all(len(data) <= limit for _, data in parts)
    assert [c.index for part, _ in parts for c in part.completions] == list(range(n))
    assert all(codec.decode(data, m.SampleGroup) == part for part, data in parts)
    whole = codec.encode_parts(group, "completions", 10**9)
    assert len(whole) == 1 and whole[0][0] is group


def test_one_item_over_the_limit_is_refused_with_the_sizes() -> None:
    big = m.ScoreGroup(
        prompt_id="p",
        generation="g",
        task="t",
        tools=[],
        query="q",
        items=[m.ScoreItem(index=0, response="x" * 5000)],
    )
    with pytest.raises(codec.PayloadTooLarge, match="exceeds the 1000-byte limit"):
        codec.encode_parts(big, "items", 1000)
