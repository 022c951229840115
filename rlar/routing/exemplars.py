"""The labelled exemplars the offline router matches queries against, with their embeddings.

An exemplar is one record of a labelled routing set (``data/routing/labelled.jsonl``, written by
``python -m rlar.benchmarks.routing_set``): a query in its dataset's own shape and the built-in tools that fit it
(``acceptable``; empty: none fits). ``group`` is the record's ``type`` (its benchmark format), else its task
name: evaluations leave whole groups out.

Embeddings (all-MiniLM-L6-v2 of :meth:`RoutingQuery.matching_text`) take a minute or more for the whole set on
a busy 2-core host. The shipped set's are shipped (``data/routing/vectors.npz``, written by ``rlar bench routing
--save``); others are cached on disk (``routing/<key>.npy`` under :func:`rlar.resources.cache_dir`). Either
is used only when its key — the embedding model's name and every text — matches; vectors are kept at float16
precision, so computed and stored ones are the same numbers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rlar import resources
from rlar.resources import data_dir
from rlar.routing.confidence import reference_structure
from rlar.routing.query import QueryFeatures, RoutingQuery

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Exemplar",
    "ExemplarBank",
    "cache_dir",
    "cached_features",
    "cached_vectors",
    "default_path",
    "load_labelled",
    "save_shipped_vectors",
    "shipped_vectors_path",
]

log = logging.getLogger(__name__)

Embed = Callable[[list[str]], list[list[float]]]


def default_path() -> Path:
    """The shipped labelled set (:func:`rlar.resources.data_dir`)."""
    return data_dir() / "routing" / "labelled.jsonl"


def cache_dir() -> Path:
    return resources.cache_dir() / "routing"


def load_labelled(path: str | Path, *, labelled: bool = True) -> list[dict[str, Any]]:
    """The JSON object records of a JSONL routing file (with ``labelled``, each with an ``acceptable`` list);
    ``ValueError`` naming the line for a malformed one."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: not JSON: {exc}") from None
        if not isinstance(rec, dict):
            raise ValueError(f"{path}:{n}: a record must be a JSON object")
        if labelled and not isinstance(rec.get("acceptable"), list):
            raise ValueError(f"{path}:{n}: record has no 'acceptable' list")
        out.append(rec)
    return out


@dataclass(frozen=True, slots=True)
class Exemplar:
    id: str
    group: str
    query: RoutingQuery
    acceptable: tuple[str, ...]
    text: str
    features: QueryFeatures
    origin: str = ""
    """Who wrote the record: the held-out set it was joined from (``heldout_blind2``), "" for the generator's."""

    @property
    def shape(self) -> str:
        """The shape neighbours are matched on (:attr:`QueryFeatures.routing_shape`)."""
        return self.features.routing_shape


def group_of(rec: dict[str, Any]) -> str:
    return str(rec.get("type") or rec.get("task") or "")


class ExemplarBank:
    """Exemplars and their unit vectors (``vectors[i]`` belongs to ``exemplars[i]``)."""

    def __init__(
        self, exemplars: Sequence[Exemplar], vectors: np.ndarray, *, structures: Sequence[str] | None = None
    ) -> None:
        """``structures``: the exemplars' reference structures when already read (a subset's)."""

        if len(exemplars) != len(vectors):
            raise ValueError("one vector per exemplar")
        self.exemplars = list(exemplars)
        self.vectors = vectors
        self.shapes = np.array([e.shape for e in self.exemplars])
        self.groups = np.array([e.group for e in self.exemplars])
        self.structures = np.array(
            list(structures)
            if structures is not None
            else [reference_structure(e.query.reference) for e in self.exemplars]
        )
        """Each reference's structure (:func:`rlar.routing.confidence.reference_structure`)."""
        self.metadata_keys = frozenset(str(k) for e in self.exemplars for k in e.query.metadata)
        self.tools = sorted({t for e in self.exemplars for t in e.acceptable})
        """Tool names some exemplar labels (a candidate outside this list is new to the bank)."""
        self._columns: dict[str, Any] = {}
        self._options: Any = None

    def label_matrix(self, names: Sequence[str]) -> np.ndarray:
        """(exemplars, names) booleans: whether each exemplar calls each tool acceptable."""

        for n in names:
            if n not in self._columns:
                self._columns[n] = np.array([n in e.acceptable for e in self.exemplars], dtype=bool)
        if not names:
            return np.zeros((len(self.exemplars), 0), dtype=bool)
        return np.stack([self._columns[n] for n in names], axis=1)

    def accepts(self, decision: str | None) -> np.ndarray:
        """(exemplars,) booleans: whether each exemplar accepts ``decision`` — lists that tool, or for None
        ("no tool fits") lists none."""

        if decision is None:
            return np.array([not e.acceptable for e in self.exemplars], dtype=bool)
        return self.label_matrix([decision])[:, 0]

    def option_matrix(self) -> np.ndarray:
        """(exemplars, options) booleans over every tool some exemplar names, then "no tool fits"."""

        if self._options is None:
            self._options = np.concatenate(
                [self.label_matrix(self.tools), self.accepts(None)[:, None]], axis=1
            ).astype(float)
        return np.asarray(self._options)

    def __len__(self) -> int:
        return len(self.exemplars)

    @classmethod
    def from_records(
        cls, records: Sequence[dict[str, Any]], embed: Embed, *, model_id: str | None = None
    ) -> ExemplarBank:
        """Embed ``records`` (cached on disk under ``model_id``; no disk cache without one)."""

        queries = [RoutingQuery.from_record(rec) for rec in records]
        exemplars = [
            Exemplar(
                str(rec.get("id", i)),
                group_of(rec),
                q,
                tuple(rec["acceptable"]),
                q.matching_text(),
                f,
                str(rec.get("origin") or ""),
            )
            for i, (rec, q, f) in enumerate(zip(records, queries, cached_features(queries), strict=True))
        ]
        texts = [e.text for e in exemplars]
        vectors = cached_vectors(texts, embed, model_id) if texts else np.zeros((0, 1), dtype=np.float32)
        return cls(exemplars, vectors)

    @classmethod
    def load(cls, path: str | Path | None, embed: Embed, *, model_id: str | None = None) -> ExemplarBank:
        """The bank of a labelled file (None: the shipped set)."""
        return cls.from_records(load_labelled(path or default_path()), embed, model_id=model_id)

    def subset(self, keep: Sequence[bool]) -> ExemplarBank:
        idx = [i for i, k in enumerate(keep) if k]
        return ExemplarBank(
            [self.exemplars[i] for i in idx],
            self.vectors[idx],
            structures=[str(self.structures[i]) for i in idx],
        )


# The packages whose code computes QueryFeatures: a change to any of their files is a new cache key.
_FEATURE_PACKAGES = ("routing", "tasks", "tools", "synthesis")


def features_code_key() -> str:
    """A hash of the source of :data:`_FEATURE_PACKAGES` (what :meth:`RoutingQuery.features` runs)."""
    h = hashlib.sha256()
    pkg = Path(__file__).resolve().parents[1]
    for sub in _FEATURE_PACKAGES:
        for f in sorted((pkg / sub).rglob("*.py")):
            h.update(str(f.relative_to(pkg)).encode("utf-8") + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def cached_features(queries: Sequence[RoutingQuery]) -> list[QueryFeatures]:
    """``[q.features() for q in queries]``, from the disk cache (``routing/features-<key>.json``) when the key —
    the code that reads them (:func:`features_code_key`) and every query — matches, else computed and cached.
    Reading an instruction set's queries is seconds of CPU per process (the router, ``rlar tools route``, the
    routing bench all load the shipped bank); features that would not read back equal are never cached."""
    if not queries:
        return []
    doc = json.dumps([q.to_dict() for q in queries], sort_keys=True, default=str)
    key = hashlib.sha256(f"{features_code_key()}\x1e{doc}".encode()).hexdigest()[:32]
    path = cache_dir() / f"features-{key}.json"
    if path.is_file():
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(rows, list) and len(rows) == len(queries):
                return [QueryFeatures.from_dict(r) for r in rows]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("routing: unreadable features cache %s (%s); recomputing", path, exc)
    feats = [q.features() for q in queries]
    rows = [f.to_dict() for f in feats]
    text = json.dumps(rows)
    if [QueryFeatures.from_dict(r) for r in json.loads(text)] != feats:
        log.debug("routing: features do not round-trip through JSON; not cached")
        return feats
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:  # a read-only home: work without the cache
        log.warning("routing: could not cache features at %s: %s", path, exc)
    return feats


def vectors_key(model_id: str, texts: Sequence[str]) -> str:
    return hashlib.sha256("\x1e".join([model_id, *texts]).encode("utf-8")).hexdigest()[:32]


def shipped_vectors_path() -> Path:
    return default_path().with_name("vectors.npz")


def save_shipped_vectors(path: Path, texts: Sequence[str], vectors: np.ndarray, model_id: str) -> None:
    """Write the vectors of ``texts`` (float16) with the key they are valid for."""

    np.savez_compressed(path, key=np.array(vectors_key(model_id, texts)), vectors=vectors.astype(np.float16))


def cached_vectors(texts: list[str], embed: Embed, model_id: str | None) -> np.ndarray:
    """``embed(texts)`` as float32 rounded through float16 (the same values whether computed here or read
    back), from the shipped file (``data/routing/vectors.npz``) or the disk cache when their key (model and
    every text) matches, else computed and cached on disk; without a ``model_id`` nothing is cached."""

    path = None
    if model_id:
        key = vectors_key(model_id, texts)
        shipped = shipped_vectors_path()
        if shipped.is_file():
            try:
                with np.load(shipped) as z:
                    if str(z["key"]) == key:
                        return z["vectors"].astype(np.float32)
            except (OSError, ValueError, KeyError) as exc:
                log.warning("routing: unreadable %s (%s)", shipped, exc)
        path = cache_dir() / f"{key}.npy"
        if path.is_file():
            try:
                vecs = np.load(path)
                if vecs.shape[0] == len(texts):
                    return vecs.astype(np.float16).astype(np.float32)
            except (OSError, ValueError) as exc:
                log.warning("routing: unreadable embedding cache %s (%s); recomputing", path, exc)
    vecs = np.asarray(embed(texts), dtype=np.float32).astype(np.float16)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
            np.save(tmp, vecs)
            os.replace(tmp, path)
        except OSError as exc:  # a read-only home: work without the cache
            log.warning("routing: could not cache embeddings at %s: %s", path, exc)
    return vecs.astype(np.float32)
