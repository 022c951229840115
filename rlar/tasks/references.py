"""Reference shapes: what a task's reference looks like, as the source datasets shape it.

``reference_shape(reference)`` names the shape (``none``, ``code_tests``, ``choice``, ``number``,
``short_text``, ``text``, ``structured``); ``is_code_tests(reference)`` (the code tool's own parser,
:func:`rlar.sandbox.formats.is_code_tests`) says whether a reference is code tests.
The router and the synthesizer both read shapes from here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rlar.sandbox.formats import is_code_tests

__all__ = ["is_code_tests", "reference_shape"]


def reference_shape(reference: Any) -> str:
    """``none`` | ``code_tests`` | ``choice`` | ``number`` | ``short_text`` | ``text`` | ``structured``."""
    if reference is None:
        return "none"
    if is_code_tests(reference):
        return "code_tests"
    if isinstance(reference, Mapping):
        for key in ("answers", "answer"):
            if key in reference:
                return reference_shape(reference[key])
        return "structured"
    if isinstance(reference, list | tuple):
        return reference_shape(reference[0]) if reference else "none"
    text = str(reference).strip()
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip()
    if re.fullmatch(r"\(?[A-E]\)?", text):
        return "choice"
    if re.fullmatch(r"[-+]?\$?\d[\d,]*(\.\d+)?%?|[-+]?\d+\s*/\s*\d+|\\frac\{\d+\}\{\d+\}|[-+]?\.\d+", text):
        return "number"
    return "short_text" if len(text.split()) <= 3 else "text"
