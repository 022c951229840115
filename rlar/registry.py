"""The tool registry: immutable, versioned tool specs in the JetStream KV bucket ``rlar_tools``.

Who uses it: reward workers resolve the spec a ``ScoreRequest`` names; the router lists tools to choose
from; the synthesizer and retriever register new ones; ``rlar tools`` manages it by hand.

Layout (KV keys are ``<prefix>.<name token>.<field>``; a name is escaped into a valid key token, see
:func:`key_token`; values are JSON so ``nats kv get`` stays readable):

- ``tools.<name>.v<N>`` — version N, written once with ``create`` and never changed: the spec (``code``
  stripped), who registered it and when, and where its code lives. Code (synthesised tools) goes to the
  object store ``rlar_objects`` under ``tool-code/<sha256>``, content-addressed; reading a version checks
  the code's sha256.
- ``tools.<name>.head`` — ``{"latest": N, "hashes": {content key: version}}``, updated with optimistic
  concurrency (``update(last=revision)``), so two registrars of the same content agree on one version.
- ``tools.<name>.status`` — whether the name is disabled, and per-version marks (disabled, quarantined),
  each with a reason; also optimistic concurrency.
- ``stats.<name>.v<N>`` — live stats of one version, merged by any number of workers with optimistic
  concurrency: calls, ok/abstain/error counts, latency sum, a 10-bin score histogram over the declared
  range, the most frequent non-ok reasons.

Versions: ``register`` seals the spec's content hash (``ToolSpec.sealed``). Identity for de-duplication is
the *content key*: the content hash computed with the version fixed at 1, so the same content submitted
again returns the existing version whatever version number the caller put in. Changed content (code,
params, description, range, kind, impl…) makes version ``latest + 1``. ``provenance`` and ``validation`` are
not content: registering the same content with a new validation record returns the existing version.

Resolution: ``get(name)`` (or version 0) is the latest version that is not disabled or quarantined, None
when the name is disabled or has no usable version. ``get(name, N)`` returns version N as stored whatever
its status (history stays readable); use :meth:`ToolRegistry.resolve` to get the reason a version may not
be used.

Every change (new version, disable, enable, quarantine) is announced with ``ToolRegistered`` on
``rlar.tools.registered`` (action ``registered``/``disabled``/``enabled``/``quarantined``), which the TOOLS
stream keeps; workers drop cached resolutions when they see one.

Not covered: deleting versions (never; disable instead), access control (the bus's permissions), specs
whose JSON is larger than the server's max payload (code is stored separately, so only huge params hit it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import random
import re
import time
from pathlib import Path
from typing import Any

import nats.js.errors
from nats.js.kv import KeyValue
from nats.js.object_store import ObjectStore

from bus import subjects, topology
from bus.client import Bus
from bus.messages import ToolRegistered
from rlar.tools.base import ToolSpec, builtin_specs, compute_content_hash
from rlar.tools.stats import StatsDelta, derived_stats, merge_stats

__all__ = [
    "RegistryError",
    "ToolRegistry",
    "content_key",
    "key_token",
    "name_from_token",
]

log = logging.getLogger("rlar.registry")

_CAS_ATTEMPTS = 200
_TOKEN_SAFE = re.compile(r"[A-Za-z0-9_-]")
# `ToolRegistry.list` shadows the builtin inside the class body, so annotations there use this alias.
SpecList = list[ToolSpec]


class RegistryError(RuntimeError):
    """The registry could not complete an operation (contention beyond retries, corrupt record)."""


def key_token(name: str) -> str:
    """Escape a tool name into one KV key token: letters, digits, '_' and '-' stay; every other character
    becomes ``=`` and the hex of its UTF-8 bytes (``a.b`` -> ``a=2eb``). Reversible (:func:`name_from_token`)."""
    if not name:
        raise ValueError("tool name must be non-empty")
    return "".join(c if _TOKEN_SAFE.match(c) else "".join(f"={b:02x}" for b in c.encode()) for c in name)


def name_from_token(tok: str) -> str:
    """Inverse of :func:`key_token`."""
    out = bytearray()
    i = 0
    while i < len(tok):
        if tok[i] == "=":
            out.append(int(tok[i + 1 : i + 3], 16))
            i += 3
        else:
            out += tok[i].encode()
            i += 1
    return out.decode()


def content_key(spec: ToolSpec) -> str:
    """What makes two specs the same tool content: the content hash with the version fixed at 1."""
    return compute_content_hash(dataclasses.replace(spec, version=1, content_hash=""))


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _loads(data: bytes | None) -> Any:
    return json.loads(data or b"null")


class ToolRegistry:
    """Versioned tool specs over a bus connection. Safe to use from many processes at once.

    ``bucket`` / ``objects`` default to the declared ``rlar_tools`` / ``rlar_objects`` (created by
    ``ensure_topology``); tests may point at their own buckets. Spec versions are cached in-process
    (they never change); heads and statuses are read fresh on every call.
    """

    def __init__(
        self,
        bus: Bus,
        *,
        bucket: str = topology.TOOLS_BUCKET,
        objects: str = topology.OBJECTS_BUCKET,
        announce: bool = True,
    ) -> None:
        self.bus = bus
        self.bucket = bucket
        self.objects = objects
        self.announce = announce
        self._kv: KeyValue | None = None
        self._obj: ObjectStore | None = None
        self._specs: dict[tuple[str, int], ToolSpec] = {}

    # -- storage ----------------------------------------------------------------------------------
    async def kv(self) -> KeyValue:
        if self._kv is None:
            self._kv = await self.bus.js.key_value(self.bucket)
        return self._kv

    async def object_store(self) -> ObjectStore:
        if self._obj is None:
            self._obj = await self.bus.js.object_store(self.objects)
        return self._obj

    async def _get(self, key: str) -> tuple[Any, int]:
        """(decoded value, revision) or (None, 0) when the key does not exist."""
        kv = await self.kv()
        try:
            entry = await kv.get(key)
        except nats.js.errors.KeyNotFoundError:
            return None, 0
        return _loads(entry.value), int(entry.revision or 0)

    async def _cas(self, key: str, change: Any) -> Any:
        """Read-modify-write ``key`` with optimistic concurrency: ``change(current or None)`` returns the new
        value (or None to leave it); retried on a concurrent write. Returns the value written (or current)."""
        kv = await self.kv()
        for attempt in range(_CAS_ATTEMPTS):
            cur, rev = await self._get(key)
            new = change(cur)
            if new is None:
                return cur
            try:
                if rev:
                    await kv.update(key, _dumps(new), last=rev)
                else:
                    await kv.create(key, _dumps(new))
                return new
            except nats.js.errors.KeyWrongLastSequenceError:
                # Someone else wrote in between: read again and re-apply our change on top of theirs.
                await asyncio.sleep(random.uniform(0, min(0.05, 0.002 * (attempt + 1))))
        raise RegistryError(f"could not update {key} after {_CAS_ATTEMPTS} attempts (contention)")

    @staticmethod
    def _version_key(name: str, version: int) -> str:
        return f"tools.{key_token(name)}.v{int(version)}"

    @staticmethod
    def _head_key(name: str) -> str:
        return f"tools.{key_token(name)}.head"

    @staticmethod
    def _status_key(name: str) -> str:
        return f"tools.{key_token(name)}.status"

    @staticmethod
    def _stats_key(name: str, version: int) -> str:
        return f"stats.{key_token(name)}.v{int(version)}"

    async def _put_code(self, code: str) -> tuple[str, str]:
        data = code.encode("utf-8")
        sha = hashlib.sha256(data).hexdigest()
        name = f"tool-code/{sha}"
        store = await self.object_store()
        try:
            await store.get_info(name)
        except nats.js.errors.NotFoundError:
            await store.put(name, data)
        return name, sha

    async def _get_code(self, name: str, sha: str) -> str:
        store = await self.object_store()
        res = await store.get(name)
        data = res.data or b""
        if hashlib.sha256(data).hexdigest() != sha:
            raise RegistryError(f"tool code {name} does not match its recorded sha256")
        return data.decode("utf-8")

    async def _announce(self, name: str, version: int, kind: str, action: str, by: str) -> None:
        if not self.announce:
            return
        msg = ToolRegistered(name=name, version=version, kind=kind, action=action, by=by)
        msg_id = f"{action}/{name}/v{version}" if action == "registered" else None
        await self.bus.js_publish(subjects.TOOLS_REGISTERED, msg, msg_id=msg_id)

    # -- versions ---------------------------------------------------------------------------------
    async def register(self, spec: ToolSpec, *, by: str) -> ToolSpec:
        """Store ``spec`` as a new immutable version, or return the existing version with the same content.

        The caller's ``version`` and ``content_hash`` are ignored: the registry assigns ``latest + 1`` and
        seals the hash of the stored spec. ``provenance`` gains ``registered_by`` (``by``) and
        ``registered_at``. Announces ``ToolRegistered(action="registered")`` for a new version only.
        """
        ck = content_key(spec)
        name = spec.name
        while True:
            head, _ = await self._get(self._head_key(name))
            head = head or {"name": name, "latest": 0, "hashes": {}}
            if ck in head["hashes"]:
                got = await self.get(name, int(head["hashes"][ck]))
                if got is None:
                    raise RegistryError(f"{name} v{head['hashes'][ck]} is in the head but not stored")
                return got
            version = int(head["latest"]) + 1
            stored = await self._create_version(spec, version, ck, by)
            if stored is None:
                # Version taken by a concurrent registrar that has not updated the head yet (or died
                # before it could): adopt its record into the head, then look again.
                other = await self._read_record(name, version)
                if other is None:
                    raise RegistryError(f"{name} v{version} exists but cannot be read")
                await self._add_to_head(name, version, other["content_key"])
                continue
            await self._add_to_head(name, version, ck)
            log.info("registered %s v%d (%s) by %s", name, version, spec.kind, by)
            await self._announce(name, version, str(spec.kind), "registered", by)
            return stored

    async def _create_version(self, spec: ToolSpec, version: int, ck: str, by: str) -> ToolSpec | None:
        now = time.time()
        provenance = {**spec.provenance, "registered_by": by, "registered_at": now}
        final = dataclasses.replace(spec, version=version, provenance=provenance, content_hash="").sealed()
        code_object, code_sha = ("", "")
        if final.code:
            code_object, code_sha = await self._put_code(final.code)
        record = {
            "spec": {**final.to_dict(), "code": ""},
            "code_object": code_object,
            "code_sha256": code_sha,
            "content_key": ck,
            "registered_by": by,
            "registered_at": now,
        }
        kv = await self.kv()
        try:
            await kv.create(self._version_key(spec.name, version), _dumps(record))
        except nats.js.errors.KeyWrongLastSequenceError:
            return None
        self._specs[(final.name, version)] = final
        return final

    async def _add_to_head(self, name: str, version: int, ck: str) -> None:
        def change(cur: Any) -> Any:
            head = cur or {"name": name, "latest": 0, "hashes": {}}
            if head["hashes"].get(ck) == version and head["latest"] >= version:
                return None
            hashes = dict(head["hashes"])
            # The lowest version wins for one content (a concurrent duplicate adopts it).
            hashes[ck] = min(version, int(hashes.get(ck, version)))
            return {"name": name, "latest": max(int(head["latest"]), version), "hashes": hashes}

        await self._cas(self._head_key(name), change)

    async def _read_record(self, name: str, version: int) -> dict[str, Any] | None:
        rec, _ = await self._get(self._version_key(name, version))
        return rec if isinstance(rec, dict) else None

    async def get(self, name: str, version: int | None = None) -> ToolSpec | None:
        """Version ``version`` as stored (whatever its status), or for None/0 the latest usable version
        (None if the name is unknown, disabled, or every version is disabled/quarantined)."""
        if not version:
            head, status = await self._head_and_status(name)
            if head is None:
                return None
            v = self._latest_usable(head, status)
            return None if v is None else await self.get(name, v)
        key = (name, int(version))
        hit = self._specs.get(key)
        if hit is not None:
            return hit
        rec = await self._read_record(name, int(version))
        if rec is None:
            return None
        d = dict(rec["spec"])
        if rec.get("code_object"):
            d["code"] = await self._get_code(rec["code_object"], rec["code_sha256"])
        spec = ToolSpec.from_dict(d)
        self._specs[key] = spec
        return spec

    async def versions(self, name: str) -> SpecList:
        """Every stored version of ``name``, oldest first."""
        head, _ = await self._get(self._head_key(name))
        if head is None:
            return []
        out = []
        for v in range(1, int(head["latest"]) + 1):
            spec = await self.get(name, v)
            if spec is not None:
                out.append(spec)
        return out

    async def names(self) -> list[str]:
        """Every registered tool name, sorted."""
        keys = await self.bus.kv_keys(self.bucket, "tools.*.head")
        return sorted(name_from_token(k.split(".")[1]) for k in keys)

    async def list(self, include_disabled: bool = False) -> SpecList:
        """The latest usable version per name; with ``include_disabled``, the latest version of every name."""
        out = []
        for name in await self.names():
            head, status = await self._head_and_status(name)
            if head is None:
                continue
            v = int(head["latest"]) if include_disabled else self._latest_usable(head, status)
            if v:
                spec = await self.get(name, v)
                if spec is not None:
                    out.append(spec)
        return out

    # -- status -----------------------------------------------------------------------------------
    async def _head_and_status(self, name: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        head, _ = await self._get(self._head_key(name))
        status, _ = await self._get(self._status_key(name))
        return head, status or {}

    @staticmethod
    def _latest_usable(head: dict[str, Any], status: dict[str, Any]) -> int | None:
        if status.get("disabled"):
            return None
        marks = status.get("versions") or {}
        for v in range(int(head["latest"]), 0, -1):
            if str(v) not in marks:
                return v
        return None

    async def _mark(self, name: str, change: Any, action: str, version: int, by: str) -> None:
        head, _ = await self._get(self._head_key(name))
        if head is None:
            raise KeyError(f"unknown tool {name!r}")
        if version and version > int(head["latest"]):
            raise KeyError(f"{name!r} has no version {version} (latest is {head['latest']})")
        await self._cas(self._status_key(name), change)
        kind = ""
        spec = await self.get(name, version or int(head["latest"]))
        if spec is not None:
            kind = str(spec.kind)
        await self._announce(name, version, kind, action, by)

    async def disable(self, name: str, reason: str, *, version: int | None = None, by: str = "") -> None:
        """Disable the whole name (``version`` None) or one version. Raises KeyError for an unknown tool."""
        now = time.time()

        def change(cur: Any) -> Any:
            st = dict(cur or {})
            if version:
                marks = dict(st.get("versions") or {})
                marks[str(version)] = {"state": "disabled", "reason": reason, "by": by, "at": now}
                st["versions"] = marks
            else:
                st.update(disabled=True, reason=reason, by=by, at=now)
            return st

        await self._mark(name, change, "disabled", int(version or 0), by)

    async def enable(self, name: str, *, version: int | None = None, by: str = "") -> None:
        """Re-enable the name (clears the name-level disable; version marks stay), or clear one version's
        mark (disabled or quarantined)."""
        now = time.time()

        def change(cur: Any) -> Any:
            st = dict(cur or {})
            if version:
                marks = dict(st.get("versions") or {})
                marks.pop(str(version), None)
                st["versions"] = marks
            else:
                st.update(disabled=False, reason="", by=by, at=now)
            return st

        await self._mark(name, change, "enabled", int(version or 0), by)

    async def quarantine(self, name: str, version: int, reason: str, *, by: str = "") -> None:
        """Take one version out of service (e.g. it failed validation or misbehaves at run time)."""
        if not version:
            raise ValueError("quarantine needs a version")
        now = time.time()

        def change(cur: Any) -> Any:
            st = dict(cur or {})
            marks = dict(st.get("versions") or {})
            marks[str(version)] = {"state": "quarantined", "reason": reason, "by": by, "at": now}
            st["versions"] = marks
            return st

        await self._mark(name, change, "quarantined", int(version), by)

    async def set_canary(
        self, name: str, version: int, state: str, info: dict[str, Any] | None = None, *, by: str = ""
    ) -> None:
        """Record a version's canary stage (:mod:`rlar.synthesis.canary`): ``shadow`` (scoring live samples
        with weight 0), ``passed`` (announced as ``promoted``: it may reward) or ``failed``. The tool stays
        enabled either way; a failed canary is followed by a quarantine."""
        if state not in ("shadow", "passed", "failed"):
            raise ValueError(f"canary state must be shadow, passed or failed, got {state!r}")
        now = time.time()

        def change(cur: Any) -> Any:
            st = dict(cur or {})
            stages = dict(st.get("canary") or {})
            stages[str(version)] = {"state": state, "info": dict(info or {}), "by": by, "at": now}
            st["canary"] = stages
            return st

        await self._mark(
            name, change, "promoted" if state == "passed" else f"canary_{state}", int(version), by
        )

    async def record_vouch(self, name: str, version: int, task: str, report: dict[str, Any]) -> None:
        """Keep the judge-vouching verdict (:mod:`rlar.routing.judge_vouch`) of one version for one task: the
        last one per task, shown by ``status`` (``vouch``) and ``rlar tools list|show``. Not announced."""
        now = time.time()

        def change(cur: Any) -> Any:
            st = dict(cur or {})
            by_version = dict(st.get("vouch") or {})
            tasks = dict(by_version.get(str(version)) or {})
            tasks[task] = {**report, "at": now}
            by_version[str(version)] = tasks
            st["vouch"] = by_version
            return st

        await self._cas(self._status_key(name), change)

    async def status(self, name: str, version: int | None = None) -> dict[str, Any]:
        """``{"name", "state", "reason", "latest", "latest_enabled", "versions"}`` (plus ``canary``, the
        version's canary stage or ``{}``, and ``vouch``, its judge-vouching verdicts by task, when a version is
        asked for).

        ``state`` is ``unknown`` (no such tool), ``disabled`` (the name is disabled), else for ``version``
        that version's mark (``disabled``/``quarantined``) or ``enabled``; without ``version``, ``enabled``
        when some version is usable, else the latest version's mark. ``versions`` holds the marks by version.
        """
        head, st = await self._head_and_status(name)
        if head is None:
            return {
                "name": name,
                "state": "unknown",
                "reason": f"unknown tool {name!r}",
                "latest": 0,
                "latest_enabled": None,
                "versions": {},
            }
        latest = int(head["latest"])
        usable = self._latest_usable(head, st)
        marks = st.get("versions") or {}
        out: dict[str, Any] = {"name": name, "latest": latest, "latest_enabled": usable, "versions": marks}
        if version:
            out["canary"] = dict((st.get("canary") or {}).get(str(version)) or {})
            out["vouch"] = dict((st.get("vouch") or {}).get(str(version)) or {})
        if st.get("disabled"):
            return {**out, "state": "disabled", "reason": st.get("reason", "")}
        if version:
            if version > latest:
                return {**out, "state": "unknown", "reason": f"{name!r} has no version {version}"}
            mark = marks.get(str(version))
        else:
            mark = None if usable else marks.get(str(latest))
        if mark:
            return {**out, "state": mark["state"], "reason": mark.get("reason", "")}
        return {**out, "state": "enabled", "reason": ""}

    async def resolve(self, name: str, version: int | None = None) -> tuple[ToolSpec | None, str]:
        """(spec, "") when the tool may be used, else (spec or None, the reason it may not): unknown tool or
        version, disabled name or version, quarantined version. For workers."""
        st = await self.status(name, version or None)
        if st["state"] == "unknown":
            return None, st["reason"]
        if st["state"] != "enabled":
            v = version or st["latest"]
            spec = await self.get(name, v)
            why = f"tool {name} v{v} is {st['state']}" + (f": {st['reason']}" if st["reason"] else "")
            return spec, why
        spec = await self.get(name, version or st["latest_enabled"])
        if spec is None:
            return None, f"tool {name} v{version} is not stored"
        return spec, ""

    # -- stats ------------------------------------------------------------------------------------
    async def record_stats(self, name: str, version: int, delta: dict[str, Any] | StatsDelta) -> None:
        """Merge a worker's delta (see :class:`StatsDelta`) into the version's stats (optimistic concurrency)."""
        d = delta.to_dict() if isinstance(delta, StatsDelta) else dict(delta)
        await self._cas(self._stats_key(name, version), lambda cur: merge_stats(cur, d))

    async def stats(self, name: str, version: int) -> dict[str, Any]:
        """Merged stats plus ``mean_latency_s``, ``error_rate`` and ``abstain_rate`` (zeros if none yet)."""
        cur, _ = await self._get(self._stats_key(name, version))
        return derived_stats(cur or {})

    # -- bulk -------------------------------------------------------------------------------------
    async def ensure_builtins(self, by: str = "builtin") -> SpecList:
        """Register every built-in tool's default spec (idempotent: unchanged ones keep their version)."""
        return [await self.register(spec, by=by) for spec in builtin_specs()]

    async def export(self, path: str | Path) -> int:
        """Write every version of every tool (code inline) and each name's status as JSONL; returns lines."""
        lines: list[str] = []
        for name in await self.names():
            for spec in await self.versions(name):
                lines.append(json.dumps({"type": "tool", "spec": spec.to_dict()}, ensure_ascii=False))
            st, _ = await self._get(self._status_key(name))
            if st:
                lines.append(json.dumps({"type": "status", "name": name, "status": st}, ensure_ascii=False))
        Path(path).write_text("".join(line + "\n" for line in lines))
        return len(lines)

    async def import_(self, path: str | Path, *, by: str = "import") -> SpecList:
        """Register the tools of an export file (versions of a name in order, so a fresh registry gets the
        same numbers), then apply the statuses, mapping version numbers when they differ."""
        tools: dict[str, list[dict[str, Any]]] = {}
        statuses: dict[str, dict[str, Any]] = {}
        for n, line in enumerate(Path(path).read_text().splitlines(), 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("type") == "tool":
                tools.setdefault(rec["spec"]["name"], []).append(rec["spec"])
            elif rec.get("type") == "status":
                statuses[rec["name"]] = rec["status"]
            else:
                raise ValueError(f"{path}:{n}: unknown record type {rec.get('type')!r}")
        out: list[ToolSpec] = []
        mapping: dict[tuple[str, int], int] = {}
        for name, specs in tools.items():
            for d in sorted(specs, key=lambda s: int(s.get("version", 1))):
                got = await self.register(ToolSpec.from_dict(d), by=by)
                mapping[(name, int(d.get("version", 1)))] = got.version
                out.append(got)
        for name, st in statuses.items():
            await self._apply_status(name, st, mapping, by)
        return out

    async def _apply_status(
        self, name: str, st: dict[str, Any], mapping: dict[tuple[str, int], int], by: str
    ) -> None:
        for v, mark in (st.get("versions") or {}).items():
            local = mapping.get((name, int(v)))
            if local is None:
                continue
            if mark.get("state") == "quarantined":
                await self.quarantine(name, local, mark.get("reason", ""), by=by)
            else:
                await self.disable(name, mark.get("reason", ""), version=local, by=by)
        if st.get("disabled"):
            await self.disable(name, st.get("reason", ""), by=by)
