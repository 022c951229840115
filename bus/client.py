"""One connection to the bus: publish, request, subscribe and consume wire messages, with dead-lettering.

Everything an actor sends or receives goes through :class:`Bus`. Handlers receive decoded messages; a
payload that does not decode, or whose handler keeps failing, is published to ``rlar.dlq.<subject>`` with
the reason (see :class:`bus.messages.DeadLetter`) and the subscriber goes on with the next message.

Work streams use pull consumers with explicit acks: a message is acked only after its handler returns,
so a consumer that dies leaves it unacked and JetStream redelivers it to another consumer of the same
durable after the consumer's ack-wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import ssl
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from bus import subjects
from bus.codec import DecodeError, decode, encode
from bus.config import NatsConfig
from bus.messages import DeadLetter

log = logging.getLogger("rlar.bus")
CLOSE_WAIT_S = 15.0
# How long ``subscribe`` waits for the server to confirm a new subscription (one PING/PONG round trip).
SUBSCRIBE_CONFIRM_S = 10  # seconds (nats-py types the flush timeout as an int)
T = TypeVar("T")

PAYLOAD_HEADROOM = 8192
"""Bytes of ``max_payload`` kept free for headers (message id, trace) when sizing a payload."""

Handler = Callable[[T, Msg], Awaitable[None]]

TRANSIENT: tuple[type[BaseException], ...] = (
    TimeoutError,
    nats.errors.TimeoutError,
    nats.errors.NoRespondersError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.StaleConnectionError,
    nats.errors.FlushTimeoutError,
    nats.js.errors.NoStreamResponseError,
    nats.js.errors.ServiceUnavailableError,
)
"""Errors that a failover or a JetStream leader election produces and that a retry can outlive."""


class BusError(RuntimeError):
    """Base class of errors raised by our own bus code."""


class BusUnreachable(BusError):
    """No server in the URL list accepted a connection in time; the message says which and why."""


class BusAuthError(BusUnreachable):
    """The server refused the credentials."""


class RequestTimeout(BusError):
    """No reply within the timeout (no responder, or a responder too slow)."""

    def __init__(self, subject: str, timeout_s: float) -> None:
        super().__init__(f"no reply on {subject} within {timeout_s:.2f}s")
        self.subject = subject
        self.timeout_s = timeout_s


def _tls_context(cfg: NatsConfig) -> ssl.SSLContext | None:
    if cfg.tls is None:
        return None
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cfg.tls.ca_file)
    if cfg.tls.cert_file:
        ctx.load_cert_chain(cfg.tls.cert_file, cfg.tls.key_file)
    return ctx


class Bus:
    """A connected NATS client plus its JetStream context, speaking wire messages."""

    def __init__(self, nc: NATS, cfg: NatsConfig, name: str) -> None:
        self.nc = nc
        self.js: JetStreamContext = nc.jetstream()
        self.cfg = cfg
        self.name = name
        self.dead_letters = 0
        self.permission_errors = 0
        self.closing = False
        self._tasks: set[asyncio.Task[Any]] = set()
        # Told of every durable read and message pulled (``consuming(stream, durable)``, ``delivered(msg)``):
        # the actor's Prometheus metrics (rlar.observe.prom.ActorMetrics), when it has any.
        self.observer: Any = None
        # KV bucket handles for kv_put (nats-py's key_value() asks the server for the stream's info each time).
        self._kv: dict[str, Any] = {}

    # -- connection -------------------------------------------------------------------------------
    @classmethod
    async def connect(cls, cfg: NatsConfig, name: str = "rlar") -> Bus:
        """Connect with bounded start-up attempts, then reconnect with backoff forever (by default).

        Raises :class:`BusUnreachable` (or :class:`BusAuthError`) with the servers and the last error when
        no server accepts a connection within ``initial_attempts`` tries.
        """
        if cfg.url == "embedded":
            raise BusError("nats.url is 'embedded': start the embedded server first (bus.embedded)")
        last_error: list[str] = []
        bus_ref: list[Bus] = []

        async def on_error(exc: Exception) -> None:
            text = f"{type(exc).__name__}: {exc}".strip()
            last_error.append(text)
            if "permissions violation" in text.lower():
                if bus_ref:
                    bus_ref[0].permission_errors += 1
                log.error("NATS permission violation for %s: %s", name, exc)
            else:
                log.debug("nats error (%s): %s", name, text)

        async def on_disconnect() -> None:
            if not (bus_ref and bus_ref[0].closing):
                log.warning("%s disconnected from NATS; reconnecting", name)

        async def on_reconnect() -> None:
            log.warning("%s reconnected to NATS", name)

        options: dict[str, Any] = dict(
            servers=cfg.servers(),
            name=cfg.name or name,
            connect_timeout=cfg.connect_timeout_s,
            reconnect_time_wait=cfg.reconnect_wait_s,
            max_reconnect_attempts=cfg.max_reconnect_attempts,
            allow_reconnect=True,
            ping_interval=cfg.ping_interval_s,
            max_outstanding_pings=cfg.max_outstanding_pings,
            error_cb=on_error,
            disconnected_cb=on_disconnect,
            reconnected_cb=on_reconnect,
            tls=_tls_context(cfg),
            tls_hostname=cfg.tls.server_name if cfg.tls else None,
        )
        if cfg.user:
            options.update(user=cfg.user, password=cfg.resolved_password())
        if cfg.token:
            options.update(token=cfg.token)
        creds = cfg.resolved_creds()
        if creds:
            options.update(user_credentials=creds)
        delay = cfg.reconnect_wait_s
        for attempt in range(1, cfg.initial_attempts + 1):
            nc = NATS()
            try:
                # During the initial connect nats-py loops on max_reconnect_attempts (0 and -1 never
                # give up), so bound it here and wrap it in a timeout; our own loop adds the backoff.
                budget = cfg.connect_timeout_s * max(2, 2 * len(cfg.servers())) + 2
                await asyncio.wait_for(nc.connect(**{**options, "max_reconnect_attempts": 1}), budget)
            except (TimeoutError, nats.errors.NoServersError, OSError, nats.errors.Error) as exc:
                last_error.append(f"{type(exc).__name__}: {exc}".strip())
                with contextlib.suppress(Exception):
                    await nc.close()
                refused = [
                    e for e in last_error if "authorization" in e.lower() or "authentication" in e.lower()
                ]
                if refused:
                    raise BusAuthError(
                        f"NATS at {cfg.url} refused the credentials of {name!r} (user {cfg.user!r}): {refused[-1]}"
                    ) from None
                if attempt < cfg.initial_attempts:
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 5.0)
                continue
            # Connected: from now on reconnect as configured.
            nc.options["max_reconnect_attempts"] = cfg.max_reconnect_attempts
            bus = cls(nc, cfg, name)
            bus_ref.append(bus)
            return bus
        # The last few distinct errors: a bare timeout alone hides a TLS or protocol error reported before it.
        detail = "; ".join(dict.fromkeys(last_error[-4:])) if last_error else "no answer"
        raise BusUnreachable(
            f"cannot reach NATS at {cfg.url} after {cfg.initial_attempts} attempt(s): {detail}. "
            "Is nats-server running there? Use --nats embedded to start one for this run."
        )

    async def close(self) -> None:
        """Stop consumers, flush what was published, and close (drain) the connection.

        Consumer loops also end by themselves once ``closing`` is set (after at most one fetch), so a
        cancellation lost in a library's timeout handling cannot keep the process from stopping; one that
        still has not ended after ``CLOSE_WAIT_S`` is logged with its stack and left behind."""
        self.closing = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=CLOSE_WAIT_S)
            for task in pending:
                out = io.StringIO()
                task.print_stack(file=out)
                log.error(
                    "%s: %s did not stop within %.0fs:\n%s",
                    self.name,
                    task.get_name(),
                    CLOSE_WAIT_S,
                    out.getvalue(),
                )
        if not self.nc.is_closed:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.nc.drain(), timeout=5)
            with contextlib.suppress(Exception):
                await self.nc.close()

    # -- sending ----------------------------------------------------------------------------------
    async def publish(self, subject: str, msg: Any, headers: dict[str, str] | None = None) -> None:
        """Core NATS publish (fire and forget; JetStream still captures it if a stream listens)."""
        await self.nc.publish(subject, encode(msg), headers=headers)

    async def publish_raw(self, subject: str, payload: bytes) -> None:
        await self.nc.publish(subject, payload)

    async def js_publish(
        self, subject: str, msg: Any, *, msg_id: str | None = None, timeout_s: float = 5.0
    ) -> Any:
        """Durable publish: returns the stream's ack; ``msg_id`` de-duplicates within the stream window.

        Transient failures (reconnect, leader election) are retried for ``NatsConfig.retry_s``; without a
        ``msg_id`` one is generated so that a retry of a publish that did land is not stored twice.
        """
        headers = {"Nats-Msg-Id": msg_id or uuid.uuid4().hex}
        payload = encode(msg)

        async def once() -> Any:
            return await self.js.publish(subject, payload, timeout=timeout_s, headers=headers)

        return await self.retrying(once, f"publish on {subject}")

    async def js_publish_many(
        self, items: Sequence[tuple[str, bytes, str]], *, timeout_s: float = 5.0
    ) -> list[Any]:
        """Durable publish of pre-encoded payloads ``(subject, payload, msg_id)``, pipelined: all are sent at
        once and their acks awaited together (each retried like :meth:`js_publish`). Raises the first
        failure after every publish has finished."""

        async def one(subject: str, payload: bytes, msg_id: str) -> Any:
            headers = {"Nats-Msg-Id": msg_id}

            async def once() -> Any:
                return await self.js.publish(subject, payload, timeout=timeout_s, headers=headers)

            return await self.retrying(once, f"publish on {subject}")

        results = await asyncio.gather(*(one(*it) for it in items), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r
        return results

    @property
    def max_payload(self) -> int:
        """Largest payload to publish: the server's ``max_payload`` less room for headers."""
        return max(1024, int(self.nc.max_payload) - PAYLOAD_HEADROOM)

    async def kv_put(self, bucket: str, key: str, value: bytes) -> int:
        """Write a KV entry, retrying through transient failures; returns its revision."""

        async def once() -> int:
            kv = self._kv.get(bucket)
            if kv is None:
                kv = self._kv[bucket] = await self.js.key_value(bucket)
            try:
                return int(await kv.put(key, value))
            except Exception:
                self._kv.pop(bucket, None)  # looked up again on the retry (the bucket may be gone)
                raise

        return await self.retrying(once, f"kv put {bucket}/{key}")

    async def kv_keys(self, bucket: str, pattern: str = ">", *, timeout_s: float = 10.0) -> list[str]:
        """Every live key of ``bucket`` matching ``pattern`` (NATS wildcards), sorted; [] when none.

        Use this, not nats-py's ``KeyValue.keys()``: that one watches with a push consumer and decides
        it has seen everything when the server reports nothing pending and the client has received
        nothing yet, which is also true while the pushed entries are still in flight (a busy machine
        lists an empty bucket). Here an ephemeral pull consumer (last entry per key, headers only)
        counts the pending entries when it is created, before anything is delivered, and the keys are
        read until that count is used up; keys deleted or purged are left out.
        """

        stream = f"KV_{bucket}"
        prefix = f"$KV.{bucket}."
        info = await self.js.add_consumer(
            stream,
            ConsumerConfig(
                filter_subject=prefix + pattern,
                deliver_policy=DeliverPolicy.LAST_PER_SUBJECT,
                ack_policy=AckPolicy.NONE,
                headers_only=True,
                mem_storage=True,
                inactive_threshold=max(60.0, timeout_s),
            ),
        )
        assert info.name is not None
        keys: list[str] = []
        try:
            pending = int(info.num_pending or 0)
            if pending:
                psub = await self.js.pull_subscribe_bind(consumer=info.name, stream=stream)
                try:
                    deadline = time.monotonic() + timeout_s
                    while pending > 0:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise TimeoutError(
                                f"listing keys of {bucket}: {pending} entries not read in time"
                            )
                        for m in await self.fetch(psub, min(pending, 256), min(left, 2.0), stream):
                            pending = int(m.metadata.num_pending)
                            op = (m.headers or {}).get("KV-Operation")
                            if op not in ("DEL", "PURGE"):
                                keys.append(m.subject[len(prefix) :])
                finally:
                    with contextlib.suppress(Exception):
                        await psub.unsubscribe()
        finally:
            with contextlib.suppress(Exception):
                await self.js.delete_consumer(stream, info.name)
        return sorted(keys)

    async def last_valid(self, stream: str, subject: str, cls: type[T], *, scan: int = 64) -> T | None:
        """The newest message on ``subject`` kept in ``stream`` that decodes as ``cls``; None when none does.

        ``js.get_last_msg`` alone trusts the newest entry: one malformed or wrong-typed message published on a
        last-value subject (learner progress, weight announcements) would hide the real state from every actor
        that starts after it. Walks back over at most ``scan`` entries of the stream (skipping other subjects
        and entries that do not decode); skipped entries are logged.
        """
        try:
            last = await self.js.get_last_msg(stream, subject)
        except nats.js.errors.NotFoundError:
            return None
        seq, skipped = int(last.seq or 0), 0
        raw: Any = last
        for _ in range(scan):
            if raw is not None and raw.subject == subject:
                try:
                    msg = decode(raw.data or b"", cls)
                except DecodeError as exc:
                    skipped += 1
                    log.warning("%s: skipping stream entry %d on %s: %s", stream, seq, subject, exc)
                else:
                    return msg
            seq -= 1
            if seq < 1:
                break
            try:
                raw = await self.js.get_msg(stream, seq)
            except nats.js.errors.NotFoundError:  # deleted, or below the stream's first sequence
                raw = None
        log.warning("%s: no valid %s on %s (%d entries skipped)", stream, cls.__name__, subject, skipped)
        return None

    async def ack(self, raw: Msg, *, timeout_s: float = 2.0) -> None:
        """Ack and wait until the server confirms it, retrying through transient failures.

        A plain ``raw.ack()`` is fire-and-forget: written to a connection that is dead but not yet known to
        be (a partitioned server), it is lost and the message comes back after the ack-wait. Callers that
        must not see a message again (the learner, once a group is trained on) confirm their acks.
        """

        async def once() -> None:
            with contextlib.suppress(nats.errors.MsgAlreadyAckdError):
                await raw.ack_sync(timeout=timeout_s)

        await self.retrying(once, f"ack on {raw.subject}")

    async def retrying(
        self, op: Callable[[], Awaitable[T]], what: str, *, budget_s: float | None = None
    ) -> T:
        """Run ``op`` until it succeeds, retrying :data:`TRANSIENT` errors with backoff for ``budget_s``
        (default ``NatsConfig.retry_s``); then the last error is raised. A permission violation reported
        during an attempt (it shows up as a timeout) is not transient: it is raised at once."""
        budget = self.cfg.retry_s if budget_s is None else budget_s
        deadline = time.monotonic() + budget
        delay, attempt = 0.1, 1
        while True:
            denied = self.permission_errors
            try:
                return await op()
            except TRANSIENT as exc:
                if (
                    self.nc.is_closed
                    or self.permission_errors > denied
                    or time.monotonic() + delay > deadline
                ):
                    raise
                log.warning(
                    "%s failed (%s, attempt %d); retrying in %.1fs", what, type(exc).__name__, attempt, delay
                )
                await asyncio.sleep(delay)
                delay, attempt = min(2 * delay, 2.0), attempt + 1

    async def request(self, subject: str, msg: Any, reply_type: type[T], *, timeout_s: float) -> T:
        """Request/reply with a timeout; raises :class:`RequestTimeout` or a :class:`DecodeError`."""
        try:
            reply = await self.nc.request(subject, encode(msg), timeout=timeout_s)
        except (TimeoutError, nats.errors.TimeoutError, nats.errors.NoRespondersError):
            raise RequestTimeout(subject, timeout_s) from None
        return decode(reply.data, reply_type)

    async def dead_letter(self, subject: str, payload: bytes, reason: str, *, deliveries: int = 1) -> None:
        """Publish a payload that could not be handled to ``rlar.dlq.<subject>`` with the reason."""
        self.dead_letters += 1
        log.warning("dead-letter on %s: %s", subject, reason)
        letter = DeadLetter(
            subject=subject, reason=reason, payload=payload, actor=self.name, deliveries=deliveries
        )
        try:
            await self.nc.publish(subjects.dlq(subject), encode(letter))
        except Exception as exc:  # the dead-letter path must never take the subscriber down
            log.error("could not publish dead-letter for %s: %s", subject, exc)

    # -- receiving --------------------------------------------------------------------------------
    async def subscribe(
        self,
        subject: str,
        msg_type: type[T],
        handler: Handler[T],
        *,
        queue: str = "",
    ) -> Subscription:
        """Core subscription (optionally in a queue group) delivering decoded messages to ``handler``.

        Undecodable payloads and handler exceptions are dead-lettered; the subscription keeps running.
        Returns once the server has the subscription (a round trip after the SUB), so a process that says
        it is ready after subscribing is reachable from every other connection: otherwise a request sent
        from elsewhere can reach the server before the SUB does and be answered "no responders" (503),
        which on a busy machine or across hosts is a matter of scheduling luck.
        """

        async def on_msg(raw: Msg) -> None:
            try:
                obj = decode(raw.data, msg_type)
            except DecodeError as exc:
                await self.dead_letter(raw.subject, raw.data, exc.reason)
                return
            try:
                await handler(obj, raw)
            except Exception as exc:
                log.exception("handler failed on %s", raw.subject)
                await self.dead_letter(raw.subject, raw.data, f"handler error: {type(exc).__name__}: {exc}")

        sub = await self.nc.subscribe(subject, queue=queue, cb=on_msg)
        await self._confirm_interest(subject)
        return sub

    async def _confirm_interest(self, subject: str) -> None:
        """Wait for the server to have processed what this connection sent so far (a PING answered by a
        PONG comes after the SUB on the same connection). A bus that is down or reconnecting does not
        block the caller past ``SUBSCRIBE_CONFIRM_S``: the client re-sends its subscriptions on reconnect."""
        try:
            await self.nc.flush(timeout=SUBSCRIBE_CONFIRM_S)
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning(
                "the server did not confirm the subscription to %s within %.0fs (%s); it is sent "
                "again when the connection is back",
                subject,
                SUBSCRIBE_CONFIRM_S,
                type(exc).__name__,
            )

    def consume(
        self,
        stream: str,
        durable: str,
        msg_type: type[T],
        handler: Handler[T],
        *,
        batch: int = 16,
        concurrency: int = 1,
        auto_ack: bool = True,
        max_deliver: int = 5,
        stop: asyncio.Event | None = None,
        fetch_timeout_s: float = 1.0,
    ) -> asyncio.Task[None]:
        """Start a pull loop on a durable consumer declared in :mod:`bus.topology`.

        With ``auto_ack`` the message is acked after the handler returns; a handler exception naks it
        for redelivery, and after ``max_deliver`` deliveries it is dead-lettered and terminated. Without
        ``auto_ack`` the handler owns ack/nak (e.g. the learner acks once a group is trained on).
        The loop ends when ``stop`` is set (after finishing the messages in hand) or when cancelled.
        """
        if self.observer is not None:
            self.observer.consuming(stream, durable)
        task = asyncio.create_task(
            self._pull_loop(
                stream,
                durable,
                msg_type,
                handler,
                batch,
                concurrency,
                auto_ack,
                max_deliver,
                stop,
                fetch_timeout_s,
            ),
            name=f"consume:{stream}/{durable}",
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _pull_loop(
        self,
        stream: str,
        durable: str,
        msg_type: type[T],
        handler: Handler[T],
        batch: int,
        concurrency: int,
        auto_ack: bool,
        max_deliver: int,
        stop: asyncio.Event | None,
        fetch_timeout_s: float,
    ) -> None:
        psub = await self.js.pull_subscribe_bind(durable=durable, stream=stream)
        sem = asyncio.Semaphore(max(1, concurrency))
        inflight: set[asyncio.Task[None]] = set()
        try:
            while (stop is None or not stop.is_set()) and not self.closing:
                want = batch if concurrency <= 1 else max(1, min(batch, concurrency - len(inflight)))
                try:
                    msgs = await self.fetch(psub, want, fetch_timeout_s, f"{stream}/{durable}")
                except nats.errors.ConnectionClosedError:
                    return
                for raw in msgs:
                    if concurrency <= 1:
                        await self._handle_one(raw, msg_type, handler, auto_ack, max_deliver)
                        continue
                    await sem.acquire()
                    t = asyncio.create_task(self._handle_one(raw, msg_type, handler, auto_ack, max_deliver))
                    inflight.add(t)

                    def _done(done: asyncio.Task[None]) -> None:
                        inflight.discard(done)
                        sem.release()

                    t.add_done_callback(_done)
        finally:
            if inflight:
                await asyncio.gather(*inflight, return_exceptions=True)
            with contextlib.suppress(Exception):
                await psub.unsubscribe()

    async def fetch(
        self, psub: JetStreamContext.PullSubscription, n: int, timeout_s: float, what: str
    ) -> list[Msg]:
        """One pull of up to ``n`` messages; nothing (rather than an error) when none came in time or the
        cluster is failing over (logged, with a short pause). A closed connection still raises."""
        try:
            msgs = await psub.fetch(n, timeout=timeout_s)
            if self.observer is not None:
                for m in msgs:
                    self.observer.delivered(m)
            return msgs
        except (TimeoutError, nats.errors.TimeoutError):
            return []
        except nats.errors.ConnectionClosedError:
            raise
        except (nats.js.errors.APIError, nats.errors.Error) as exc:
            log.warning("fetch on %s failed: %s", what, exc)
            await asyncio.sleep(0.5)
            return []

    async def _handle_one(
        self, raw: Msg, msg_type: type[T], handler: Handler[T], auto_ack: bool, max_deliver: int
    ) -> None:
        deliveries = 1
        with contextlib.suppress(Exception):
            deliveries = raw.metadata.num_delivered
        try:
            obj = decode(raw.data, msg_type)
        except DecodeError as exc:
            await self.dead_letter(raw.subject, raw.data, exc.reason, deliveries=deliveries)
            with contextlib.suppress(Exception):
                await raw.term()
            return
        try:
            await handler(obj, raw)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            reason = f"handler error: {type(exc).__name__}: {exc}"
            if deliveries >= max_deliver:
                await self.dead_letter(raw.subject, raw.data, reason, deliveries=deliveries)
                with contextlib.suppress(Exception):
                    await raw.term()
            else:
                log.warning("%s (delivery %d/%d); will be redelivered", reason, deliveries, max_deliver)
                with contextlib.suppress(Exception):
                    await raw.nak(delay=min(0.5 * 2 ** (deliveries - 1), 10.0))
            return
        if auto_ack:
            with contextlib.suppress(Exception):
                await raw.ack()


async def wait_for(predicate: Callable[[], bool], timeout_s: float, interval_s: float = 0.02) -> bool:
    """Poll ``predicate`` until true or timeout; for tests and start-up checks."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(interval_s)
    return predicate()


KEEPALIVE_MIN_S = 0.2
"""The shortest interval between two in-progress marks of one message (a tiny ack-wait in tests)."""


async def mark_in_progress(msgs: Iterable[Msg]) -> int:
    """Tell JetStream each of ``msgs`` is still being worked on: its ack-wait starts again.

    A mark that fails (the bus reconnecting, the message acked meanwhile) is skipped and logged at debug
    level; the next mark tries again. Returns how many marks were sent.
    """
    sent = 0
    for raw in list(msgs):
        try:
            await raw.in_progress()
            sent += 1
        except Exception as exc:
            log.debug("in_progress on %s failed: %s", raw.subject, exc)
    return sent


@contextlib.asynccontextmanager
async def keep_in_progress(
    msgs: Msg | Iterable[Msg] | Callable[[], Iterable[Msg]], ack_wait_s: float
) -> AsyncIterator[None]:
    """Keep unacked messages from being redelivered while the block runs.

    Every third of ``ack_wait_s`` (at least :data:`KEEPALIVE_MIN_S`) each message is marked in progress
    (:func:`mark_in_progress`); the marking stops when the block ends, however it ends. ``msgs`` is one
    message, a collection (read at every mark, so one that grows is followed) or a function returning
    the messages to mark. Acking stays the caller's.
    """

    def current() -> Iterable[Msg]:
        if isinstance(msgs, Msg):
            return (msgs,)
        return msgs() if callable(msgs) else msgs

    interval = max(KEEPALIVE_MIN_S, ack_wait_s / 3)
    done = asyncio.Event()

    async def loop() -> None:
        # Waits on ``done`` rather than sleeping blindly: nats-py swallows a cancel that lands inside a
        # publish (``_flush_pending``), and the block's end must still stop the marking.
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), interval)
            if not done.is_set():
                await mark_in_progress(current())

    task = asyncio.create_task(loop(), name="keep_in_progress")
    try:
        yield
    finally:
        done.set()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
