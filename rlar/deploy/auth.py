"""Who may say what on the bus: one NATS user per actor role, with subject permissions.

This table is the single source of truth: :mod:`rlar.deploy.natsconf` renders it into the servers'
``accounts`` block (the shipped deploy/nats/auth.conf and the configs the tests start), ``rlar up`` maps
each actor kind to its role's credentials, and tests/bus/test_permissions.py checks the policy against real
servers.

Policy (what the table enforces, beyond "each role publishes only its own outputs"):

- only the ``learner`` publishes ``rlar.weights`` and ``rlar.learner.progress``;
- only the ``synthesizer`` and ``retriever`` write tool specs in the registry (``$KV.rlar_tools.tools.>``);
  reward workers may write only the live stats keys (``$KV.rlar_tools.stats.>``);
- reward workers may not publish prompts (or samples, routes, weights);
- ``observer`` (``rlar tail``, ``rlar status``) reads everything and publishes nothing but read-only
  JetStream API calls;
- only ``supervisor`` (each host's ``rlar up``) and ``admin`` create or update streams and consumers;
  actor roles only look the declared topology up, so a compromised worker cannot delete or purge a stream.

JetStream mechanics each role needs, besides its subjects: read-only API calls (``$JS.API.STREAM.INFO.*``
…), ``$JS.API.CONSUMER.MSG.NEXT.<stream>.<durable>`` to fetch from its durables and ``$JS.ACK.<stream>.
<durable>.>`` to ack, nak or mark in progress; reading a stream, KV bucket or object store is direct/msg
gets plus ephemeral (ordered) consumers on that stream only; KV writes are publishes to
``$KV.<bucket>.<key>``, object-store writes to ``$O.<bucket>.>``. Replies arrive on ``_INBOX.>``, which every
role may subscribe to.

Not covered: replies are not private between roles (every role subscribes ``_INBOX.>``; per-role inbox
prefixes would close that); object-store writers (learner, synthesizer, retriever) can write any object in
``rlar_objects`` (tool code is content-addressed and its sha256 checked on read, so tampering is detected,
not prevented).

Credentials: a password per role, read from ``$RLAR_NATS_PASSWORD_<ROLE>`` or ``<creds dir>/<role>.password``
(see :func:`load_password`); :func:`generate_credentials` writes fresh ones.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bus import subjects as S
from bus import topology as T
from rlar.kinds import ACTOR_KINDS

JS_API = "$JS.API"
INBOX = "_INBOX.>"

# Read-only JetStream API calls every client may make (lookups done by ensure_topology, rlar status …).
JS_READ_ONLY: tuple[str, ...] = (
    f"{JS_API}.INFO",
    f"{JS_API}.STREAM.INFO.*",
    f"{JS_API}.STREAM.NAMES",
    f"{JS_API}.STREAM.LIST",
    f"{JS_API}.CONSUMER.INFO.*.*",
    f"{JS_API}.CONSUMER.NAMES.*",
    f"{JS_API}.CONSUMER.LIST.*",
)

# Creating or updating the declared topology (never delete or purge): supervisor and admin only.
JS_TOPOLOGY: tuple[str, ...] = (
    f"{JS_API}.STREAM.CREATE.*",
    f"{JS_API}.STREAM.UPDATE.*",
    f"{JS_API}.CONSUMER.CREATE.>",
    f"{JS_API}.CONSUMER.DURABLE.CREATE.>",
)


# Replies a responder may send to one request (nats-server's default for `allow_responses: true` is 1).
MAX_RESPONSES = 1000


@dataclass(frozen=True, slots=True)
class Role:
    """One NATS user: what it may publish and subscribe to. ``allow_responses`` lets a responder reply
    to a request's inbox without a publish permission on it."""

    name: str
    description: str
    publish: tuple[str, ...]
    subscribe: tuple[str, ...]
    allow_responses: bool = False
    publish_deny: tuple[str, ...] = ()

    def permissions(self) -> dict[str, Any]:
        """The ``permissions`` map of a nats-server user entry."""
        perms: dict[str, Any] = {
            "publish": {"allow": list(self.publish)},
            "subscribe": {"allow": list(self.subscribe)},
        }
        if self.publish_deny:
            perms["publish"]["deny"] = list(self.publish_deny)
        if self.allow_responses:
            # `true` alone allows one reply per request; a sandbox request gets several ("queued" notices while
            # it waits for a slot, "started", then the result).
            perms["allow_responses"] = {"max": MAX_RESPONSES}
        return perms


@dataclass(slots=True)
class _Grant:
    pub: list[str]
    sub: list[str]
    responses: bool = False

    def add(self, other: _Grant) -> _Grant:
        self.pub += other.pub
        self.sub += other.sub
        self.responses = self.responses or other.responses
        return self


def _uniq(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


# -- building blocks ------------------------------------------------------------------------------
def actor_base(kind: str) -> _Grant:
    """What every actor does: heartbeats, events and metrics under its kind, dead letters, lookups, and its
    own counters in the state bucket (``counters.<kind>.<instance>``, so a restarted replica counts on)."""
    state = kv_read(T.STATE_BUCKET)
    return _Grant(
        pub=[
            f"{S.PREFIX}.heartbeat.{kind}.>",
            S.events(kind),
            S.metrics(kind),
            S.DLQ_ALL,
            *JS_READ_ONLY,
            *state.pub,
            f"$KV.{T.STATE_BUCKET}.counters.{kind}.>",
        ],
        sub=[INBOX],
    )


def consume(stream: str, durable: str) -> _Grant:
    """Fetch from and ack a durable pull consumer (both ack-subject layouts: with and without domain)."""
    return _Grant(
        pub=[
            f"{JS_API}.CONSUMER.MSG.NEXT.{stream}.{durable}",
            f"$JS.ACK.{stream}.{durable}.>",
            f"$JS.ACK.*.*.{stream}.{durable}.>",
        ],
        sub=[],
    )


def read_stream(stream: str, live: Iterable[str] = ()) -> _Grant:
    """Read a stream: last/direct gets and ephemeral (ordered) consumers on it; ``live`` subjects may also
    be subscribed to directly (core NATS)."""
    return _Grant(
        pub=[
            f"{JS_API}.STREAM.MSG.GET.{stream}",
            f"{JS_API}.DIRECT.GET.{stream}",
            f"{JS_API}.DIRECT.GET.{stream}.>",
            f"{JS_API}.CONSUMER.CREATE.{stream}",
            f"{JS_API}.CONSUMER.CREATE.{stream}.>",
        ],
        sub=list(live),
    )


def js_publish(*subject_patterns: str) -> _Grant:
    """Publish into streams (the stream's ack comes back on the caller's inbox)."""
    return _Grant(pub=list(subject_patterns), sub=[])


def kv_read(bucket: str) -> _Grant:
    return read_stream(f"KV_{bucket}")


def kv_write(bucket: str, *keys: str) -> _Grant:
    """Put/create/update/delete keys matching ``keys`` (subject patterns relative to the bucket; all keys
    when none is given)."""
    return _Grant(pub=[f"$KV.{bucket}.{k}" for k in keys or (">",)], sub=[])


def obj_read(bucket: str) -> _Grant:
    return read_stream(f"OBJ_{bucket}")


def obj_write(bucket: str) -> _Grant:
    """Put and delete objects (a put replacing an object purges its old chunks)."""
    return _Grant(pub=[f"$O.{bucket}.>", f"{JS_API}.STREAM.PURGE.OBJ_{bucket}"], sub=[])


def respond(*subject_patterns: str) -> _Grant:
    """Serve requests on ``subject_patterns`` (queue group) and reply to each requester's inbox."""
    return _Grant(pub=[], sub=list(subject_patterns), responses=True)


def request(*subject_patterns: str) -> _Grant:
    """Send requests (the reply arrives on the caller's inbox)."""
    return _Grant(pub=list(subject_patterns), sub=[])


def with_domains(patterns: Iterable[str]) -> tuple[str, ...]:
    """Each ``$JS.API.…`` pattern also in its JetStream-domain form ``$JS.*.API.…``: a leaf site maps its
    clients' plain API calls onto the hub's domain before checking their permissions."""
    out: list[str] = []
    for p in patterns:
        out.append(p)
        if p.startswith(f"{JS_API}."):
            out.append("$JS.*.API." + p[len(JS_API) + 1 :])
    return _uniq(out)


def _role(name: str, description: str, *grants: _Grant) -> Role:
    total = _Grant(pub=[], sub=[])
    for g in grants:
        total.add(g)
    return Role(name, description, with_domains(total.pub), _uniq(total.sub), total.responses)


# -- the table ------------------------------------------------------------------------------------
def _tools_registrar(name: str, durable: str) -> Role:
    return _role(
        name,
        f"{name}: takes tool requests, writes tool specs and code, asks the sandbox and reward workers",
        actor_base(name),
        consume(T.TOOLS, durable),
        read_stream(T.TOOLS, [S.TOOLS_REGISTERED]),
        kv_read(T.TOOLS_BUCKET),
        kv_write(T.TOOLS_BUCKET),
        obj_read(T.OBJECTS_BUCKET),
        obj_write(T.OBJECTS_BUCKET),
        js_publish(S.TOOLS_REGISTERED),
        request(S.SANDBOX_EXEC, S.REWARD_SCORE_RPC),
    )


def build_roles() -> dict[str, Role]:
    """Every role, by name."""
    roles = [
        Role("admin", "operators: everything, including deleting and purging streams", (">",), (">",), True),
        _role(
            "supervisor",
            "rlar up on each host: creates/updates the declared topology, reports child crashes",
            _Grant(
                pub=[
                    *JS_READ_ONLY,
                    *JS_TOPOLOGY,
                    S.events("supervisor"),
                    f"{S.PREFIX}.heartbeat.supervisor.>",
                ],
                sub=[INBOX],
            ),
        ),
        _role(
            "observer",
            "rlar tail / rlar status: subscribes to everything, publishes nothing but read-only API calls",
            _Grant(
                pub=[*JS_READ_ONLY, f"{JS_API}.STREAM.MSG.GET.*", f"{JS_API}.DIRECT.GET.>"],
                sub=[f"{S.PREFIX}.>", INBOX],
            ),
        ),
        _role(
            "monitor",
            "monitor: records heartbeats, events and metrics",
            actor_base("monitor"),
            _Grant(pub=[], sub=[S.HEARTBEAT_ALL, S.EVENTS_ALL, S.METRICS_ALL]),
            read_stream(T.HEARTBEATS),
            read_stream(T.TELEMETRY),
        ),
        _role(
            "feeder",
            "feeder: publishes prompts (routed ones in static routing), keeps its cursor, paces on progress",
            actor_base("feeder"),
            js_publish(S.PROMPTS_ALL, S.ROUTED_ALL),
            kv_read(T.STATE_BUCKET),
            kv_write(T.STATE_BUCKET, "feeder", "feeder.>"),
            kv_read(T.TOOLS_BUCKET),
            read_stream(T.PROGRESS, [S.LEARNER_PROGRESS]),
        ),
        _role(
            "router",
            "router: routes prompts to reward tools, asks for new tools",
            actor_base("router"),
            consume(T.PROMPTS, T.ROUTER),
            js_publish(S.ROUTED_ALL, S.TOOLS_DECISIONS, f"{S.PREFIX}.tools.request.>"),
            kv_read(T.TOOLS_BUCKET),
            kv_read(T.DECISIONS_BUCKET),
            kv_write(T.DECISIONS_BUCKET),
            obj_read(T.OBJECTS_BUCKET),
            read_stream(T.TOOLS, [S.TOOLS_REGISTERED]),
            request(S.REWARD_SCORE_RPC, S.SANDBOX_EXEC),
        ),
        _role(
            "rollout",
            "rollout: generates samples and score requests, loads announced weights",
            actor_base("rollout"),
            consume(T.PROMPTS, T.ROLLOUT),
            js_publish(S.SAMPLES_ALL, S.SCORE_ALL),
            read_stream(T.WEIGHTS, [S.WEIGHTS]),
            obj_read(T.OBJECTS_BUCKET),
            kv_read(T.TOOLS_BUCKET),
        ),
        _role(
            "reward",
            "reward workers (every tool kind): score samples, publish rewards, merge tool stats",
            actor_base("reward"),
            *(consume(T.SCORE, T.reward_consumer(k)) for k in S.TOOL_KINDS),
            js_publish(S.REWARDS_ALL),
            kv_read(T.TOOLS_BUCKET),
            kv_write(T.TOOLS_BUCKET, "stats.>"),
            obj_read(T.OBJECTS_BUCKET),
            read_stream(T.TOOLS, [S.TOOLS_REGISTERED]),
            request(S.SANDBOX_EXEC),
            respond(S.REWARD_SCORE_RPC),
        ),
        _role(
            "sandbox",
            "sandbox: runs untrusted code on request",
            actor_base("sandbox"),
            respond(S.SANDBOX_EXEC),
        ),
        _role(
            "learner",
            "learner: trains on samples and rewards, publishes weights and progress",
            actor_base("learner"),
            consume(T.SAMPLES, T.LEARNER_SAMPLES),
            consume(T.REWARDS, T.LEARNER_REWARDS),
            js_publish(S.WEIGHTS, S.LEARNER_PROGRESS),
            read_stream(T.WEIGHTS),  # a restarted learner resumes from the last announced version
            read_stream(T.PROGRESS),  # it re-announces its progress when the newest entry is not its state
            kv_read(T.STATE_BUCKET),
            kv_write(T.STATE_BUCKET, "learner", "learner.>"),
            obj_read(T.OBJECTS_BUCKET),
            obj_write(T.OBJECTS_BUCKET),
        ),
        _tools_registrar("synthesizer", T.SYNTHESIZER),
        _tools_registrar("retriever", T.RETRIEVER),
    ]
    return {r.name: r for r in roles}


ROLES: dict[str, Role] = build_roles()


class UnknownRole(KeyError):
    """A role or actor kind has no entry in the role table."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown role"


def role_of(kind: str) -> str:
    """The role an actor kind runs as: ``reward-rule`` -> ``reward``, ``learner`` -> ``learner``."""
    role = ACTOR_KINDS[kind].role if kind in ACTOR_KINDS else kind
    if role not in ROLES:
        raise UnknownRole(
            f"actor kind {kind!r} has no role in the role table; known: {', '.join(sorted(ROLES))}"
        )
    return role


def union(name: str, description: str, role_names: Iterable[str]) -> Role:
    """A role allowed what any of ``role_names`` is allowed (e.g. a leaf site that runs several roles)."""
    picked = [ROLES[r] for r in role_names]
    return Role(
        name,
        description,
        _uniq(p for r in picked for p in r.publish),
        _uniq(s for r in picked for s in r.subscribe),
        any(r.allow_responses for r in picked),
    )


def leaf_connection(name: str, role_names: Iterable[str]) -> Role:
    """The user a leaf site's server connects to the hub with: what its local roles may do, plus the
    whole JetStream API minus its destructive and topology calls. A hub propagates its own wildcard
    interest (JetStream's ``$JS.API.>`` responders) to a leaf only when the leaf may publish on all of it,
    so per-call allows are not enough here; the leaf server still holds each local client to its role."""
    base = union(name, f"leaf-node connection of a remote site running {', '.join(role_names)}", role_names)
    return Role(
        base.name,
        base.description,
        with_domains([*base.publish, f"{JS_API}.>"]),
        base.subscribe,
        base.allow_responses,
        publish_deny=with_domains(
            [
                f"{JS_API}.STREAM.CREATE.>",
                f"{JS_API}.STREAM.UPDATE.>",
                f"{JS_API}.STREAM.DELETE.>",
                f"{JS_API}.STREAM.PURGE.>",
                f"{JS_API}.STREAM.MSG.DELETE.>",
                f"{JS_API}.STREAM.RESTORE.>",
                f"{JS_API}.STREAM.SNAPSHOT.>",
                f"{JS_API}.CONSUMER.DELETE.>",
                f"{JS_API}.CONSUMER.DURABLE.CREATE.>",
                f"{JS_API}.ACCOUNT.>",
                f"{JS_API}.META.>",
                f"{JS_API}.SERVER.>",
            ]
        ),
    )


# -- credentials ----------------------------------------------------------------------------------
CREDS_DIR_ENV = "RLAR_NATS_CREDS_DIR"


def password_env(role: str) -> str:
    """Environment variable holding ``role``'s password, read by servers (auth.conf) and by rlar up."""
    return "RLAR_NATS_PASSWORD_" + role.upper().replace("-", "_")


def password_path(creds_dir: str | Path, role: str) -> Path:
    return Path(creds_dir) / f"{role}.password"


class MissingCredentials(LookupError):
    """No password for a role in the credentials directory or the environment."""


def load_password(role: str, creds_dir: str | Path | None = None) -> str:
    """``role``'s password: ``<creds_dir>/<role>.password`` when a directory is given (or named by
    ``$RLAR_NATS_CREDS_DIR``) and the file exists, else ``$RLAR_NATS_PASSWORD_<ROLE>``.

    Raises :class:`MissingCredentials` naming both places when neither has it.
    """
    creds_dir = creds_dir or os.environ.get(CREDS_DIR_ENV)
    if creds_dir:
        path = password_path(creds_dir, role)
        if path.is_file():
            text = path.read_text().strip()
            if text:
                return text
    env = os.environ.get(password_env(role))
    if env:
        return env
    where = f"{password_path(creds_dir, role)} or " if creds_dir else ""
    raise MissingCredentials(f"no NATS password for role {role!r}: looked in {where}${password_env(role)}")


def generate_credentials(
    creds_dir: str | Path, roles: Iterable[str] | None = None, *, overwrite: bool = False
) -> dict[str, str]:
    """Write a fresh random password per role to ``<creds_dir>/<role>.password`` (mode 0600) and all of
    them as ``credentials.env`` (``RLAR_NATS_PASSWORD_<ROLE>=…`` lines, for the servers' environment, a
    Compose env file or ``kubectl create secret generic --from-env-file``). Existing files are kept
    unless ``overwrite``; returns role -> password."""
    root = Path(creds_dir)
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o700)
    out: dict[str, str] = {}
    for role in roles or [*ROLES, "sys", "leaf"]:
        path = password_path(root, role)
        if path.is_file() and not overwrite:
            out[role] = path.read_text().strip()
            continue
        pw = secrets.token_urlsafe(24)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(pw + "\n")
        out[role] = pw
    env_path = root / "credentials.env"
    fd = os.open(env_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.writelines(f"{password_env(r)}={pw}\n" for r, pw in sorted(out.items()))
    return out


def role_settings(kind: str, creds_dir: str | Path | None = None) -> tuple[list[str], dict[str, str]]:
    """How ``rlar up`` starts a replica of ``kind`` under its role: config overrides (the user name) and
    environment (the password, never on the command line)."""
    role = role_of(kind)
    return [f"nats.user={role}"], {"RLAR_NATS_PASSWORD": load_password(role, creds_dir)}
