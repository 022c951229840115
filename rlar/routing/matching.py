"""The offline router: which registered tool scores a query, by rules, labelled exemplars and tool descriptions.

No language model is involved. ``OfflineRouter.decide(query, candidates)``, in order:

1. Read the query (:meth:`RoutingQuery.features`): the reference's shape (``""`` and missing are
   reference-free), its stated constraints, its form, its metadata keys.
2. Rules (:mod:`rlar.routing.rules`) remove the tools that cannot score it (a text matcher without a text
   reference, a test runner without tests, a synthesised tool made for another kind of query, ...).
3. A registered tool (not a built-in) that names the query's task or declared task type among its task types
   was registered for it and is chosen (:func:`~rlar.routing.rules.names_query`). A reference-free query with
   stated constraints needs a tool that checks exactly those
   (:func:`~rlar.routing.rules.covers`: ``ifeval`` for IFEval's instruction ids in the reference or the
   metadata, ``format_rules`` for the record's own rules when they read every constraint the instruction
   states); if none does, no tool fits and a verifier gets written. A reference
   in a format one eligible tool exists to read (code tests, IFEval instructions) goes to that tool. No
   eligible tool: no tool fits. One eligible tool: it is chosen.
4. Otherwise the scorer (:mod:`rlar.routing.scorer`) ranks the eligible tools by its fitted choice model over
   the votes of the nearest labelled exemplars (all-MiniLM-L6-v2 embeddings), the similarity of the query to
   each tool's description, and declared formats and kinds; the most probable tool is chosen. A tool no
   exemplar names (a user's, a synthesised one) competes on its description.

Every decision, the rules' and the scorer's, carries its evidence (:mod:`rlar.routing.confidence`: the
choice model's margin, how near and how unanimous the nearest exemplars are, whether the reference's kind and
structure were ever seen) and ``confidence``: the probability that it is right, from the correctness model
fitted on decisions taken with whole formats held out, with ``why`` in words (the nearest formats, what lowers
it).

The exemplars are ``data/routing/labelled.jsonl`` unless given; the fitted model is computed on first use from
them and cached on disk (:func:`rlar.routing.training.fit_model`), as are their embeddings.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rlar.routing.confidence import gather_evidence, reference_structure
from rlar.routing.query import UNCOMPARABLE_KINDS, QueryFeatures, RoutingQuery
from rlar.routing.rules import (
    covers,
    eligibility,
    names_query,
    reads_reference_format,
    unread_by_record_rules,
)
from rlar.routing.scorer import ScorerModel, candidate_rows, knn_votes, neighbour_order, tool_text
from rlar.tools.base import ToolSpec

if TYPE_CHECKING:
    import numpy as np

    from rlar.routing.exemplars import ExemplarBank

__all__ = ["Match", "OfflineRouter", "coerce_specs", "tool_fit"]

Embed = Callable[[list[str]], list[list[float]]]


@dataclass(slots=True)
class Match:
    """The offline router's answer: the tool-call input of ``choose_reward_tools`` plus diagnostics."""

    tools: list[dict[str, Any]]
    none_fit: bool
    confidence: float
    reason: str
    path: str
    """Which step decided: ``scorer``, or a rule (``rule:named``, ``rule:covering``,
    ``rule:uncovered_constraints``, ``rule:target_only``, ``rule:reads_reference``, ``rule:no_eligible``,
    ``rule:only_tool``, ``rule:no_tools``)."""
    p_top: float = 1.0
    constraints: list[dict[str, Any]] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    excluded: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)
    """What the confidence was computed from (:meth:`rlar.routing.confidence.Evidence.to_dict`)."""
    why: str = ""
    """The confidence in words: the nearest formats, the reference's structure, what lowers it most."""
    threshold: float | None = None
    """Selective routing's threshold fitted with the confidence (the correctness model's); None when there is
    none to apply: a model without a correctness part, or a rule's choice of a tool no exemplar names."""

    def tool_input(self) -> dict[str, Any]:
        return {
            "tools": [{"name": t["name"], "weight": t["weight"]} for t in self.tools],
            "none_fit": self.none_fit,
            "confidence": self.confidence,
            "calibrated": self.threshold is not None,
            "why": self.why,
            "threshold": self.threshold,
            "reason": self.reason,
            "constraints": self.constraints,
            "path": self.path,
            "scores": self.scores,
            "excluded": self.excluded,
            "evidence": self.evidence,
        }


Loader = Callable[["ExemplarBank | None", "ScorerModel | None"], "tuple[ExemplarBank, ScorerModel]"]
"""Fills an :class:`OfflineRouter`'s missing bank and model on first use: ``(bank, model) -> (bank, model)``."""


class OfflineRouter:
    """See the module docstring. ``bank``/``model`` missing are filled on first use by ``loader(bank, model)``
    (:func:`rlar.routing.training.shipped_router`: the shipped exemplars and their fitted model);
    ``known_vectors`` and ``tool_vectors`` map query and tool texts to vectors already computed (evaluation)."""

    def __init__(
        self,
        embed: Embed,
        *,
        bank: ExemplarBank | None = None,
        model: ScorerModel | None = None,
        known_vectors: Mapping[str, Any] | None = None,
        tool_vectors: Mapping[str, Any] | None = None,
        loader: Loader | None = None,
    ) -> None:
        self.embed = embed
        self._bank = bank
        self._model = model
        self._loader = loader
        self._known = dict(known_vectors or {})
        self._tool_vecs: dict[str, Any] = dict(tool_vectors or {})
        self._lock = threading.Lock()

    # -- the exemplars and the model ---------------------------------------------------------------
    def _load(self) -> tuple[ExemplarBank, ScorerModel]:
        with self._lock:
            if self._bank is None or self._model is None:
                if self._loader is None:
                    raise ValueError(
                        "an OfflineRouter needs its bank and model, or a loader for them "
                        "(rlar.routing.training.shipped_router builds one on the shipped exemplars)"
                    )
                self._bank, self._model = self._loader(self._bank, self._model)
            return self._bank, self._model

    @property
    def model(self) -> ScorerModel:
        return self._load()[1]

    def _query_vector(self, q: RoutingQuery) -> np.ndarray:

        text = q.matching_text()
        vec = self._known.get(text)
        if vec is None:
            vec = self._known[text] = np.asarray(self.embed([text])[0], dtype=np.float32)
        return vec

    def _tool_vectors(self, specs: Sequence[ToolSpec]) -> np.ndarray:

        texts = [tool_text(s) for s in specs]
        missing = list(dict.fromkeys(t for t in texts if t not in self._tool_vecs))
        if missing:
            for t, v in zip(missing, self.embed(missing), strict=True):
                self._tool_vecs[t] = np.asarray(v, dtype=np.float32)
        return np.stack([self._tool_vecs[t] for t in texts])

    # -- deciding ----------------------------------------------------------------------------------
    def decide(
        self, q: RoutingQuery, candidates: Sequence[ToolSpec], *, features: QueryFeatures | None = None
    ) -> Match:
        """The tools for ``q`` among ``candidates`` (``features``: ``q.features()`` when already computed),
        with the decision's evidence and calibrated confidence (:meth:`_settle`)."""
        specs = list(candidates)
        if not specs:
            return Match([], True, 1.0, "no tools are registered", "rule:no_tools")
        f = q.features() if features is None else features
        bank, model = self._load()
        m, probs = self._choose(q, specs, f, bank, model)
        return self._settle(m, q, f, bank, model, probs)

    def _choose(
        self,
        q: RoutingQuery,
        specs: list[ToolSpec],
        f: QueryFeatures,
        bank: ExemplarBank,
        model: ScorerModel,
    ) -> tuple[Match, list[float]]:
        """The decision (steps 2-4 of the module docstring) and the choice model's probabilities (the scorer
        only); its confidence is set by :meth:`_settle`."""
        cons = list(f.constraints) if f.reference_free else []
        excluded: dict[str, str] = {}
        eligible: list[ToolSpec] = []
        for s in specs:
            why = eligibility(s, q, f)
            if why:
                excluded[s.name] = why
            else:
                eligible.append(s)

        def ruled(path: str, reason: str, chosen: ToolSpec | None = None) -> tuple[Match, list[float]]:
            tools = [] if chosen is None else [{"name": chosen.name, "weight": 1.0}]
            return Match(tools, chosen is None, 0.0, reason, path, constraints=cons, excluded=excluded), []

        named = [s for s in eligible if names_query(s, q)]
        if named:
            best = max(named, key=lambda s: s.version)
            return ruled(
                "rule:named", f"{best.name} v{best.version} is registered for this task ({q.task})", best
            )
        if f.reference_free and cons:
            covering = [s for s in eligible if covers(s, q, f)]
            rules = ", ".join(c["rule"] for c in cons)
            if covering:
                best = max(covering, key=lambda s: (s.params.get("signature") == q.signature(), s.version))
                return ruled(
                    "rule:covering",
                    f"{best.name} v{best.version} checks exactly these constraints ({rules})",
                    best,
                )
            if f.reference_kind != "form":  # a stated form: a verifier of the constraints alone misses it
                left = unread_by_record_rules(q) if "format_rules" in f.metadata_keys else []
                return ruled(
                    "rule:uncovered_constraints",
                    f"no reference and checkable constraints ({rules}) that no registered tool checks"
                    + (f"; the record's format_rules leave unread: {'; '.join(left)}" if left else ""),
                )
        if f.reference_kind in UNCOMPARABLE_KINDS:
            return ruled(
                "rule:target_only" if f.reference_kind == "target" else "rule:uncomparable_reference",
                UNCOMPARABLE_KINDS[f.reference_kind],
            )
        readers = [s for s in eligible if reads_reference_format(s, f)]
        if len(readers) == 1:
            return ruled(
                "rule:reads_reference", f"{readers[0].name} reads this reference's format", readers[0]
            )
        if not eligible:
            return ruled(
                "rule:no_eligible",
                f"no registered tool can score a query whose reference is {f.reference_shape}",
            )
        if len(eligible) == 1:
            return ruled(
                "rule:only_tool",
                f"{eligible[0].name} is the only tool that can score this query",
                eligible[0],
            )
        probs = self._probabilities(q, eligible, f, bank, model)
        ranked = sorted(zip(probs, eligible, strict=True), key=lambda x: (-x[0], x[1].name))
        p_top, best = ranked[0]
        runner = f", then {ranked[1][1].name} ({ranked[1][0]:.2f})" if len(ranked) > 1 else ""
        match = Match(
            [{"name": best.name, "weight": 1.0}],
            False,
            0.0,
            f"{best.name} ({p_top:.2f}{runner}); reference shape {f.reference_shape}",
            "scorer",
            float(p_top),
            constraints=cons,
            scores={s.name: round(float(p), 4) for p, s in ranked},
            excluded=excluded,
        )
        return match, [float(p) for p in probs]

    def _settle(
        self,
        m: Match,
        q: RoutingQuery,
        f: QueryFeatures,
        bank: ExemplarBank,
        model: ScorerModel,
        probs: Sequence[float],
    ) -> Match:
        """``m`` with its evidence (:func:`rlar.routing.confidence.gather_evidence`) and its confidence: the
        probability the model's correctness part gives it (0 for a model without one: being fitted)."""

        sims = bank.vectors @ self._query_vector(q) if len(bank) else np.zeros(0)
        ev = gather_evidence(
            sims,
            bank,
            routing_shape=f.routing_shape,
            structure=reference_structure(q.reference),
            metadata_keys=[str(k) for k in q.metadata],
            decision=None if m.none_fit else m.tools[0]["name"],
            path=m.path,
            probabilities=probs,
        )
        m.evidence = ev.to_dict()
        if model.correctness is not None:
            m.confidence = round(model.correctness.probability(ev), 4)
            m.why = model.correctness.explain(ev)
            if m.path != "scorer" and m.tools and m.tools[0]["name"] not in bank.tools:
                # A rule chose a tool no exemplar names: the user's, bound to the task, or one made for this kind
                # (vouched for and probed). The labelled experience cannot judge it: no selective threshold.
                m.why = f"{m.path} chose a tool no labelled exemplar names; {m.why}"
            else:
                m.threshold = model.correctness.threshold
        return m

    def _probabilities(
        self,
        q: RoutingQuery,
        eligible: list[ToolSpec],
        f: QueryFeatures,
        bank: ExemplarBank,
        model: ScorerModel,
    ) -> np.ndarray:

        qv = self._query_vector(q)
        desc = self._tool_vectors(eligible) @ qv
        names = [s.name for s in eligible]
        new = [n not in bank.tools for n in names]
        if len(bank):
            sims = bank.vectors @ qv
            order = neighbour_order(sims, bank.shapes == f.routing_shape)
            votes = knn_votes(sims, order, bank.label_matrix(names), np.ones(len(bank), dtype=bool))
        else:
            votes = np.zeros(len(names))
        return model.probabilities(
            candidate_rows(votes, desc, eligible, new, f.answer_shape, f.relation, model.tools)
        )


def tool_fit(router: OfflineRouter, q: RoutingQuery, specs: Sequence[ToolSpec]) -> dict[str, float]:
    """How well each tool's description fits ``q``: the cosine of their embeddings clipped to [0, 1], and 0 for
    tools the rules say cannot score ``q``. A plain similarity (not a probability), for ranking candidates
    that no exemplar names, such as reward models found on a hub."""

    f = q.features()
    vecs = router._tool_vectors(list(specs))
    cos = vecs @ router._query_vector(q)
    return {
        s.name: 0.0 if eligibility(s, q, f) else float(np.clip(c, 0.0, 1.0))
        for s, c in zip(specs, cos, strict=True)
    }


def coerce_specs(items: Sequence[Mapping[str, Any] | ToolSpec]) -> list[ToolSpec]:
    return [s if isinstance(s, ToolSpec) else ToolSpec.from_dict(s) for s in items]
