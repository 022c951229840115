"""Fitting the offline router on its exemplars, and routing with whole benchmark types held out.

:class:`Trainer` precomputes, once per exemplar bank and candidate set, every exemplar's cosines to every other
exemplar and to each tool's description, its features and eligible tools. Then:

- ``weights(exclude)``: :func:`rlar.routing.scorer.fit_weights` on the exemplars outside the groups
  ``exclude``, each seeing neighbours outside its own group (and outside ``exclude``);
- ``router(exclude, weights)``: an :class:`~rlar.routing.matching.OfflineRouter` on the bank without
  ``exclude`` — the deployed decision procedure, unchanged, on a smaller bank;
- ``held_out_routes()``: every exemplar routed by a router that never saw its group (its exemplars are out of
  the bank and out of the weights' fit): leave-one-type-out;
- ``kind_held_out_routes()``: the same with every group of its reference kind held out together;
- ``hand_held_out_routes()``: the same with every group written by one hand held out together (the generator's
  formats, or one blind set's: the records' ``origin``).

- ``in_distribution_routes()``: every exemplar routed with only itself left out;
- ``tool_held_out_routes(name)``: the exemplars that accept a tool, routed as if no exemplar named it.

:func:`fit_model` is what the router uses: weights fitted on the whole bank, with the correctness model of its
decisions (:mod:`rlar.routing.confidence`) fitted on the evidence of four families of held-out decisions —
every exemplar routed with its format held out (``held_out_routes``), with every format of its reference kind
held out (``kind_held_out_routes``: reference kinds the router has not seen), with every format its author wrote
held out (``hand_held_out_routes``: formats written by another hand, as a user's are — with its format alone held
out, a format keeps its siblings by the same author in the bank, and is routed far more often right than a new
author's formats are), and with only itself held out (``in_distribution_routes``: formats it knows) —
(:func:`build_model`), read from ``data/routing/model.json`` or the disk cache when its :func:`fingerprint`
(method, constants, every exemplar and vector, every tool) matches, else fitted and cached.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from rlar.routing.boosting import constants as boosting_constants
from rlar.routing.confidence import (
    EVIDENCE,
    FOLDS,
    NEIGHBOURS,
    SHARPNESS,
    TARGET_PRECISION,
    CorrectnessModel,
    fit_correctness,
)
from rlar.routing.exemplars import ExemplarBank, cache_dir, cached_vectors, default_path
from rlar.routing.matching import OfflineRouter
from rlar.routing.rules import eligibility
from rlar.routing.scorer import (
    FEATURES,
    K_NEIGHBOURS,
    L2,
    RELATIONS,
    STEPS,
    TEMPERATURE,
    ScorerModel,
    candidate_rows,
    feature_names,
    fit_weights,
    neighbour_order,
    tool_text,
)
from rlar.tools.base import ToolSpec, builtin_specs

__all__ = [
    "HeldOutRoute",
    "Trainer",
    "build_model",
    "describe",
    "fingerprint",
    "fit_confidence",
    "fit_model",
    "shipped_router",
]

log = logging.getLogger(__name__)

Embed = Callable[[list[str]], list[list[float]]]
METHOD_VERSION = "knn-choice-v7"  # v2: relation features for answer texts only; v3: reference kinds;
# v4: short answers in another language read as answer texts (QueryFeatures.answer_shape); v5: confidence from
# a correctness model on each decision's evidence (rlar.routing.confidence); v6: a digit the query maps to a label
# is an index (rlar.routing.query._DIGIT_MAPPINGS); v7: the correctness model also learns from routes with each
# author's formats held out (Trainer.hand_held_out_routes)


@dataclass(slots=True)
class HeldOutRoute:
    """One exemplar routed with its group held out (``family``: ``type``, its format alone; ``kind``, every
    format of its reference kind; ``hand``, every format by its author; ``record``, only itself)."""

    index: int
    group: str
    tools: list[str]
    none_fit: bool
    path: str
    p_top: float
    correct: bool
    evidence: dict[str, float] = field(default_factory=dict)
    family: str = "type"


class Trainer:
    def __init__(self, bank: ExemplarBank, specs: Sequence[ToolSpec], embed: Embed) -> None:
        self.bank = bank
        self.specs = list(specs)
        self.embed = embed
        self.names = [s.name for s in self.specs]
        tool_vecs = cached_vectors(
            [tool_text(s) for s in self.specs], embed, getattr(embed, "model_id", None)
        )
        self.tool_vectors = {tool_text(s): v for s, v in zip(self.specs, tool_vecs, strict=True)}
        v = bank.vectors
        self.sims = v @ v.T
        np.fill_diagonal(self.sims, -np.inf)  # an exemplar is never its own neighbour
        self.features = [e.features for e in bank.exemplars]
        self.order = neighbour_order(self.sims, bank.shapes[:, None] == bank.shapes[None, :])
        self.desc = v @ tool_vecs.T
        self.groups = np.array([e.group for e in bank.exemplars])
        self.labels = np.array([[n in e.acceptable for n in self.names] for e in bank.exemplars], dtype=bool)
        self.eligible = [
            [j for j, s in enumerate(self.specs) if not eligibility(s, e.query, f)]
            for e, f in zip(bank.exemplars, self.features, strict=True)
        ]
        self.tools = list(bank.tools)
        # The feature columns that do not depend on the neighbours, per exemplar (the votes and new-tool
        # columns are filled in per instance).
        self.base_rows = [self._rows(i, self.tools) for i in range(len(bank))]
        self._rel_cols = {t: len(FEATURES) + k * len(RELATIONS) for k, t in enumerate(self.tools)}

    def instances(self, exclude: set[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Training instances from the exemplars outside ``exclude`` (see the module docstring), padded:
        features (instances, candidates, features), candidate mask, acceptable mask.

        Vectorised per set of eligible tools: for each exemplar with that set, its nearest usable neighbours
        (outside ``exclude`` and its own group, labelled with an eligible tool) in order of similarity."""
        outside: np.ndarray = (
            ~np.isin(self.groups, list(exclude)) if exclude else np.ones(len(self.groups), dtype=bool)
        )
        patterns: dict[tuple[int, ...], list[int]] = {}
        for i in np.flatnonzero(outside):
            elig = tuple(self.eligible[i])
            if len(elig) >= 2 and self.labels[i, list(elig)].any():
                patterns.setdefault(elig, []).append(int(i))
        cmax = max((len(p) for p in patterns), default=1)
        xs, masks, ys = [], [], []
        for elig, idx in patterns.items():
            cols = list(elig)
            base = np.stack([self.base_rows[i] for i in idx])  # (n, c, d)
            acc = self.labels[np.ix_(idx, cols)]
            order = self.order[idx]  # (n, exemplars), by decreasing similarity
            sims = np.take_along_axis(self.sims[idx], order, axis=1)
            sims = np.where(np.isfinite(sims), sims, 0.0)
            own: np.ndarray = self.groups[idx][:, None] != self.groups[None, :]
            for hidden in (None, *range(len(cols))):
                lab = self.labels[:, cols].copy()
                if hidden is not None:
                    lab[:, hidden] = False
                relevant = np.asarray(lab.any(axis=1))
                usable = np.take_along_axis(outside[None, :] & own & relevant[None, :], order, axis=1)
                r, k = np.nonzero(usable & (np.cumsum(usable, axis=1) <= K_NEIGHBOURS))
                s_rk = sims[r, k]
                top = np.full(len(idx), -np.inf)
                np.maximum.at(top, r, s_rk)
                w = np.exp((s_rk - top[r]) / TEMPERATURE)
                votes = np.zeros((len(idx), len(cols)))
                np.add.at(votes, r, w[:, None] * lab[order[r, k]])
                votes /= np.maximum(np.bincount(r, weights=w, minlength=len(idx)), 1e-12)[:, None]
                rows = base.copy()
                rows[:, :, 0] = votes
                if hidden is not None:  # the hidden tool looks new: no votes, no per-tool features
                    rows[:, hidden, 0] = 0.0
                    rows[:, hidden, 1] = 1.0
                    rows[:, hidden, 3] = rows[:, hidden, 2]
                    c = self._rel_cols.get(self.names[cols[hidden]])
                    if c is not None:
                        rows[:, hidden, c : c + len(RELATIONS)] = 0.0
                pad = cmax - len(cols)
                xs.append(np.pad(rows, ((0, 0), (0, pad), (0, 0))))
                masks.append(np.pad(np.ones(acc.shape, dtype=bool), ((0, 0), (0, pad))))
                ys.append(np.pad(acc, ((0, 0), (0, pad))))
        if not xs:  # no exemplar outside ``exclude`` with two eligible tools: nothing to fit on
            d = len(FEATURES) + len(self.tools) * len(RELATIONS)
            return np.zeros((0, 1, d)), np.zeros((0, 1), dtype=bool), np.zeros((0, 1), dtype=bool)
        return np.concatenate(xs), np.concatenate(masks), np.concatenate(ys)

    def weights(self, exclude: set[str], start: np.ndarray | None = None) -> np.ndarray:
        return fit_weights(*self.instances(exclude), start=start)

    def router(self, exclude: set[str], model: ScorerModel) -> OfflineRouter:
        keep = [g not in exclude for g in self.groups]
        known = {e.text: self.bank.vectors[i] for i, e in enumerate(self.bank.exemplars)}
        return OfflineRouter(
            self.embed,
            bank=self.bank.subset(keep),
            model=model,
            known_vectors=known,
            tool_vectors=self.tool_vectors,
        )

    def _route(
        self, router: OfflineRouter, i: int, acceptable: Sequence[str] | None = None, family: str = "type"
    ) -> HeldOutRoute:
        e = self.bank.exemplars[i]
        acc = e.acceptable if acceptable is None else tuple(acceptable)
        m = router.decide(e.query, self.specs, features=e.features)
        tools = [t["name"] for t in m.tools]
        ok = (not acc and m.none_fit) or (bool(tools) and tools[0] in acc)
        values = dict(m.evidence.get("values", {}))
        return HeldOutRoute(i, e.group, tools, m.none_fit, m.path, m.p_top, ok, values, family)

    def _held_out(
        self, folds: Sequence[set[str]], family: str, progress: Callable[[str], None] | None
    ) -> list[HeldOutRoute]:
        out: list[HeldOutRoute] = []
        everything = self.weights(set())
        for fold in folds:
            model = ScorerModel([float(w) for w in self.weights(fold, start=everything)], self.tools)
            router = self.router(fold, model)
            out.extend(
                self._route(router, int(i), family=family)
                for i in np.flatnonzero(np.isin(self.groups, list(fold)))
            )
            if progress:
                progress(", ".join(sorted(fold)))
        return sorted(out, key=lambda r: r.index)

    def held_out_routes(self, progress: Callable[[str], None] | None = None) -> list[HeldOutRoute]:
        """Every exemplar routed with its group out of the bank and out of the fit (leave-one-type-out)."""
        return self._held_out([{g} for g in sorted(set(self.groups.tolist()))], "type", progress)

    def kinds(self) -> dict[str, set[str]]:
        """The groups by reference kind: each group under the routing shape most of its exemplars have."""
        shapes = self.bank.shapes
        out: dict[str, set[str]] = {}
        for g in sorted(set(self.groups.tolist())):
            values, counts = np.unique(shapes[self.groups == g], return_counts=True)
            out.setdefault(str(values[int(np.argmax(counts))]), set()).add(g)
        return out

    def kind_held_out_routes(self, progress: Callable[[str], None] | None = None) -> list[HeldOutRoute]:
        """Every exemplar routed with every group of its reference kind (:meth:`kinds`) out of the bank and
        out of the fit: queries whose kind of reference the router has (almost) never seen."""
        return self._held_out([set(gs) for _, gs in sorted(self.kinds().items())], "kind", progress)

    def hands(self) -> dict[str, set[str]]:
        """The groups by who wrote them (:attr:`Exemplar.origin`; ``generated`` for the generator's own)."""
        out: dict[str, set[str]] = {}
        for e in self.bank.exemplars:
            out.setdefault(e.origin or "generated", set()).add(e.group)
        return out

    def hand_held_out_routes(self, progress: Callable[[str], None] | None = None) -> list[HeldOutRoute]:
        """Every exemplar routed with every group its author wrote (:meth:`hands`) out of the bank and out of the
        fit: formats by a hand the router has not read, as a user's formats are. Empty with one author only."""
        hands = self.hands()
        if len(hands) < 2:
            return []
        return self._held_out([set(gs) for _, gs in sorted(hands.items())], "hand", progress)

    def in_distribution_routes(self) -> list[HeldOutRoute]:
        """Every exemplar routed with only itself out of the bank, by the weights fitted on all."""
        model = ScorerModel([float(w) for w in self.weights(set())], self.tools)
        known = {e.text: self.bank.vectors[i] for i, e in enumerate(self.bank.exemplars)}
        out = []
        for i in range(len(self.bank)):
            keep = [j != i for j in range(len(self.bank))]
            router = OfflineRouter(
                self.embed,
                bank=self.bank.subset(keep),
                model=model,
                known_vectors=known,
                tool_vectors=self.tool_vectors,
            )
            out.append(self._route(router, i, family="record"))
        return out

    def without_tool(self, name: str) -> Trainer:
        """This trainer as if no exemplar named ``name`` (a tool the exemplars have never seen)."""
        clone = copy.copy(self)
        exemplars = [
            replace(e, acceptable=tuple(t for t in e.acceptable if t != name)) for e in self.bank.exemplars
        ]
        clone.bank = ExemplarBank(exemplars, self.bank.vectors)
        clone.labels = self.labels.copy()
        clone.labels[:, self.names.index(name)] = False
        clone.tools = [t for t in self.tools if t != name]
        clone.base_rows = [self._rows(i, clone.tools, new=name) for i in range(len(self.bank))]
        clone._rel_cols = {t: len(FEATURES) + k * len(RELATIONS) for k, t in enumerate(clone.tools)}
        return clone

    def tool_held_out_routes(self, name: str) -> list[HeldOutRoute]:
        """The exemplars that call ``name`` acceptable (and can use it), routed by a router whose exemplars and
        weights never saw ``name`` (and without the exemplar itself): is the tool found by its description?"""
        j = self.names.index(name)
        clone = self.without_tool(name)
        model = ScorerModel([float(w) for w in clone.weights(set())], clone.tools)
        known = {e.text: self.bank.vectors[i] for i, e in enumerate(self.bank.exemplars)}
        out = []
        for i, e in enumerate(self.bank.exemplars):
            if name not in e.acceptable or j not in self.eligible[i] or len(self.eligible[i]) < 2:
                continue
            keep = [k != i for k in range(len(self.bank))]
            router = OfflineRouter(
                self.embed,
                bank=clone.bank.subset(keep),
                model=model,
                known_vectors=known,
                tool_vectors=self.tool_vectors,
            )
            out.append(clone._route(router, i, acceptable=e.acceptable))
        return out

    def _rows(self, i: int, tools: Sequence[str], new: str = "") -> np.ndarray:
        el = self.eligible[i]
        return candidate_rows(
            np.zeros(len(el)),
            self.desc[i, el],
            [self.specs[j] for j in el],
            [self.names[j] == new for j in el],
            self.features[i].answer_shape,
            self.features[i].relation,
            tools,
        )


def fingerprint(bank: ExemplarBank, specs: Sequence[ToolSpec]) -> str:
    """What a fitted model depends on: the method and its constants, every exemplar (text, labels, group, shape
    and vector) and every candidate tool's description."""
    doc = {
        "method": METHOD_VERSION,
        "constants": [K_NEIGHBOURS, TEMPERATURE, L2, STEPS, list(FEATURES), list(RELATIONS)],
        "confidence": [list(EVIDENCE), NEIGHBOURS, SHARPNESS, TARGET_PRECISION, FOLDS, *boosting_constants()],
        "exemplars": [[e.text, list(e.acceptable), e.group, e.shape, e.origin] for e in bank.exemplars],
        "vectors": hashlib.sha256(np.ascontiguousarray(bank.vectors).tobytes()).hexdigest(),
        "tools": [
            [s.name, str(s.kind), tool_text(s), list(s.answer_formats), s.params.get("needs_reference")]
            for s in specs
        ],
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:32]


def shipped_model_path() -> Path:

    return default_path().with_name("model.json")


def fit_confidence(routes: Sequence[HeldOutRoute]) -> tuple[CorrectnessModel, list[float]]:
    """The correctness model of held-out ``routes`` and each route's cross-fitted confidence
    (:func:`rlar.routing.confidence.fit_correctness`), with selective routing's threshold chosen on the routes
    whose format was held out (``type``, ``kind`` and ``hand``; not the ``record`` ones, whose format the router
    knew)."""
    return fit_correctness(
        [r.evidence for r in routes],
        [r.correct for r in routes],
        [r.group for r in routes],
        threshold_on=[r.family != "record" for r in routes],
    )


def build_model(
    trainer: Trainer, routes: Sequence[HeldOutRoute], correctness: CorrectnessModel
) -> ScorerModel:
    """Weights fitted on the whole bank, with the ``correctness`` model fitted on its held-out decisions
    (``routes``: leave-one-type-out, for the record of its accuracy)."""
    model = ScorerModel([float(w) for w in trainer.weights(set())], trainer.tools, correctness)
    model.info = {
        "fingerprint": fingerprint(trainer.bank, trainer.specs),
        "exemplars": len(trainer.bank),
        "groups": len(set(trainer.groups.tolist())),
        "held_out_accuracy": round(sum(r.correct for r in routes) / max(1, len(routes)), 4),
    }
    return model


def _read_model(path: Path, fingerprint: str) -> ScorerModel | None:
    if not path.is_file():
        return None
    try:
        model = ScorerModel.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError) as exc:
        log.warning("routing: unreadable model %s (%s)", path, exc)
        return None
    return model if model.info.get("fingerprint") == fingerprint else None


def fit_model(
    bank: ExemplarBank, specs: Sequence[ToolSpec], embed: Embed, *, use_cache: bool = True
) -> ScorerModel:
    """The scorer the router uses for ``bank`` and ``specs``: the shipped ``data/routing/model.json`` or the
    disk cache when fitted on exactly these exemplars, tools and method, else fitted now (leave-one-type-out
    included, a minute or two on a busy 2-core host) and cached."""
    key = fingerprint(bank, specs)
    path = cache_dir() / f"model-{key}.json"
    for candidate in (shipped_model_path(), path) if use_cache else ():
        model = _read_model(candidate, key)
        if model is not None:
            return model
    trainer = Trainer(bank, specs, embed)
    log.info(
        "routing: fitting the offline router on %d exemplars (not shipped or cached for them)", len(bank)
    )
    routes = trainer.held_out_routes()
    held = [
        *routes,
        *trainer.kind_held_out_routes(),
        *trainer.hand_held_out_routes(),
        *trainer.in_distribution_routes(),
    ]
    correctness, _ = fit_confidence(held)
    model = build_model(trainer, routes, correctness)
    if use_cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(model.to_dict()))
        except OSError as exc:
            log.warning("routing: could not cache the model at %s: %s", path, exc)
    return model


def describe(model: ScorerModel) -> dict[str, float]:
    """The fitted weights by feature name."""
    return dict(zip(feature_names(model.tools), (round(w, 4) for w in model.weights), strict=True))


def shipped_router(embed: Any) -> OfflineRouter:
    """An :class:`OfflineRouter` on the shipped exemplars and the model fitted to them for ``embed`` (the cached
    fit when ``embed`` names its model), both loaded on its first decision, not here."""
    model_id = getattr(embed, "model_id", None)

    def load(bank: ExemplarBank | None, model: ScorerModel | None) -> tuple[ExemplarBank, ScorerModel]:
        if bank is None:
            bank = ExemplarBank.load(None, embed, model_id=model_id)
        if model is None:
            model = fit_model(bank, builtin_specs(), embed, use_cache=bool(model_id))
        return bank, model

    return OfflineRouter(embed, loader=load)
