"""The one codec: wire messages <-> MessagePack bytes, with a schema version and typed errors.

A payload is a MessagePack map ``{"_t": TYPE, "_v": SCHEMA_VERSION, field: value, ...}``. Decoding checks,
in order: valid MessagePack, a map with a known ``_t``, a supported ``_v``, the expected type (if the
caller names one), every required field present and every field of the declared type. Any failure
raises a :class:`DecodeError` subclass that carries the reason, so subscribers can dead-letter the payload
and keep going. Unknown extra fields are ignored (newer senders may add optional fields).

Fields may hold nested structs (:func:`wire_struct` dataclasses, alone or in lists), sent as plain maps of
their fields and rebuilt (and checked the same way) on decode, and ``StrEnum`` values, sent as strings and
checked against the enum's members.

Each type's decoder and encoder are compiled once, when it is registered (:func:`_compile`): a payload
that holds every field, each of its declared type — what every sender of this build writes — is checked and
built by one generated function; any other payload takes the generic path, which decides (and words the
error) exactly as before. Encoding reuses one ``msgpack.Packer`` per thread.
"""

from __future__ import annotations

import dataclasses
import enum
import threading
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import msgpack

SCHEMA_VERSION = 1
TYPE_KEY = "_t"
VERSION_KEY = "_v"

T = TypeVar("T")


class DecodeError(ValueError):
    """A payload could not be turned into a wire message. ``reason`` says why, for the dead-letter."""

    def __init__(self, reason: str, *, type_name: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.type_name = type_name


class MalformedPayload(DecodeError):
    """Not MessagePack, or not a map carrying a type tag."""


class UnknownMessageType(DecodeError):
    """The ``_t`` tag names no registered wire type."""


class SchemaVersionMismatch(DecodeError):
    """The sender speaks another schema version."""


class WrongMessageType(DecodeError):
    """A valid message, but not of the type the subscriber expects."""


class FieldError(DecodeError):
    """A required field is missing or a field holds a value of the wrong type."""


Check = Callable[[Any], bool]


# The value types a primitive annotation accepts, by exact type: what MessagePack decodes to (a bool is not an
# int, an int is a float). Checks run on decoded maps only; a subclass such as an IntEnum member appears only on
# encode, which does not check.
_EXACT_TYPES: dict[Any, frozenset[type]] = {
    int: frozenset({int}),
    float: frozenset({int, float}),
    str: frozenset({str}),
    bool: frozenset({bool}),
    bytes: frozenset({bytes}),
}


class _Absent:
    """The type of the value a type check sees for a field the map does not hold (always allowed there)."""


_ABSENT = _Absent()


def _accept(v: Any) -> bool:
    return True


def _exact(tp: Any) -> frozenset[type] | None:
    """The exact value types a decoded value of annotation ``tp`` may have, when that alone decides (a
    primitive, ``None``, a plain dict, or a union of these): the check is then one set lookup."""
    if tp in _EXACT_TYPES:
        return _EXACT_TYPES[tp]
    if tp is type(None):
        return frozenset({type(None)})
    origin = typing.get_origin(tp)
    if tp is dict or origin is dict:
        return frozenset({dict})
    if origin in (typing.Union, types.UnionType):
        sets = [_exact(a) for a in typing.get_args(tp)]
        if all(t is not None for t in sets):
            return frozenset().union(*typing.cast(list[frozenset[type]], sets))
    return None


def _checker(tp: Any) -> Check:
    """Build a runtime type check for a field annotation (the subset wire types use), for decoded values:
    the types MessagePack decodes to, checked exactly (a bool is not an int; an int is a float)."""
    if tp is Any or tp is object:
        return _accept
    allowed = _exact(tp)
    if allowed is not None:
        return lambda v: type(v) in allowed
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        parts = [_checker(a) for a in typing.get_args(tp)]
        return lambda v: any(p(v) for p in parts)
    if isinstance(tp, type) and issubclass(tp, enum.StrEnum):
        values = frozenset(m.value for m in tp)
        return lambda v: isinstance(v, str) and v in values
    if tp in _STRUCTS:
        return _STRUCTS[tp].check
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        if arg is Any:
            return lambda v: isinstance(v, list)
        exact = _EXACT_TYPES.get(arg)
        if exact is not None:  # token ids, log-probs: the element types gathered in C, not a call per element
            return lambda v: isinstance(v, list) and exact.issuperset(map(type, v))
        inner = _checker(arg)
        return lambda v: isinstance(v, list) and all(map(inner, v))
    if origin is tuple:
        return lambda v: isinstance(v, (list, tuple))
    raise TypeError(f"unsupported wire field annotation: {tp!r}")


Convert = Callable[[Any], Any]


def _no_fast_load(obj: Any) -> Any:
    return None


def _no_fast_dump(msg: Any) -> dict[str, Any]:
    raise TypeError(f"{type(msg).__name__}: codec not compiled")


@dataclasses.dataclass(frozen=True, slots=True)
class _WireSpec:
    name: str
    cls: type
    fields: tuple[str, ...]
    required: frozenset[str]
    field_set: frozenset[str]
    # (field, exact value types + _Absent) of the fields whose type alone decides, then (field, check) of the
    # others whose check can fail, in field order (the decode hot path loops over these).
    type_checks: tuple[tuple[str, frozenset[type]], ...]
    field_checks: tuple[tuple[str, Check], ...]
    floats: frozenset[str]
    # Fields holding nested structs: how to build them from maps (decode) and dump them to maps (encode).
    loads: dict[str, Convert]
    dumps: dict[str, Convert]
    # Compiled once per type (:func:`_compile`): ``fast_load`` builds the message from a map that holds every
    # field, each passing its check, and returns None for anything else (the generic path above then decides,
    # with its exact error); ``fast_dump`` is :meth:`dump` as straight-line code, ``tagged_dump`` the same with
    # the type tag and schema version first (a message's whole payload map).
    fast_load: Callable[[Any], Any] = _no_fast_load
    fast_dump: Callable[[Any], dict[str, Any]] = _no_fast_dump
    tagged_dump: Callable[[Any], dict[str, Any]] = _no_fast_dump

    def check(self, v: Any) -> bool:
        """A map that holds every required field, each of its declared type (nested structs only)."""
        if not isinstance(v, dict) or not self.required.issubset(v):
            return False
        return self.bad_field(v) is None

    def bad_field(self, obj: dict[str, Any]) -> str | None:
        """A field of ``obj`` (a map) whose value is not of its declared type (those checked by type alone
        first, then the others, each in field order), or None."""
        get = obj.get
        for f, allowed in self.type_checks:
            if type(get(f, _ABSENT)) not in allowed:
                return f
        for f, check in self.field_checks:
            if f in obj and not check(obj[f]):
                return f
        return None

    def build(self, obj: dict[str, Any]) -> Any:
        kwargs = dict(obj)
        if TYPE_KEY in kwargs:  # a message's map: its tag and version are no fields
            del kwargs[TYPE_KEY]
            kwargs.pop(VERSION_KEY, None)
        if not self.field_set.issuperset(kwargs):  # unknown extra fields (a newer sender's) are ignored
            kwargs = {f: kwargs[f] for f in self.fields if f in kwargs}
        for f in self.floats:
            if type(kwargs.get(f)) is int:
                kwargs[f] = float(kwargs[f])
        for f, load in self.loads.items():
            if f in kwargs:
                kwargs[f] = load(kwargs[f])
        try:
            return self.cls(**kwargs)
        except (TypeError, ValueError) as exc:  # a type's own validation (e.g. __post_init__)
            raise FieldError(f"{self.name}: {exc}", type_name=self.name) from None

    def dump(self, msg: Any) -> dict[str, Any]:
        out = {f: getattr(msg, f) for f in self.fields}
        for f, d in self.dumps.items():
            out[f] = d(out[f])
        return out


_BY_NAME: dict[str, _WireSpec] = {}
_BY_CLS: dict[type, _WireSpec] = {}
_STRUCTS: dict[type, _WireSpec] = {}


def _converters(tp: Any) -> tuple[Convert, Convert] | None:
    """(load, dump) for an annotation that holds nested structs (``S``, ``list[S]``, ``S | None``)."""
    if tp in _STRUCTS:
        spec = _STRUCTS[tp]
        return spec.build, spec.dump
    origin = typing.get_origin(tp)
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        inner = _converters(arg)
        if inner is not None:
            load, dump = inner
            return (lambda v: [load(x) for x in v]), (lambda v: [dump(x) for x in v])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = _converters(args[0]) if len(args) == 1 else None
        if inner is not None:
            load, dump = inner
            return (lambda v: None if v is None else load(v)), (lambda v: None if v is None else dump(v))
    return None


def _spec(cls: type) -> _WireSpec:
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} must be a dataclass")
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    required = frozenset(
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )
    exact = {f.name: e for f in fields if (e := _exact(hints[f.name])) is not None}
    checks = {
        f.name: check
        for f in fields
        if f.name not in exact and (check := _checker(hints[f.name])) is not _accept
    }
    floats = frozenset(
        f.name for f in fields if hints[f.name] is float or float in typing.get_args(hints[f.name])
    )
    conv = {f.name: c for f in fields if (c := _converters(hints[f.name])) is not None}
    spec = _WireSpec(
        cls.__name__,
        cls,
        tuple(f.name for f in fields),
        required,
        frozenset(f.name for f in fields),
        tuple((name, types_ | {_Absent}) for name, types_ in exact.items()),
        tuple(checks.items()),
        floats,
        {k: c[0] for k, c in conv.items()},
        {k: c[1] for k, c in conv.items()},
    )
    fast_load, fast_dump, tagged_dump = _compile(spec, hints, exact, checks)
    return dataclasses.replace(spec, fast_load=fast_load, fast_dump=fast_dump, tagged_dump=tagged_dump)


def _nested(tp: Any) -> tuple[str, _WireSpec] | None:
    """How a field holds nested structs, when it is one of the three ways wire types use: ``("one", spec)``
    for ``S``, ``("list", spec)`` for ``list[S]``, ``("optional", spec)`` for ``S | None``."""
    if tp in _STRUCTS:
        return "one", _STRUCTS[tp]
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is list and len(args) == 1 and args[0] in _STRUCTS:
        return "list", _STRUCTS[args[0]]
    if origin in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        if inner in _STRUCTS:
            return "optional", _STRUCTS[inner]
    return None


def _compile(
    spec: _WireSpec, hints: dict[str, Any], exact: dict[str, frozenset[type]], checks: dict[str, Check]
) -> tuple[Callable[[Any], Any], Callable[[Any], dict[str, Any]], Callable[[Any], dict[str, Any]]]:
    """The type's decoder and encoders as straight-line Python, generated once at registration.

    Decoding a map that holds every field is then one function call per message (and per nested struct)
    with no loop over field tables, no copy of the map and no per-field function calls for primitives. The
    fast decoder checks exactly what :meth:`_WireSpec.bad_field` checks and converts what
    :meth:`_WireSpec.build` converts; whatever it is not sure of (a field left out, a value that fails a
    check, a constructor that raises) it hands back as None and the generic path decides, so errors and
    their messages are the generic path's. ``tests/bus/test_properties.py`` checks both paths agree."""
    ns: dict[str, Any] = {"CLS": spec.cls}
    load = ["def fast_load(obj):", "    if type(obj) is not dict:", "        return None", "    try:"]
    load += [f"        v{i} = obj[{f!r}]" for i, f in enumerate(spec.fields)]
    load += ["    except KeyError:", "        return None"]
    dump_pre: list[str] = []
    items: list[str] = []
    for i, f in enumerate(spec.fields):
        v = f"v{i}"
        nested = _nested(hints[f])
        if f in exact:
            allowed = exact[f]
            if f in spec.floats and {int, float} <= allowed:  # the common case first: a float as sent
                ns[f"T{i}"] = allowed
                load += [
                    f"    if type({v}) is not float:",
                    f"        if type({v}) is int:",
                    f"            {v} = float({v})",
                    f"        elif type({v}) not in T{i}:",
                    "            return None",
                ]
                items.append(f"{f!r}: msg.{f}")
                continue
            if len(allowed) == 1:
                ns[f"T{i}"] = next(iter(allowed))
                load.append(f"    if type({v}) is not T{i}:")
            else:
                ns[f"T{i}"] = allowed
                load.append(f"    if type({v}) not in T{i}:")
            load.append("        return None")
        elif nested is not None:
            how, inner = nested
            ns[f"L{i}"], ns[f"D{i}"] = inner.fast_load, inner.fast_dump
            if how == "one":
                load += [f"    {v} = L{i}({v})", f"    if {v} is None:", "        return None"]
                dump_pre.append(f"    {v} = D{i}(msg.{f})")
            elif how == "list":
                load += [
                    f"    if type({v}) is not list:",
                    "        return None",
                    f"    out{i} = []",
                    f"    for x in {v}:",
                    f"        x = L{i}(x)",
                    "        if x is None:",
                    "            return None",
                    f"        out{i}.append(x)",
                    f"    {v} = out{i}",
                ]
                dump_pre.append(f"    {v} = [D{i}(x) for x in msg.{f}]")
            else:
                load += [
                    f"    if {v} is not None:",
                    f"        {v} = L{i}({v})",
                    f"        if {v} is None:",
                    "            return None",
                ]
                dump_pre += [f"    {v} = msg.{f}", f"    if {v} is not None:", f"        {v} = D{i}({v})"]
            items.append(f"{f!r}: {v}")
            continue
        elif f in checks:
            ns[f"C{i}"] = checks[f]
            load += [f"    if not C{i}({v}):", "        return None"]
            if f in spec.loads:
                ns[f"L{i}"] = spec.loads[f]
                load.append(f"    {v} = L{i}({v})")
        if f in spec.floats:
            load += [f"    if type({v}) is int:", f"        {v} = float({v})"]
        if f in spec.dumps:
            ns[f"D{i}"] = spec.dumps[f]
            dump_pre.append(f"    {v} = D{i}(msg.{f})")
            items.append(f"{f!r}: {v}")
        else:
            items.append(f"{f!r}: msg.{f}")
    load.append("    return CLS(" + ", ".join(f"{f}=v{i}" for i, f in enumerate(spec.fields)) + ")")
    tag = f"{TYPE_KEY!r}: {spec.name!r}, {VERSION_KEY!r}: {SCHEMA_VERSION!r}, "
    dump = ["def fast_dump(msg):", *dump_pre, "    return {" + ", ".join(items) + "}"]
    tagged = ["def tagged_dump(msg):", *dump_pre, "    return {" + tag + ", ".join(items) + "}"]
    exec(compile("\n".join([*load, *dump, *tagged]), f"<wire codec {spec.name}>", "exec"), ns)
    return ns["fast_load"], ns["fast_dump"], ns["tagged_dump"]


def wire(cls: type[T]) -> type[T]:
    """Class decorator: register a dataclass as a wire message type under its class name."""
    name = cls.__name__
    if name in _BY_NAME:
        raise TypeError(f"wire type {name} registered twice")
    spec = _spec(cls)
    _BY_NAME[name] = spec
    _BY_CLS[cls] = spec
    return cls


def wire_struct(cls: type[T]) -> type[T]:
    """Class decorator: a dataclass that wire messages may hold in their fields (sent as a plain map).

    Register it before the messages that use it. It is not a message of its own (no type tag).
    """
    if cls in _STRUCTS:
        raise TypeError(f"wire struct {cls.__name__} registered twice")
    _STRUCTS[cls] = _spec(cls)
    return cls


def registered_types() -> dict[str, type]:
    """All wire types by name (for tests and ``rlar tail``)."""
    return {name: spec.cls for name, spec in _BY_NAME.items()}


def to_dict(msg: Any) -> dict[str, Any]:
    """The payload map of a message, type tag and schema version included."""
    spec = _BY_CLS.get(type(msg))
    if spec is None:
        raise TypeError(f"{type(msg).__name__} is not a registered wire type")
    return spec.tagged_dump(msg)


_local = threading.local()


def _packer() -> msgpack.Packer:
    """This thread's packer, made once (``msgpack.packb`` builds a new one for every message)."""
    try:
        return typing.cast(msgpack.Packer, _local.packer)
    except AttributeError:
        _local.packer = msgpack.Packer(use_bin_type=True)
        return typing.cast(msgpack.Packer, _local.packer)


def encode(msg: Any) -> bytes:
    """Encode a registered wire message to MessagePack bytes."""
    spec = _BY_CLS.get(type(msg))
    if spec is None:
        raise TypeError(f"{type(msg).__name__} is not a registered wire type")
    return typing.cast(bytes, _packer().pack(spec.tagged_dump(msg)))


class _Extension(Exception):
    pass


def _no_extensions(code: int, data: bytes) -> Any:
    # Wire values are MessagePack-native; an extension object would reach handlers that cannot use it.
    # (The timestamp extension, -1, is read as float seconds.)
    raise _Extension(f"MessagePack extension type {code} is not part of the wire format")


class PayloadTooLarge(ValueError):
    """A message does not fit the size limit even with one item of its split field."""


def encode_parts(msg: T, items: str, max_bytes: int) -> list[tuple[T, bytes]]:
    """Encode ``msg``, split into parts of ``max_bytes`` or less when it is larger.

    The list field ``items`` is cut into contiguous halves (recursively); every part is a copy of ``msg``
    with its share of the items, in order. Raises :class:`PayloadTooLarge` when a part with one item is
    still too large (nothing left to split).
    """
    data = encode(msg)
    if len(data) <= max_bytes:
        return [(msg, data)]
    seq = getattr(msg, items)
    if len(seq) <= 1:
        raise PayloadTooLarge(
            f"{type(msg).__name__} of {len(data)} bytes exceeds the {max_bytes}-byte limit"
            f" with {len(seq)} item(s) in {items!r}"
        )
    half = len(seq) // 2
    return [
        part
        for chunk in (seq[:half], seq[half:])
        for part in encode_parts(dataclasses.replace(msg, **{items: chunk}), items, max_bytes)  # type: ignore[type-var]
    ]


def unpack(data: bytes) -> dict[str, Any]:
    """Parse bytes into a tagged payload map, without building the message type."""
    try:
        obj = msgpack.unpackb(data, raw=False, strict_map_key=False, ext_hook=_no_extensions, timestamp=1)
    except _Extension as exc:
        raise MalformedPayload(str(exc)) from None
    except Exception as exc:  # msgpack raises several unrelated exception types
        raise MalformedPayload(f"not valid MessagePack: {type(exc).__name__}: {exc}") from None
    if not isinstance(obj, dict):
        raise MalformedPayload(f"payload is a MessagePack {type(obj).__name__}, expected a map")
    if TYPE_KEY not in obj:
        raise MalformedPayload("payload map has no type tag '_t'")
    return obj


def from_dict(obj: dict[str, Any], expected: type[T] | None = None) -> T:
    """Build a message from its payload map, validating tag, version and field types."""
    name = obj.get(TYPE_KEY)
    spec = _BY_NAME.get(name) if isinstance(name, str) else None
    if spec is None:
        raise UnknownMessageType(f"unknown message type {name!r}", type_name=str(name))
    version = obj.get(VERSION_KEY)
    if version != SCHEMA_VERSION:
        raise SchemaVersionMismatch(
            f"{spec.name}: schema version {version!r}, this build speaks {SCHEMA_VERSION}",
            type_name=spec.name,
        )
    if expected is not None and spec.cls is not expected:
        raise WrongMessageType(f"got {spec.name}, expected {expected.__name__}", type_name=spec.name)
    try:  # every field present and of its type: the compiled decoder; anything else the generic path
        msg = spec.fast_load(obj)
    except Exception:
        msg = None
    if msg is None:
        msg = _build_checked(spec, obj)
    return typing.cast(T, msg)


def _build_checked(spec: _WireSpec, obj: dict[str, Any]) -> Any:
    """The generic path of :func:`from_dict` once tag and version are checked: required fields, then each
    field's type, then the type's constructor, each failure a :class:`FieldError` naming what failed."""
    if not spec.required.issubset(obj):  # the set of what is missing built only when something is
        missing = spec.required.difference(obj)
        raise FieldError(f"{spec.name}: missing field(s) {', '.join(sorted(missing))}", type_name=spec.name)
    f = spec.bad_field(obj)
    if f is not None:
        raise FieldError(
            f"{spec.name}.{f}: value of type {type(obj[f]).__name__} does not match the declared type",
            type_name=spec.name,
        )
    return spec.build(obj)


def decode(data: bytes, expected: type[T] | None = None) -> T:
    """Decode bytes into a wire message; raise a :class:`DecodeError` subclass on any mismatch."""
    return from_dict(unpack(data), expected)


def describe(data: bytes) -> tuple[str, dict[str, Any] | None, str | None]:
    """For observers: ``(type name, payload map or None, error reason or None)``; never raises."""
    try:
        obj = unpack(data)
    except DecodeError as exc:
        return "<undecodable>", None, exc.reason
    try:
        from_dict(obj)
    except DecodeError as exc:
        return str(obj.get(TYPE_KEY)), obj, exc.reason
    return str(obj[TYPE_KEY]), obj, None
