"""Structured answers, as standard-library Python (part of the source every composed verifier embeds): JSON
values and their types, the keys of a JSON or YAML mapping, Markdown and CSV tables, flat YAML mappings."""

import json
import re

from rlar.constraints.checks.units import near, within, words


def load_json(text):
    """The JSON value a response holds (whole, or in one fenced block); raises ValueError."""
    t = text.strip()
    fence = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", t, re.S)
    return json.loads(fence.group(1) if fence else t)


def json_type_ok(value, kind):
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "list":
        return isinstance(value, list)
    if kind == "list_of_strings":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "list_of_numbers":
        return isinstance(value, list) and all(json_type_ok(v, "number") for v in value)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "null":
        return value is None
    return True


def read_table(text, fmt):
    """(header, rows) of a Markdown or CSV table, or None."""
    ls = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if fmt == "markdown":
        if len(ls) < 2 or not all(line.startswith("|") and line.endswith("|") for line in ls):
            return None
        cells = [[x.strip() for x in line.strip("|").split("|")] for line in ls]
        if not all(re.fullmatch(r":?-{3,}:?", x) for x in cells[1]):
            return None
        return cells[0], cells[2:]
    if not ls or any("|" in line for line in ls):
        return None
    cells = [[x.strip() for x in line.split(",")] for line in ls]
    return cells[0], cells[1:]


def cell_ok(kind, v):
    if kind == "integer":
        return re.fullmatch(r"[-+]?\d+", v) is not None
    if kind == "number":
        return re.fullmatch(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)", v) is not None
    return bool(v)


def table_score(c, text):
    got = read_table(text, c.get("format", "markdown"))
    if got is None:
        return 0.0
    header, rows = got
    cols = list(c.get("columns") or [])
    if cols and [h.lower() for h in header] != [x.lower() for x in cols]:
        return 0.0
    if any(len(r) != len(header) for r in rows):
        return 0.0
    types = c.get("types") or {}
    index = {h.lower(): i for i, h in enumerate(header)}
    cells = [cell_ok(t, r[index[k.lower()]]) for k, t in types.items() if k.lower() in index for r in rows]
    if cells and not all(cells):
        return 0.5 * sum(cells) / len(cells)
    return near(len(rows), c)


def load_yaml(text):
    """A flat YAML mapping as a dict (the subset in the module docstring); raises ValueError."""
    t = text.strip()
    fence = re.fullmatch(r"```(?:ya?ml)?\s*(.*?)\s*```", t, re.S)
    t = fence.group(1) if fence else t
    out: dict = {}
    key = None
    for line in t.splitlines():
        if not line.strip() or line.strip() == "---" or line.lstrip().startswith("#"):
            continue
        item = re.fullmatch(r"\s+-\s+(.*)|-\s+(.*)", line)
        if item and key is not None and isinstance(out[key], list):
            out[key].append(_yaml_scalar(item.group(1) or item.group(2)))
            continue
        m = re.fullmatch(r"([A-Za-z_][\w -]*?)\s*:\s*(.*)", line)
        if not m or line[:1].isspace():
            raise ValueError(f"not a flat YAML mapping line: {line!r}")
        key, value = m.group(1).strip(), m.group(2).strip()
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        if value == "":
            out[key] = []
        elif value.startswith("[") and value.endswith("]"):
            out[key] = [_yaml_scalar(v) for v in value[1:-1].split(",") if v.strip()]
        else:
            out[key] = _yaml_scalar(value)
    if not out:
        raise ValueError("empty")
    return out


def _yaml_scalar(v):
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    if v in ("true", "True", "false", "False"):
        return v.lower() == "true"
    if re.fullmatch(r"[-+]?\d+", v):
        return int(v)
    if re.fullmatch(r"[-+]?\d*\.\d+", v):
        return float(v)
    if v in ("null", "~"):
        return None
    return v


def keys_score(c, obj):
    if not isinstance(obj, dict):
        return 0.0
    keys = list(c["keys"])
    types = c.get("types") or {}
    good = sum(1 for k in keys if k in obj and json_type_ok(obj[k], types.get(k, "any")))
    if c.get("exact") and set(obj) - set(keys):
        return 0.0
    return good / len(keys) if keys else 1.0


def json_array_score(c, text):
    """A JSON array (the whole answer, or one fenced block) of ``min``..``max`` items, each of ``type`` when one
    is given: 1.0 when all hold; items of the wrong type give at most 0.5, a wrong count ``near``."""
    try:
        value = load_json(text)
    except ValueError:
        return 0.0
    if not isinstance(value, list):
        return 0.0
    kind = c.get("type")
    if kind and value and not all(json_type_ok(v, kind) for v in value):
        return 0.5 * sum(1 for v in value if json_type_ok(v, kind)) / len(value)
    return near(len(value), c)


def wrap_ok(text, opening, closing):
    """Whether the whole answer is one element ``opening ... closing`` with something in it: nothing before or
    after, the tags as written (``<Summary>`` is not ``<summary>``), a markup tag once each."""
    t = text.strip()
    if not (t.startswith(opening) and t.endswith(closing) and len(t) > len(opening) + len(closing)):
        return False
    inner = t[len(opening) : len(t) - len(closing)]
    if opening.startswith("<") and (opening in inner or closing in inner):
        return False
    return bool(inner.strip())


_DELIMITERS = {" ": r"[ \t]+", "\n": r"[ \t]*\n[ \t]*"}
_LIST_MARKS = ",;|/"


def delimited_parts(text, sep):
    """The pieces of a list the answer is, split at ``sep`` (a space: runs of spaces; a mark: the mark alone,
    "*****" is not "******")."""
    t = text.strip()
    if sep in _DELIMITERS:
        return re.split(_DELIMITERS[sep], t)
    s = str(sep).strip() or str(sep)
    left = r"(?<!" + re.escape(s[0]) + r")" if len(set(s)) == 1 else ""
    right = r"(?!" + re.escape(s[-1]) + r")" if len(set(s)) == 1 else ""
    return [p.strip() for p in re.split(left + re.escape(s) + right, t)]


def delimited_score(c, text):
    """The answer is a list of ``unit`` (word: one word; number: one number; time: one H:MM time; item: one line
    of text) separated by ``text`` and nothing else: each piece one unit, no other list mark in it,
    ``min``..``max`` pieces; with ``exact``, the separator exactly as written (``red; blue`` is not split by
    ``;`` alone) and no mark after the last piece."""
    sep = c["text"]
    exact = bool(c.get("exact"))  # the separator as written: no space around it, no final mark
    parts = text.strip().split(sep) if exact else delimited_parts(text, sep)
    if len(parts) < 2 and c.get("min", 2) >= 2:
        return 0.0
    unit = c.get("unit", "item")
    others = "".join(ch for ch in _LIST_MARKS if ch not in sep)

    def ok(i, p):
        if not p or (sep != "\n" and "\n" in p) or (exact and p != p.strip()):
            return False
        last = i == len(parts) - 1
        core = p[:-1] if last and p.endswith(".") and unit != "item" and not exact else p
        if any(ch in core for ch in others) and unit != "item":
            return False
        if unit == "word":
            return len(words(core)) == 1 and re.fullmatch(r"[^\W_][\w'\u2019-]*", core) is not None
        if unit == "number":
            return re.fullmatch(r"[-+]?\d+(?:\.\d+)?", core) is not None
        if unit == "time":
            return re.fullmatch(r"\d{1,2}:\d{2}", core) is not None
        if exact and re.search(r"[.,;:!?]$", core):
            return False
        return bool(p.strip())

    good = sum(1 for i, p in enumerate(parts) if ok(i, p))
    if good < len(parts):
        return 0.5 * good / len(parts)
    return 1.0 if within(len(parts), c) else near(len(parts), c)
