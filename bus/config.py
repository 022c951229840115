"""Typed configuration of a bus connection (shared by every actor and CLI command)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class TLSConfig(BaseModel):
    """Client TLS. ``ca_file`` verifies the server; ``cert_file``/``key_file`` authenticate the client."""

    model_config = ConfigDict(extra="forbid")

    ca_file: str | None = None
    """PEM bundle of the CA that signed the server certificates."""
    cert_file: str | None = None
    """Client certificate (PEM), for servers that verify clients."""
    key_file: str | None = None
    """Private key of the client certificate (PEM)."""
    server_name: str | None = None
    """Expected server name, when it differs from the URL host."""


def _tls_from_env() -> TLSConfig | None:
    ca = os.environ.get("RLAR_NATS_TLS_CA")
    if not ca:
        return None
    return TLSConfig(
        ca_file=ca,
        cert_file=os.environ.get("RLAR_NATS_TLS_CERT"),
        key_file=os.environ.get("RLAR_NATS_TLS_KEY"),
    )


class NatsConfig(BaseModel):
    """Where the bus is and how to join it."""

    model_config = ConfigDict(extra="forbid")

    url: str = "embedded"
    """``embedded`` starts a nats-server for this run; otherwise a comma-separated list of nats:// URLs."""
    name: str | None = None
    """Client connection name shown by the server's monitoring."""
    connect_timeout_s: float = Field(2.0, gt=0)
    """Seconds to wait for each connection attempt."""
    initial_attempts: int = Field(3, ge=1)
    """Attempts at start-up before failing with a clear error (each server in the list is tried)."""
    reconnect_wait_s: float = Field(0.5, gt=0)
    """Base of the exponential backoff between reconnect attempts once connected."""
    max_reconnect_attempts: int = -1
    """-1: reconnect forever after a disconnect (actors survive a server restart)."""
    user: str | None = Field(default_factory=lambda: os.environ.get("RLAR_NATS_USER"))
    """User name (default: env RLAR_NATS_USER); the password comes from ``password``, ``password_file``
    or the env var named by ``password_env``, in that order."""
    password: str | None = None
    password_file: str | None = None
    """A file whose first line is the password (a mounted secret)."""
    password_env: str = "RLAR_NATS_PASSWORD"
    """Environment variable read for the password when ``password`` is unset."""
    creds_file: str | None = None
    """A NATS .creds file (JWT + nkey), as issued by nsc; also read from env RLAR_NATS_CREDS."""
    token: str | None = None
    tls: TLSConfig | None = Field(default_factory=lambda: _tls_from_env())
    """Client TLS (default: from env RLAR_NATS_TLS_CA / _CERT / _KEY when RLAR_NATS_TLS_CA is set)."""
    ping_interval_s: float = Field(10.0, gt=0)
    """Seconds between client pings. A server cut off without a TCP reset is noticed after about
    ``ping_interval_s * max_outstanding_pings``, then the client fails over to another server."""
    max_outstanding_pings: int = Field(3, ge=1)
    retry_s: float = Field(60.0, ge=0)
    """How long durable publishes, confirmed acks, KV writes and the start-up topology declaration are
    retried through transient failures (a reconnect, a JetStream leader election) before the error
    surfaces. Retried publishes carry a message id, so the stream keeps one copy."""
    replicas: int = Field(1, ge=1, le=5)
    """JetStream replicas for streams and buckets (3 on a cluster)."""
    storage_dir: str | None = None
    """Embedded server only: JetStream storage directory (default: <run dir>/nats)."""

    def servers(self) -> list[str]:
        return [u.strip() for u in self.url.split(",") if u.strip()]

    def resolved_password(self) -> str | None:
        if self.password is not None:
            return self.password
        if self.password_file:
            lines = Path(self.password_file).read_text().splitlines()
            return lines[0].strip() if lines else ""
        return os.environ.get(self.password_env)

    def resolved_creds(self) -> str | None:
        creds = self.creds_file or os.environ.get("RLAR_NATS_CREDS")
        if creds and not Path(creds).is_file():
            raise FileNotFoundError(f"NATS credentials file not found: {creds}")
        return creds
