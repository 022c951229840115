"""Hugging Face hub adapter: search result pages and model pages (shapes in /work/shared/HUB.md).

The base URL is configurable, so the same adapter reads the real hub or a mirror with the same shapes.

Preference order per field: the JSON the page embeds in ``SVELTE_HYDRATER`` ``data-props`` (``ModelList``
on search pages; ``ModelHeader`` and ``ModelSafetensorsParams`` on model pages), then visible markup (result
cards, tag chips, the licence chip, the sidebar's "Downloads last month" and "Model size" lines, tables in
the model card). A page that carries neither is reported with what it lacked, never guessed at.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlparse

from rlar.retrieval.adapters.base import (
    ListingItem,
    ModelFacts,
    looks_like_model_id,
    parse_count,
    parse_number,
    scores_in_prose,
)

# Runs in the page: collects hydrater props (as raw strings; Python parses them) and result cards.
SEARCH_JS = r"""() => {
  const hyd = Array.from(document.querySelectorAll('div.SVELTE_HYDRATER[data-target]')).map(e => ({
    target: e.getAttribute('data-target'), props: e.getAttribute('data-props') || ''}));
  const cards = Array.from(document.querySelectorAll('article.overview-card-wrapper')).map(a => {
    const link = a.querySelector('a[href]');
    const header = a.querySelector('header[title]');
    const h4 = a.querySelector('h4');
    const params = a.querySelector('span[title^="Number of parameters"]');
    return {href: link ? link.getAttribute('href') : null,
            title: header ? header.getAttribute('title') : null,
            name: h4 ? h4.textContent.trim() : null,
            params: params ? params.textContent.trim() : null,
            text: (a.innerText || '').slice(0, 500)};
  });
  const search = document.querySelector('input[placeholder^="Search models"]');
  return {hydraters: hyd, cards: cards, title: document.title, has_search_box: !!search};
}"""

MODEL_JS = r"""() => {
  const hyd = Array.from(document.querySelectorAll('div.SVELTE_HYDRATER[data-target]')).map(e => ({
    target: e.getAttribute('data-target'), props: e.getAttribute('data-props') || ''}));
  const h1 = document.querySelector('h1');
  let licence = null;
  for (const s of document.querySelectorAll('span')) {
    if ((s.textContent || '').trim() === 'License:' && s.nextElementSibling) {
      licence = s.nextElementSibling.textContent.trim(); break; }
  }
  const chips = Array.from(document.querySelectorAll('a[href*="/models?"]')).map(a => ({
    href: a.getAttribute('href'), text: (a.innerText || '').trim()}));
  const card = document.querySelector('div.model-card-content');
  const tables = card ? Array.from(card.querySelectorAll('table')).map(t =>
    Array.from(t.rows).map(r => Array.from(r.cells).map(c => (c.innerText || '').trim()))) : [];
  const sections = Array.from(document.querySelectorAll('main section'));
  const sidebar = sections.length > 1 ? sections[sections.length - 1].innerText : '';
  return {hydraters: hyd, h1: h1 ? h1.innerText.trim() : null, licence: licence, chips: chips,
          card_text: card ? (card.innerText || '').slice(0, 20000) : null, tables: tables,
          sidebar: (sidebar || '').slice(0, 5000), title: document.title};
}"""

# Text columns of card tables that name a benchmark, and numeric columns that hold its score.
_SCORE_HEADER = re.compile(r"score|acc|accuracy|avg|average|overall|result|%|win", re.I)


def _props(data: dict[str, Any], target: str, problems: list[str]) -> dict[str, Any] | None:
    for h in data.get("hydraters") or []:
        if h.get("target") == target:
            raw = h.get("props") or ""
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as exc:
                problems.append(f"{target} data-props is not JSON ({exc.msg} at {exc.pos})")
                return None
            if not isinstance(value, dict):
                problems.append(f"{target} data-props is not an object")
                return None
            return value
    return None


def _as_list(v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    if isinstance(v, list):
        return [str(x) for x in v if x]
    return []


class HubAdapter:
    """Reads the hub's search pages and model pages at ``base_url``."""

    name = "hf_hub"
    search_js = SEARCH_JS
    model_js = MODEL_JS

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    # -- URLs -------------------------------------------------------------------------------------
    def search_url(
        self, query: str, *, pipeline_tag: str = "", sort: str = "downloads", page: int = 0
    ) -> str:
        q: dict[str, str] = {"search": query}
        if pipeline_tag:
            q["pipeline_tag"] = pipeline_tag
        if sort:
            q["sort"] = sort
        if page:
            q["p"] = str(page)
        return f"{self.base_url}/models?{urlencode(q)}"

    def model_url(self, model_id: str) -> str:
        return f"{self.base_url}/{quote(model_id, safe='/')}"

    def api_model_url(self, model_id: str, revision: str = "") -> str:
        base = f"{self.base_url}/api/models/{quote(model_id, safe='/')}"
        return f"{base}/revision/{quote(revision, safe='')}" if revision else base

    def model_id_from_href(self, href: str | None) -> str | None:
        """``/org/name`` or ``<base>/org/name`` → ``org/name``; anything else → None."""
        if not href:
            return None
        parsed = urlparse(href)
        if parsed.netloc and parsed.netloc != urlparse(self.base_url).netloc:
            return None
        path = parsed.path.strip("/")
        return path if looks_like_model_id(path) else None

    # -- search pages -----------------------------------------------------------------------------
    def parse_search(self, data: dict[str, Any]) -> tuple[list[ListingItem], list[str]]:
        """Result items (props first, cards as fallback) and the page-shape problems noticed."""
        problems: list[str] = []
        items: list[ListingItem] = []
        props = _props(data, "ModelList", problems)
        models = None
        if props is not None:
            models = (props.get("initialValues") or {}).get("models")
            if models is None:
                models = props.get("models")
            if not isinstance(models, list):
                problems.append("ModelList props carry no models list")
                models = None
        if models is not None:
            for m in models:
                mid = m.get("id") if isinstance(m, dict) else None
                if not isinstance(mid, str) or not looks_like_model_id(mid):
                    problems.append(f"listing entry without a model id: {str(m)[:80]}")
                    continue
                items.append(
                    ListingItem(
                        model_id=mid,
                        downloads=parse_count(m.get("downloads")),
                        likes=parse_count(m.get("likes")),
                        pipeline_tag=m.get("pipeline_tag"),
                        parameters=parse_count(m.get("numParameters")),
                        last_modified=m.get("lastModified"),
                        gated=m.get("gated"),
                        source="props",
                    )
                )
            return items, problems
        cards = data.get("cards") or []
        if not cards:
            problems.append("no ModelList props and no result cards: not a hub search page?")
        for c in cards:
            mid = (c.get("title") or c.get("name") or "").strip() or self.model_id_from_href(c.get("href"))
            if not mid or not looks_like_model_id(mid):
                problems.append(f"result card without a model id: {str(c.get('text'))[:80]}")
                continue
            item = ListingItem(model_id=mid, source="dom", parameters=parse_count(c.get("params")))
            # The meta row reads "task • params • Updated <time> • downloads • likes": the last two count.
            parts = [p.strip() for p in (c.get("text") or "").split("•")]
            counts = [parse_count(p) for p in parts[-2:]] if len(parts) >= 4 else []
            if len(counts) == 2:
                item.downloads, item.likes = counts
            if parts and len(parts) >= 4 and " " not in parts[0].split("\n")[-1].strip():
                item.pipeline_tag = parts[0].split("\n")[-1].strip() or None
            items.append(item)
        return items, problems

    # -- model pages ------------------------------------------------------------------------------
    def parse_model(self, data: dict[str, Any], model_id: str, url: str) -> ModelFacts:
        """The facts a model page states (see the module docstring for the order of sources)."""
        facts = ModelFacts(model_id=model_id, url=url)
        problems = facts.problems
        header = _props(data, "ModelHeader", problems)
        model = (header or {}).get("model") if header else None
        if header is not None and not isinstance(model, dict):
            problems.append("ModelHeader props carry no model object")
            model = None
        if model is not None:
            if model.get("id") and str(model["id"]).lower() != model_id.lower():
                problems.append(f"page is for {model['id']!r}, not {model_id!r} (redirect?)")
            card = model.get("cardData") or {}
            facts.set("pipeline_tag", model.get("pipeline_tag"), "props")
            facts.set("library_name", model.get("library_name"), "props")
            lic = card.get("license")
            facts.set("license", lic.lower() if isinstance(lic, str) else None, "props")
            facts.set("base_model", _as_list(card.get("base_model")), "props")
            facts.set("languages", _as_list(card.get("language")), "props")
            facts.set("datasets", _as_list(card.get("datasets")), "props")
            st = model.get("safetensors") or {}
            facts.set("parameters", parse_count(st.get("total")), "props")
            if isinstance(st.get("parameters"), dict):
                facts.set("dtype_params", {str(k): int(v) for k, v in st["parameters"].items()}, "props")
            facts.set("downloads", parse_count(model.get("downloads")), "props")
            facts.set("likes", parse_count(model.get("likes")), "props")
            facts.set("last_modified", model.get("lastModified"), "props")
            config = model.get("config") or {}
            facts.set("architectures", _as_list(config.get("architectures")), "props")
            facts.set("model_type", config.get("model_type"), "props")
            facts.set("tags", _as_list(model.get("tags")), "props")
            facts.gated = model.get("gated")
            for name, value in _model_index_scores(card.get("model-index")).items():
                facts.benchmark_scores.setdefault(name, value)
        params_props = _props(data, "ModelSafetensorsParams", problems)
        if params_props:
            st = params_props.get("safetensors") or {}
            facts.set("parameters", parse_count(st.get("total")), "props")
            if isinstance(st.get("parameters"), dict):
                facts.set("dtype_params", {str(k): int(v) for k, v in st["parameters"].items()}, "props")
        # Visible markup: tag chips, licence chip, sidebar.
        tags_dom: list[str] = []
        for chip in data.get("chips") or []:
            href = chip.get("href") or ""
            q = {k: v[0] for k, v in parse_qs(urlparse(href).query).items() if v}
            if "pipeline_tag" in q:
                facts.set("pipeline_tag", q["pipeline_tag"], "dom")
            if "library" in q:
                facts.set("library_name", q["library"], "dom")
            if "license" in q:
                facts.set("license", q["license"].removeprefix("license:").lower(), "dom")
            if "other" in q:
                tags_dom.append(q["other"])
        facts.set("tags", tags_dom, "dom")
        lic_chip = data.get("licence")
        if isinstance(lic_chip, str) and lic_chip.strip():
            facts.set("license", lic_chip.strip().lower(), "dom")
        for tag in facts.tags:
            if tag.startswith("license:"):
                facts.set("license", tag.removeprefix("license:").lower(), "props")
            if tag.startswith("base_model:") and tag.count(":") == 1:
                facts.set("base_model", [tag.removeprefix("base_model:")], "props")
        sidebar = data.get("sidebar") or ""
        m = re.search(r"Downloads last month\s*([\d,\.]+(?:[ \t]*[kKmMbB]\b)?)", sidebar)
        if m:
            facts.set("downloads", parse_count(m.group(1)), "dom")
        m = re.search(r"Model size\s*([\d\.]+[ \t]*[kKmMbBtT]?)[ \t]*params", sidebar)
        if m:
            facts.set("parameters", parse_count(m.group(1)), "dom")
        card_text = data.get("card_text")
        if card_text is None and header is None:
            problems.append("no ModelHeader props and no model card: not a hub model page?")
        facts.card_excerpt = (card_text or "")[:2000]
        for name, value in _table_scores(data.get("tables") or []).items():
            facts.benchmark_scores.setdefault(name, value)
        for name, value in scores_in_prose(card_text or "").items():
            facts.benchmark_scores.setdefault(name, value)
        return facts.finish()


def _model_index_scores(index: Any) -> dict[str, float]:
    """Scores of a card's ``model-index`` (``[{results: [{dataset: {name}, metrics: [{type, value}]}]}]``)."""
    out: dict[str, float] = {}
    if not isinstance(index, list):
        return out
    for entry in index:
        for res in (entry or {}).get("results") or []:
            ds = ((res or {}).get("dataset") or {}).get("name") or ""
            for metric in (res or {}).get("metrics") or []:
                value = parse_number((metric or {}).get("value"))
                name = (metric or {}).get("name") or (metric or {}).get("type") or ""
                if value is not None and (ds or name):
                    out[f"{ds} {name}".strip()] = value
    return out


def _table_scores(tables: list[Any]) -> dict[str, float]:
    """Benchmark scores stated in card tables: rows of (name, number) under a score-like header."""
    out: dict[str, float] = {}
    for rows in tables:
        if not isinstance(rows, list) or len(rows) < 2 or not isinstance(rows[0], list):
            continue
        header = [str(h) for h in rows[0]]
        cols = [i for i, h in enumerate(header) if i > 0 and _SCORE_HEADER.search(h)]
        for row in rows[1:]:
            if not isinstance(row, list) or not row:
                continue
            name = str(row[0]).strip()
            for i in cols:
                if i < len(row):
                    value = parse_number(row[i])
                    if name and value is not None:
                        out[f"{name} {header[i]}".strip() if len(cols) > 1 else name] = value
    return out
