"""The mirror's HTML pages, in the shapes of the real hub's (/work/shared/HUB.md): the search page with its
``ModelList`` data-props and result cards, a model page (``ModelHeader``, ``ModelSafetensorsParams``, chips,
card, sidebar), the files page and a leaderboard; the ``missing_fields`` and ``dom_only`` behaviours of
:mod:`rlar.standins.hub.mirror` are rendered here."""

from __future__ import annotations

import html
import json
import re
from typing import Any

from rlar.standins.hub.repos import Repo, card_data, list_item, tags

PAGE_SIZE = 30


def _fmt_count(n: int | None) -> str:
    if n is None:
        return "?"
    for div, suf in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n / div:.1f}{suf}"
    return str(n)


def _attr_json(obj: Any) -> str:
    return html.escape(json.dumps(obj, separators=(",", ":")), quote=True)


def markdown_to_html(md: str) -> str:
    """A tiny Markdown subset (headings, tables, bullet lists, paragraphs) for mirror cards."""
    out: list[str] = []
    lines = md.strip("\n").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line.strip():
            i += 1
            continue
        if line.startswith("#"):
            level = min(6, len(line) - len(line.lstrip("#")))
            out.append(f"<h{level}>{html.escape(line.lstrip('#').strip())}</h{level}>")
            i += 1
        elif line.lstrip().startswith("|"):
            rows: list[list[str]] = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells):
                    rows.append(cells)
                i += 1
            head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0]) if rows else ""
            body = "".join(
                "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:]
            )
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif line.lstrip().startswith("- "):
            items = []
            while i < len(lines) and lines[i].lstrip().startswith("- "):
                items.append(f"<li>{html.escape(lines[i].lstrip()[2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].lstrip().startswith(("#", "|", "- ")):
                para.append(lines[i].strip())
                i += 1
            out.append(f"<p>{html.escape(' '.join(para))}</p>")
    return "\n".join(out)


_STYLE = """<style>body{font-family:sans-serif;margin:0}header.top{padding:8px 16px;border-bottom:1px solid #ddd}
main{padding:16px}.tag{display:inline-block;border:1px solid #ccc;border-radius:8px;padding:2px 8px;margin:2px}
article.overview-card-wrapper{border:1px solid #eee;border-radius:8px;padding:8px;margin:6px 0;max-width:720px}
.grid{display:grid;grid-template-columns:2fr 1fr;gap:24px}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:3px 8px}h4{margin:0}.text-gray-400{color:#999}</style>"""


def html_page(title: str, body: str) -> bytes:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>{_STYLE}"
        f"</head><body><header class='top'><a href='/'>Mirror Hub</a> "
        f"<input type='text' placeholder='Search models, datasets, users...'></header>"
        f"<main class='flex flex-1 flex-col'>{body}</main></body></html>"
    ).encode()


# -- pages --------------------------------------------------------------------------------------
def search_page(items: list[Repo], query: dict[str, str]) -> bytes:
    """The search page of ``items`` (already matched and sorted) at page ``query['p']``."""
    page = int(query.get("p", "0") or 0)
    shown = items[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
    props = {
        "initialValues": {
            "models": [list_item(r) for r in shown],
            "numItemsPerPage": PAGE_SIZE,
            "numTotalItems": len(items),
            "pageIndex": page,
        },
        "searchParams": query,
    }
    cards = []
    for r in shown:
        m = r.model
        cards.append(
            f"<article class='overview-card-wrapper group'><a class='block p-2' href='/{m.id}'>"
            f"<header class='flex' title='{html.escape(m.id)}'><h4 class='text-md'>{html.escape(m.id)}</h4>"
            f"</header><div class='text-sm text-gray-400'>{html.escape(m.pipeline_tag or '')} • "
            f"<span title='Number of parameters in this model'>{_fmt_count(r.total_params)}</span> • "
            f"Updated <time datetime='{m.last_modified}'>{m.last_modified[:10]}</time> • "
            f"{_fmt_count(m.downloads)} • {m.likes}</div></a></article>"
        )
    body = (
        f"<div class='SVELTE_HYDRATER contents' data-target='ModelList' data-props=\"{_attr_json(props)}\">"
        f"<h1>Models <span class='text-gray-400'>{len(items)}</span></h1>"
        f"<section>{''.join(cards)}</section></div>"
    )
    return html_page("Models - Hugging Face", body)


def model_page(r: Repo) -> bytes:
    m = r.model
    org, name = m.id.split("/", 1)
    card_html = markdown_to_html(m.card)
    if m.behaviour == "missing_fields":
        # An old or broken page: a title and a card, nothing else.
        body = (
            f"<header><h1><a href='/{org}'>{html.escape(org)}</a>/"
            f"<a class='font-mono' href='/{m.id}'>{html.escape(name)}</a></h1></header>"
            f"<div class='model-card-content prose hf-sanitized'>{card_html}</div>"
        )
        return html_page(f"{m.id} · Hugging Face", body)
    model_props: dict[str, Any] = {
        "id": m.id,
        "author": m.author,
        "cardData": card_data(m),
        "config": {"architectures": m.architectures, "model_type": m.model_type},
        "createdAt": m.created_at,
        "downloads": m.downloads,
        "downloadsAllTime": m.downloads * 7,
        "lastModified": m.last_modified,
        "likes": m.likes,
        "pipeline_tag": m.pipeline_tag,
        "library_name": m.library_name,
        "private": False,
        "gated": m.gated,
        "tags": tags(m),
        "tag_objs": [{"id": t, "label": t, "type": "other"} for t in m.tags],
    }
    if r.params_by_dtype:
        model_props["safetensors"] = {"parameters": r.params_by_dtype, "total": r.total_params}
    header_props = {
        "model": model_props,
        "author": {"name": m.author, "fullname": m.author, "type": "org"},
    }
    chips = []
    if m.pipeline_tag:
        chips.append(
            f"<a class='rounded-lg' href='/models?pipeline_tag={m.pipeline_tag}'><div class='tag tag-white'>"
            f"<span>{html.escape(m.pipeline_tag.replace('-', ' ').title())}</span></div></a>"
        )
    if m.library_name:
        chips.append(
            f"<a class='rounded-lg' href='/models?library={m.library_name}'><div class='tag tag-white'>"
            f"<span>{html.escape(m.library_name)}</span></div></a>"
        )
    for t in m.tags:
        chips.append(
            f"<a class='rounded-lg' href='/models?other={html.escape(t)}'><div class='tag tag-white'>"
            f"<span>{html.escape(t)}</span></div></a>"
        )
    if m.license:
        chips.append(
            f"<a class='rounded-lg' href='/models?license=license:{m.license}'><div class='tag tag-white'>"
            f"<span class='-mr-1 text-gray-400'>License:</span><span>{html.escape(m.license)}</span></div></a>"
        )
    st_props = {"safetensors": {"parameters": r.params_by_dtype, "total": r.total_params}}
    size_block = (
        f"<div class='SVELTE_HYDRATER contents' data-target='ModelSafetensorsParams' "
        f'data-props="{_attr_json(st_props)}"><div>Model size</div><div>{_fmt_count(r.total_params)} params</div>'
        f"<div>Tensor type</div><div>{' · '.join(r.params_by_dtype)}</div></div>"
        if r.params_by_dtype
        else ""
    )
    tree = (
        f"<div>Model tree for {html.escape(m.id)}</div><div>Base model</div><div>{html.escape(m.base_model)}</div>"
        f"<div>Finetuned</div><div>(this model)</div>"
        if m.base_model
        else ""
    )
    body = (
        f"<div class='SVELTE_HYDRATER contents' data-target='ModelHeader' data-props=\"{_attr_json(header_props)}\">"
        f"<header><h1><a href='/{org}'>{html.escape(org)}</a>/"
        f"<a class='font-mono' href='/{m.id}'>{html.escape(name)}</a></h1>"
        f"<div class='tags'>{''.join(chips)}</div>"
        f"<div><a class='tab-alternate active' href='/{m.id}'>Model card</a> "
        f"<a class='tab-alternate' href='/{m.id}/tree/main'>Files and versions</a></div></header></div>"
        f"<div class='container grid grid-cols-12'>"
        f"<section class='col-span-12 md:col-span-8'><div class='model-card-content prose hf-sanitized'>"
        f"{card_html}</div>{m.extra_html}</section>"
        f"<section class='col-span-12 md:col-span-4'><div>Downloads last month</div>"
        f"<div>{m.downloads:,}</div>{size_block}{tree}</section></div>"
    )
    if m.behaviour == "dom_only":
        body = re.sub(r' data-props="[^"]*"', "", body)
    return html_page(f"{m.id} · Hugging Face", body)


def tree_page(r: Repo) -> bytes:
    entries = [{"type": "file", "path": s["rfilename"], "size": s["size"]} for s in r.siblings]
    rows = "".join(f"<li>{html.escape(e['path'])} — {e['size']} bytes</li>" for e in entries)
    body = (
        f"<div class='SVELTE_HYDRATER contents' data-target='ViewerIndexTreeList' "
        f'data-props="{_attr_json({"entries": entries})}"><ul>{rows}</ul></div>'
    )
    return html_page(f"{r.model.id} at main", body)


def leaderboard_page(name: str, rows: list[dict[str, Any]]) -> bytes:
    cols: list[str] = []
    for row in rows:
        for k in row.get("scores", {}):
            if k not in cols:
                cols.append(k)
    head = "<th>Model</th>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body_rows = []
    for row in rows:
        mid = row["model"]
        cells = "".join(f"<td>{row['scores'].get(c, '')}</td>" for c in cols)
        body_rows.append(f"<tr><td><a href='/{mid}'>{html.escape(mid)}</a></td>{cells}</tr>")
    body = (
        f"<h1>{html.escape(name)} — Reward Model Leaderboard</h1>"
        f"<p>Accuracy (%) of reward models at preferring the chosen response.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body_rows)}</tbody></table>"
    )
    return html_page(f"{name} leaderboard", body)
