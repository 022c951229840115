"""Property-based tests (hypothesis): the codec, GRPO advantages and masking, config parsing.

Strategies are derived from the code's own declarations, so what is added later is covered without
editing this file: every registered wire type (from its field annotations), every actor's config model
and the models nested in it. An annotation the strategy builder does not know fails loudly.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
import typing
from typing import Any, Literal
from unittest import mock

import msgpack
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from bus import codec
from rlar.config import ConfigError, build
from rlar.learn.grpo import group_advantages, grpo_token_loss

# ---- the codec ---------------------------------------------------------------------------------------

# Values MessagePack carries natively (floats without NaN, which is not equal to itself).
INTS = st.integers(-(2**63), 2**64 - 1)
FLOATS = st.floats(allow_nan=False)
SCALARS = st.none() | st.booleans() | INTS | FLOATS | st.text(max_size=20) | st.binary(max_size=20)
NATIVE = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)


def for_annotation(tp: Any) -> st.SearchStrategy[Any]:
    """Values of a wire field's declared type."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return NATIVE
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(for_annotation(a) for a in typing.get_args(tp)))
    if tp is type(None):
        return st.none()
    simple = {
        float: FLOATS,
        int: INTS,
        str: st.text(max_size=30),
        bool: st.booleans(),
        bytes: st.binary(max_size=30),
    }
    if tp in simple:
        return simple[tp]
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        return st.lists(for_annotation(arg), max_size=5)
    if origin is dict or tp is dict:
        return st.dictionaries(st.text(max_size=8), NATIVE, max_size=4)
    if isinstance(tp, type) and issubclass(tp, enum.StrEnum):
        return st.sampled_from(list(tp))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # a message or a nested wire struct
        return messages_of(tp)
    raise AssertionError(f"test_properties does not know how to generate {tp!r}: teach for_annotation")


def messages_of(cls: type) -> st.SearchStrategy[Any]:
    """Instances of a wire dataclass; values its own validation (``__post_init__``) refuses are redrawn."""
    hints = typing.get_type_hints(cls)
    fields = st.fixed_dictionaries({f.name: for_annotation(hints[f.name]) for f in dataclasses.fields(cls)})

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        for _ in range(20):
            try:
                return cls(**draw(fields))
            except (TypeError, ValueError):
                continue
        assume(False)

    return build()


WIRE_NAMES = sorted(codec.registered_types())
ANY_MESSAGE = st.sampled_from(WIRE_NAMES).flatmap(lambda n: messages_of(codec.registered_types()[n]))


@given(ANY_MESSAGE)
def test_every_wire_type_round_trips(msg: Any) -> None:
    data = codec.encode(msg)
    assert codec.decode(data, type(msg)) == msg
    assert codec.decode(data) == msg


@given(ANY_MESSAGE, st.sampled_from(WIRE_NAMES))
def test_a_message_of_another_type_is_refused_as_such(msg: Any, other: str) -> None:
    expected = codec.registered_types()[other]
    assume(expected is not type(msg))
    with pytest.raises(codec.WrongMessageType):
        codec.decode(codec.encode(msg), expected)


def decodes_or_typed_error(data: bytes, expected: type | None) -> Any:
    """decode(data) either gives a message or raises a DecodeError; anything else is a bug."""
    try:
        return codec.decode(data, expected)
    except codec.DecodeError as exc:
        assert exc.reason
        return None


@given(st.binary(max_size=200), st.sampled_from([None, *WIRE_NAMES]))
def test_garbage_bytes_give_a_typed_error(data: bytes, name: str | None) -> None:
    expected = codec.registered_types()[name] if name else None
    msg = decodes_or_typed_error(data, expected)
    assert msg is None or expected is None or isinstance(msg, expected)


@given(ANY_MESSAGE, st.data())
def test_a_truncated_message_gives_a_typed_error(msg: Any, data: st.DataObject) -> None:
    payload = codec.encode(msg)
    cut = data.draw(st.integers(0, len(payload) - 1))
    with pytest.raises(codec.DecodeError):
        codec.decode(payload[:cut], type(msg))


@given(ANY_MESSAGE, st.data())
def test_a_corrupted_byte_gives_a_message_or_a_typed_error(msg: Any, data: st.DataObject) -> None:
    payload = bytearray(codec.encode(msg))
    i = data.draw(st.integers(0, len(payload) - 1))
    payload[i] = data.draw(st.integers(0, 255))
    decodes_or_typed_error(bytes(payload), type(msg))


@given(ANY_MESSAGE, st.data())
def test_a_field_of_the_wrong_type_is_named_in_the_error(msg: Any, data: st.DataObject) -> None:
    obj = codec.to_dict(msg)
    field = data.draw(st.sampled_from([k for k in obj if k not in (codec.TYPE_KEY, codec.VERSION_KEY)]))
    obj[field] = data.draw(NATIVE)
    try:
        out = codec.decode(msgpack.packb(obj, use_bin_type=True), type(msg))
    except codec.FieldError as exc:
        assert f".{field}:" in exc.reason
    else:  # the value happened to fit the declared type
        assert getattr(out, field) == obj[field]


@given(st.dictionaries(st.text(max_size=6), NATIVE, max_size=5), st.sampled_from(WIRE_NAMES))
def test_arbitrary_maps_give_a_typed_error(obj: dict[str, Any], name: str) -> None:
    obj = {codec.TYPE_KEY: name, codec.VERSION_KEY: codec.SCHEMA_VERSION, **obj}
    decodes_or_typed_error(msgpack.packb(obj, use_bin_type=True), codec.registered_types()[name])


def _maps_in(obj: Any) -> list[dict[str, Any]]:
    """Every map of a payload: the message's own and those of its nested structs (and of its dict fields)."""
    found: list[dict[str, Any]] = []
    if isinstance(obj, dict):
        found.append(obj)
        for v in obj.values():
            found += _maps_in(v)
    elif isinstance(obj, list):
        for v in obj:
            found += _maps_in(v)
    return found


def _outcome(build: Any) -> tuple[str, str]:
    """What a decode gave, with every value's type (1 and 1.0 differ): the message, or the error and reason."""
    try:
        msg = build()
    except codec.DecodeError as exc:
        return type(exc).__name__, exc.reason
    return "ok", repr(codec.to_dict(msg))


@settings(max_examples=300)
@given(ANY_MESSAGE, st.data())
def test_the_compiled_decoder_decides_as_the_generic_path(msg: Any, data: st.DataObject) -> None:
    """One change anywhere in a payload map (a value replaced, a field dropped, a field added): decoding
    gives what the generic checks and build give, the same message or the same error and reason."""
    obj = codec.unpack(codec.encode(msg))
    target = data.draw(st.sampled_from(_maps_in(obj)))
    keys = [k for k in target if k not in (codec.TYPE_KEY, codec.VERSION_KEY)]
    change = data.draw(st.sampled_from(["set", "drop", "add"] if keys else ["add"]))
    if change == "add":
        target[data.draw(st.text(max_size=6))] = data.draw(NATIVE)
    else:
        key = data.draw(st.sampled_from(keys))
        if change == "drop":
            del target[key]
        else:
            target[key] = data.draw(NATIVE)
    obj = codec.unpack(msgpack.packb(obj, use_bin_type=True))
    spec = codec._BY_NAME[type(msg).__name__]
    with mock.patch("time.time", return_value=1.0):  # a dropped timestamp takes the same default both ways
        fast = _outcome(lambda: codec.from_dict(obj, type(msg)))
        assert fast == _outcome(lambda: codec._build_checked(spec, obj))


@given(ANY_MESSAGE)
def test_the_compiled_decoder_and_encoder_match_the_generic_ones(msg: Any) -> None:
    spec = codec._BY_NAME[type(msg).__name__]
    generic = {codec.TYPE_KEY: spec.name, codec.VERSION_KEY: codec.SCHEMA_VERSION, **spec.dump(msg)}
    assert codec.to_dict(msg) == generic
    assert codec.encode(msg) == msgpack.packb(generic, use_bin_type=True)
    obj = codec.unpack(codec.encode(msg))
    decoded = spec.fast_load(obj)  # a payload as senders write it takes the compiled path, not the fallback
    assert decoded is not None
    assert repr(codec.to_dict(decoded)) == repr(codec.to_dict(spec.build(obj)))


@given(ANY_MESSAGE, st.integers(0, 127), st.binary(max_size=8))
def test_extension_types_are_not_part_of_the_wire_format(msg: Any, code: int, blob: bytes) -> None:
    obj = codec.to_dict(msg)
    obj["x_extra"] = [msgpack.ExtType(code, blob)]  # even in a field no one reads
    with pytest.raises(codec.MalformedPayload, match="extension"):
        codec.decode(msgpack.packb(obj, use_bin_type=True), type(msg))
    obj["x_extra"] = msgpack.Timestamp(1, 500_000_000)  # the one standard extension: float seconds
    assert codec.unpack(msgpack.packb(obj, use_bin_type=True))["x_extra"] == 1.5


# ---- GRPO advantages and masking --------------------------------------------------------------------

U64, U32 = torch.finfo(torch.float64).eps / 2, torch.finfo(torch.float32).eps / 2
REWARDS = st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=16)


def advantages(rewards: list[float], mask: list[bool] | None = None) -> torch.Tensor:
    m = None if mask is None else torch.tensor(mask)
    return group_advantages(torch.tensor(rewards, dtype=torch.float64), m)


@given(REWARDS, st.floats(-1e3, 1e3))
def test_advantages_do_not_change_when_every_reward_is_shifted(rewards: list[float], c: float) -> None:
    r = torch.tensor(rewards, dtype=torch.float64)
    std = float(r.std())
    assume(abs(std - 1e-6) > 1e-7)  # not on the all-equal threshold itself
    a, b = advantages(rewards), advantages([x + c for x in rewards])
    # Rounding of x + c, the mean and the centring in float64, amplified by 1/std; then one fp32 rounding.
    n = len(rewards)
    tol = (4 * n + 8) * U64 * (float(r.abs().max()) + abs(c)) / (std + 1e-6) + 2 * U32 * a.abs()
    assert bool(((a - b).abs() <= tol).all()), (a, b)


@given(st.floats(-1e6, 1e6), st.integers(2, 16), st.lists(st.booleans(), min_size=16, max_size=16))
def test_an_all_equal_group_gets_zero_advantage(value: float, n: int, mask: list[bool]) -> None:
    assert torch.equal(advantages([value] * n), torch.zeros(n))
    assert torch.equal(advantages([value] * n, mask[:n]), torch.zeros(n))


@given(REWARDS, st.data())
def test_masked_samples_get_zero_advantage_and_do_not_move_the_others(
    rewards: list[float], data: st.DataObject
) -> None:
    n = len(rewards)
    mask = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    a = advantages(rewards, mask)
    assert all(float(a[i]) == 0.0 for i in range(n) if not mask[i])
    other = st.floats(allow_nan=True, allow_infinity=True)
    changed = [x if keep else data.draw(other) for x, keep in zip(rewards, mask, strict=True)]
    assert torch.equal(advantages(changed, mask), a)
    if sum(mask) >= 2 and float(a.abs().sum()) > 0:
        kept = a[torch.tensor(mask)].to(torch.float64)
        assert abs(float(kept.sum())) <= (4 * n + 8) * U32 * float(kept.abs().sum())


@st.composite
def loss_inputs(draw: st.DrawFn) -> dict[str, torch.Tensor]:
    b, t = draw(st.integers(1, 5)), draw(st.integers(2, 8))
    vals = st.floats(-8.0, 0.0)

    def grid() -> torch.Tensor:
        return torch.tensor(draw(st.lists(st.lists(vals, min_size=t, max_size=t), min_size=b, max_size=b)))

    mask = torch.tensor(
        draw(st.lists(st.lists(st.booleans(), min_size=t, max_size=t), min_size=b, max_size=b))
    )
    mask[:, 0] = False
    adv = torch.tensor(draw(st.lists(st.floats(-3, 3), min_size=b, max_size=b)))
    return {"logprobs": grid(), "prox": grid(), "behav": grid(), "adv": adv, "mask": mask}


@given(loss_inputs(), st.sampled_from(["token-mean", "seq-mean-token-mean"]), st.data())
def test_masked_positions_never_contribute_to_the_loss_or_its_gradient(
    x: dict[str, torch.Tensor], agg: Literal["token-mean", "seq-mean-token-mean"], data: st.DataObject
) -> None:
    def loss(lp: torch.Tensor, prox: torch.Tensor, behav: torch.Tensor, adv: torch.Tensor) -> tuple[Any, Any]:
        lp = lp.clone().requires_grad_(True)
        out = grpo_token_loss(lp, prox, behav, adv, x["mask"], loss_agg=agg)
        out.loss.backward()
        return out, lp.grad

    base, grad = loss(x["logprobs"], x["prox"], x["behav"], x["adv"])
    assert bool((grad[~x["mask"]] == 0).all())
    junk = st.floats(-1e30, 1e30)

    def scramble(t: torch.Tensor) -> torch.Tensor:
        noise = torch.tensor(data.draw(st.lists(junk, min_size=t.numel(), max_size=t.numel()))).view(t.shape)
        return torch.where(x["mask"], t, noise.to(t.dtype))

    silent = ~x["mask"].any(dim=1)  # rows with no response token: their advantage cannot matter either
    adv = torch.where(silent, torch.tensor(data.draw(st.floats(-1e30, 1e30))), x["adv"])
    other, _ = loss(scramble(x["logprobs"]), scramble(x["prox"]), scramble(x["behav"]), adv)
    assert float(other.loss.detach()) == float(base.loss.detach())
    assert other.metrics == base.metrics and other.tokens == base.tokens


# ---- config parsing -----------------------------------------------------------------------------------


def config_roots() -> dict[str, type[BaseModel]]:
    """Every top-level config model a run document is validated into: each actor kind's and rlar train's."""
    from actors import KINDS, resolve
    from rlar.app.train import PolicySection, TrainSection

    roots: dict[str, type[BaseModel]] = {f"[{resolve(k)[1]}]": resolve(k)[0].Config for k in KINDS}
    roots.update({"[train]": TrainSection, "[policy]": PolicySection})
    return roots


def _models_in(tp: Any) -> list[tuple[type[BaseModel], Any]]:
    """(model, how to nest a dict for it) for each model an annotation can hold."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _models_in(typing.get_args(tp)[0])
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [(tp, lambda d: d)]
    out: list[tuple[type[BaseModel], Any]] = []
    if origin in (typing.Union, types.UnionType):
        for a in typing.get_args(tp):
            out += _models_in(a)
    elif origin is list:
        out += [(m, lambda d, w=w: [w(d)]) for m, w in _models_in(typing.get_args(tp)[0])]
    elif origin is dict:
        out += [(m, lambda d, w=w: {"some_name": w(d)}) for m, w in _models_in(typing.get_args(tp)[1])]
    return out


def nested_paths(root: type[BaseModel], depth: int = 4) -> list[tuple[str, type[BaseModel], Any]]:
    """(dotted path, model, wrap) for the root and every model reachable through its fields; ``wrap(d)``
    turns the model's dict ``d`` into the root's document."""
    found = [("", root, lambda d: d)]
    if depth == 0:
        return found
    for name, info in root.model_fields.items():
        for model, wrap in _models_in(info.annotation):
            for path, inner, inner_wrap in nested_paths(model, depth - 1):
                found.append(
                    (
                        f"{name}{'.' + path if path else ''}",
                        inner,
                        lambda d, n=name, w=wrap, iw=inner_wrap, m=model: {n: w({**_tags(m), **iw(d)})},
                    )
                )
    return found


def _tags(model: type[BaseModel]) -> dict[str, Any]:
    """The single-value Literal fields of a model (a tagged union's discriminator selects it)."""
    out = {}
    for name, info in model.model_fields.items():
        args = typing.get_args(info.annotation) if typing.get_origin(info.annotation) is Literal else ()
        if len(args) == 1:
            out[name] = args[0]
    return out


CONFIG_CASES = [
    (where, path, model, wrap)
    for where, root in sorted(config_roots().items())
    for path, model, wrap in nested_paths(root)
]
KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,14}", fullmatch=True).map(lambda k: f"x_{k}")


@pytest.mark.parametrize("case", CONFIG_CASES, ids=lambda c: f"{c[0]}{'.' + c[1] if c[1] else ''}")
@settings(max_examples=10)
@given(key=KEYS, value=NATIVE)
def test_an_unknown_config_key_anywhere_is_refused_by_name(
    case: tuple[str, str, type[BaseModel], Any], key: str, value: Any
) -> None:
    where, _, model, wrap = case
    assume(key not in model.model_fields)
    with pytest.raises(ConfigError) as err:
        build(config_roots()[where], wrap({**_tags(model), key: value}), where=where)
    assert re.search(rf"(^|[ .]){key}: ", str(err.value), re.M), str(err.value)
