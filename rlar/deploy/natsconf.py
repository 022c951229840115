"""NATS server configurations, rendered from one description: a clustered node, a leaf site, the accounts.

Everything a deployment or a test starts comes from here, so the shipped files under deploy/nats/ and the
servers the tests run cannot drift apart (tests/bus/test_deploy_manifests.py checks the shipped files are what
:func:`shipped_files` renders today, through :func:`rlar.deploy.render.rendered_files`).

- :func:`accounts_block` — account ``RLAR`` (JetStream on) with one user per role of
  :data:`rlar.deploy.auth.ROLES` plus the ``leaf`` user a remote site connects with, and the system account
  ``SYS``. Passwords are either literal (tests) or ``$RLAR_NATS_PASSWORD_<ROLE>`` references that the
  server resolves from its environment at start (the shipped auth.conf: no secret in a file).
- :func:`node_config` — one member of a JetStream cluster: client, cluster-route, monitoring and optional
  leaf-node listeners, optional TLS on client and route connections.
- :func:`leaf_config` — a server at a remote worker site that joins the hub as a leaf node (no JetStream of
  its own: JetStream API calls from its clients are answered by the hub's cluster).

The renderer writes the NATS configuration syntax (``key: value``, ``{}`` maps, ``[]`` lists); strings are
quoted, :class:`Raw` values (variable references) are written bare.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlar.deploy.auth import ROLES, Role, leaf_connection, password_env

ACCOUNT = "RLAR"
SYSTEM_ACCOUNT = "SYS"
CLUSTER_NAME = "rlar"
LEAF_ROLES: tuple[str, ...] = ("reward", "sandbox")
"""Roles that run at a remote worker site; its leaf connection is allowed what any of them is."""
JS_DOMAIN = "rlar"
"""The hub cluster's JetStream domain; a leaf site maps its clients' plain JetStream API onto it."""
LEAF_URL_ENV = "RLAR_NATS_LEAF_URL"
"""A leaf site's hub URL(s) with the leaf user's password, e.g. ``nats-leaf://leaf:PW@hub:7422``."""


class Raw(str):
    """A value written without quotes (a ``$VARIABLE`` reference or a size such as ``10G``)."""


def _scalar(value: Any) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    raise TypeError(f"cannot render {type(value).__name__} in a NATS config")


def render(doc: Mapping[str, Any], indent: int = 0) -> str:
    """Render a map as NATS configuration text (keys in insertion order)."""
    pad = "  " * indent
    lines: list[str] = []
    for key, value in doc.items():
        if key.startswith("#"):
            lines.append(f"{pad}# {value}")
        elif isinstance(value, Mapping):
            lines.append(f"{pad}{key} {{")
            lines.append(render(value, indent + 1))
            lines.append(f"{pad}}}")
        elif isinstance(value, list | tuple):
            lines.append(f"{pad}{key}: [")
            for item in value:
                if isinstance(item, Mapping):
                    lines.append(f"{pad}  {{")
                    lines.append(render(item, indent + 2))
                    lines.append(f"{pad}  }}")
                else:
                    lines.append(f"{pad}  {_scalar(item)}")
            lines.append(f"{pad}]")
        elif key == "include":
            lines.append(f"{pad}include {_scalar(value)}")
        else:
            lines.append(f"{pad}{key}: {_scalar(value)}")
    return "\n".join(line for line in lines if line)


@dataclass(frozen=True, slots=True)
class TLSFiles:
    """PEM files of one TLS endpoint. ``verify``: require and check a client certificate from ``ca_file``."""

    cert_file: str
    key_file: str
    ca_file: str
    verify: bool = False
    timeout_s: float = 3.0

    def block(self) -> dict[str, Any]:
        return {
            "cert_file": self.cert_file,
            "key_file": self.key_file,
            "ca_file": self.ca_file,
            "verify": self.verify,
            "timeout": self.timeout_s,
        }


def _password(role: str, passwords: Mapping[str, str] | None) -> str:
    if passwords is None:
        return Raw("$" + password_env(role))
    return passwords[role]


def user_entry(role: Role, passwords: Mapping[str, str] | None) -> dict[str, Any]:
    return {"user": role.name, "password": _password(role.name, passwords), "permissions": role.permissions()}


def leaf_role() -> Role:
    return leaf_connection("leaf", LEAF_ROLES)


def accounts_block(
    passwords: Mapping[str, str] | None = None, roles: Iterable[Role] | None = None, *, jetstream: bool = True
) -> dict[str, Any]:
    """The ``accounts`` and ``system_account`` entries. ``passwords`` maps role -> password (tests); None
    writes ``$RLAR_NATS_PASSWORD_<ROLE>`` references the server resolves from its environment.
    ``jetstream=False`` for a leaf site, whose clients must reach the hub's JetStream instead."""
    users = [user_entry(r, passwords) for r in (roles or ROLES.values())]
    users.append(user_entry(leaf_role(), passwords))
    account: dict[str, Any] = {"jetstream": Raw("enabled")} if jetstream else {}
    return {
        "accounts": {
            ACCOUNT: {**account, "users": users},
            SYSTEM_ACCOUNT: {"users": [{"user": "sys", "password": _password("sys", passwords)}]},
        },
        "system_account": SYSTEM_ACCOUNT,
    }


def node_config(
    name: str,
    *,
    routes: Sequence[str],
    store_dir: str,
    host: str = "0.0.0.0",
    client_port: int = 4222,
    cluster_port: int = 6222,
    http_port: int = 8222,
    leaf_port: int | None = None,
    tls: TLSFiles | None = None,
    cluster_tls: TLSFiles | None = None,
    leaf_tls: TLSFiles | None = None,
    auth: str | Mapping[str, Any] | None = "auth.conf",
    ping_interval_s: float = 10.0,
    ping_max: int = 3,
    max_memory_store: str = "1G",
    max_file_store: str = "20G",
) -> str:
    """One clustered JetStream node. ``routes``: every member's ``nats-route://host:port`` (its own entry
    is ignored by the server). ``auth``: a path to include, an inline :func:`accounts_block`, or None for an
    open server (development only)."""
    doc: dict[str, Any] = {
        "#1": f"RLAR NATS node {name} — rendered by rlar.deploy.natsconf; do not edit by hand",
        "server_name": name,
        "listen": f"{host}:{client_port}",
        "http": f"{host}:{http_port}",
        "ping_interval": f"{ping_interval_s:g}s",
        "ping_max": ping_max,
        "jetstream": {
            "domain": JS_DOMAIN,
            "store_dir": store_dir,
            "max_memory_store": Raw(max_memory_store),
            "max_file_store": Raw(max_file_store),
        },
    }
    if tls is not None:
        doc["tls"] = tls.block()
    cluster: dict[str, Any] = {
        "name": CLUSTER_NAME,
        "listen": f"{host}:{cluster_port}",
        "routes": list(routes),
    }
    if cluster_tls is not None:
        cluster["tls"] = cluster_tls.block()
    doc["cluster"] = cluster
    if leaf_port is not None:
        leaf: dict[str, Any] = {"listen": f"{host}:{leaf_port}"}
        if leaf_tls is not None:
            leaf["tls"] = leaf_tls.block()
        doc["leafnodes"] = leaf
    _add_auth(doc, auth)
    return render(doc) + "\n"


def single_config(
    name: str = "nats",
    *,
    store_dir: str = "/data/jetstream",
    host: str = "0.0.0.0",
    client_port: int = 4222,
    http_port: int = 8222,
    tls: TLSFiles | None = None,
    auth: str | Mapping[str, Any] | None = "auth.conf",
) -> str:
    """One server with JetStream and no cluster (a single host: the Compose recipe)."""
    doc: dict[str, Any] = {
        "#1": f"RLAR single NATS server {name} — rendered by rlar.deploy.natsconf; do not edit by hand",
        "server_name": name,
        "listen": f"{host}:{client_port}",
        "http": f"{host}:{http_port}",
        "jetstream": {"store_dir": store_dir},
    }
    if tls is not None:
        doc["tls"] = tls.block()
    _add_auth(doc, auth)
    return render(doc) + "\n"


def leaf_config(
    name: str,
    *,
    remote_urls: Sequence[str] | None = None,
    host: str = "0.0.0.0",
    client_port: int = 4222,
    http_port: int = 8222,
    remote_ca_file: str | None = None,
    tls: TLSFiles | None = None,
    auth: str | Mapping[str, Any] | None = "auth.conf",
) -> str:
    """A leaf site's server. ``remote_urls`` (with the leaf user's credentials in them); None reads them
    from ``$RLAR_NATS_LEAF_URL`` at start. Local clients authenticate with the same role table."""
    remote: dict[str, Any] = {
        "urls": list(remote_urls) if remote_urls is not None else [Raw("$" + LEAF_URL_ENV)],
        "account": ACCOUNT,
    }
    if remote_ca_file:
        remote["tls"] = {"ca_file": remote_ca_file}
    doc: dict[str, Any] = {
        "#1": f"RLAR leaf site {name} — rendered by rlar.deploy.natsconf; do not edit by hand",
        "#2": "No JetStream here: JetStream API calls of local clients are answered by the hub cluster.",
        "server_name": name,
        "listen": f"{host}:{client_port}",
        "http": f"{host}:{http_port}",
        "leafnodes": {"remotes": [remote]},
        # Clients here use the plain JetStream API ($JS.API.>); map it to the hub's domain.
        "default_js_domain": {ACCOUNT: JS_DOMAIN},
    }
    if tls is not None:
        doc["tls"] = tls.block()
    _add_auth(doc, auth)
    return render(doc) + "\n"


def _add_auth(doc: dict[str, Any], auth: str | Mapping[str, Any] | None) -> None:
    if isinstance(auth, str):
        doc["include"] = auth
    elif auth is not None:
        doc.update(auth)


# -- the shipped files ----------------------------------------------------------------------------
SHIPPED_NODES: tuple[str, ...] = ("nats-1", "nats-2", "nats-3")
SHIPPED_TLS = TLSFiles("/etc/nats/tls/server.pem", "/etc/nats/tls/server-key.pem", "/etc/nats/tls/ca.pem")
SHIPPED_CLUSTER_TLS = TLSFiles(
    "/etc/nats/tls/server.pem", "/etc/nats/tls/server-key.pem", "/etc/nats/tls/ca.pem", verify=True
)


def shipped_files() -> dict[str, str]:
    """File name -> text of everything under deploy/nats/ that is rendered (README and Helm values are
    written by hand, the Helm accounts excepted: see :func:`helm_accounts`)."""
    routes = [f"nats-route://{n}:6222" for n in SHIPPED_NODES]
    files = {
        "auth.conf": "# RLAR accounts and per-role users — rendered by rlar.deploy.natsconf; do not edit.\n"
        "# Passwords are read from the server's environment: RLAR_NATS_PASSWORD_<ROLE>\n"
        "# (python -m rlar.deploy credentials DIR writes a fresh set as DIR/credentials.env).\n"
        + render(accounts_block())
        + "\n",
        "leaf.conf": leaf_config("leaf-site", remote_ca_file="/etc/nats/tls/ca.pem", tls=None),
        "single.conf": single_config(),
    }
    for n in SHIPPED_NODES:
        files[f"{n}.conf"] = node_config(
            n,
            routes=routes,
            store_dir="/data/jetstream",
            leaf_port=7422,
            tls=SHIPPED_TLS,
            cluster_tls=SHIPPED_CLUSTER_TLS,
            leaf_tls=SHIPPED_TLS,
        )
    return files


def helm_accounts() -> dict[str, Any]:
    """The accounts for the official NATS Helm chart's ``config.merge`` (its ``<< $VAR >>`` syntax writes
    a bare variable reference, resolved from the container's environment)."""

    def conv(value: Any) -> Any:
        if isinstance(value, Raw):
            return f"<< {value} >>" if value.startswith("$") else str(value)
        if isinstance(value, Mapping):
            return {k: conv(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [conv(v) for v in value]
        return value

    block = accounts_block()
    return {"accounts": conv(block["accounts"]), "system_account": block["system_account"]}
