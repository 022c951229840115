"""Leaderboard adapter: any page that shows an HTML table of models and their scores.

Shaped after RewardBench-style tables: one column names the model (a link to its hub page, or its id as
text), the others hold numbers (an overall score and per-category scores). The score used for ranking
is ``score_column`` when given, else the first header among Score / Average / Overall, else the first
numeric column. Scores above 1 are read as percentages.

A page without such a table is reported as a problem; the pipeline then ranks without it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from rlar.retrieval.adapters.base import looks_like_model_id, parse_number

TABLES_JS = r"""() => {
  const tables = Array.from(document.querySelectorAll('table')).map(t => {
    const headRow = t.tHead && t.tHead.rows.length ? t.tHead.rows[0] : t.rows[0];
    const headers = headRow ? Array.from(headRow.cells).map(c => (c.innerText || '').trim()) : [];
    const body = Array.from(t.rows).filter(r => r !== headRow).map(r => Array.from(r.cells).map(c => {
      const a = c.querySelector('a[href]');
      return {text: (c.innerText || '').trim(), href: a ? a.getAttribute('href') : null};
    }));
    return {headers: headers, rows: body};
  });
  const h1 = document.querySelector('h1');
  return {tables: tables, title: document.title, h1: h1 ? h1.innerText.trim() : null};
}"""

_MODEL_HEADER = re.compile(r"\bmodel\b", re.I)
_PREFERRED = ("score", "average", "avg", "overall")


@dataclass(slots=True)
class LeaderboardTable:
    """Scores read from one leaderboard page: ``rows[model_id][column] = value`` (as shown)."""

    url: str
    score_column: str = ""
    columns: list[str] = field(default_factory=list)
    rows: dict[str, dict[str, float]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def score(self, model_id: str) -> float | None:
        """The ranking score of ``model_id`` in [0, 1], or None when the table does not list it."""
        row = self._row(model_id)
        if row is None or self.score_column not in row:
            return None
        value = row[self.score_column]
        return max(0.0, min(1.0, value / 100.0 if value > 1.0 else value))

    def _row(self, model_id: str) -> dict[str, float] | None:
        want = model_id.lower()
        for mid, row in self.rows.items():
            if mid.lower() == want:
                return row
        return None

    def scores_of(self, model_id: str) -> dict[str, float]:
        return dict(self._row(model_id) or {})


class LeaderboardAdapter:
    """Reads a leaderboard page into a :class:`LeaderboardTable`."""

    name = "leaderboard"
    tables_js = TABLES_JS

    def __init__(self, url: str, score_column: str = "", hub_url: str = "") -> None:
        self.url = url
        self.score_column = score_column
        self.hub_host = urlparse(hub_url).netloc if hub_url else ""

    def _model_id(self, cell: dict[str, Any]) -> str | None:
        href = cell.get("href")
        if href:
            parsed = urlparse(href)
            if not parsed.netloc or not self.hub_host or parsed.netloc == self.hub_host:
                path = parsed.path.strip("/")
                if looks_like_model_id(path):
                    return path
        text = str(cell.get("text") or "").strip()
        return text if looks_like_model_id(text) else None

    def parse(self, data: dict[str, Any]) -> LeaderboardTable:
        table = LeaderboardTable(url=self.url)
        best: dict[str, Any] | None = None
        for t in data.get("tables") or []:
            headers = [str(h) for h in t.get("headers") or []]
            if any(_MODEL_HEADER.search(h) for h in headers) and t.get("rows"):
                best = t
                break
        if best is None:
            table.problems.append("no table with a Model column on the page")
            return table
        headers = [str(h) for h in best["headers"]]
        model_col = next(i for i, h in enumerate(headers) if _MODEL_HEADER.search(h))
        numeric: set[int] = set()
        for row in best["rows"]:
            if not isinstance(row, list) or model_col >= len(row):
                continue
            mid = self._model_id(row[model_col])
            if mid is None:
                table.problems.append(f"row without a model id: {row[model_col].get('text', '')[:60]!r}")
                continue
            values: dict[str, float] = {}
            for i, cell in enumerate(row):
                if i == model_col or i >= len(headers):
                    continue
                v = parse_number(cell.get("text"))
                if v is not None:
                    values[headers[i]] = v
                    numeric.add(i)
            table.rows[mid] = values
        table.columns = [headers[i] for i in sorted(numeric)]
        if self.score_column:
            if self.score_column not in table.columns:
                table.problems.append(f"score column {self.score_column!r} not in {table.columns}")
            table.score_column = self.score_column
        else:
            lowered = {c.lower(): c for c in table.columns}
            pick = next((lowered[k] for k in _PREFERRED if k in lowered), None)
            table.score_column = pick or (table.columns[0] if table.columns else "")
        return table
