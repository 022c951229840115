"""The sandbox side of a synthesised verifier: a small program that loads the candidate and scores cases.

``harness_program(code)`` is a stdlib-only Python program holding the candidate's source as a string literal.
It reads its input from stdin as JSON — ``{"nonce", "cases": [{query, response, reference, metadata}],
"repeats", "case_timeout_s"}`` — executes the candidate's source (inside the jail, never in an actor), calls
``reward(query, response, reference, metadata)`` ``repeats`` times per case, and writes one line
``RLAR-HARNESS <json>`` to the real stdout carrying the nonce, the candidate's declared ``SCORE_RANGE``, a
load error if the module did not load, and per case the scores (floats; NaN/inf kept), the error if a call
raised or returned a non-number, and the milliseconds per call. Keeping the program constant and the cases on
stdin lets one program serve every scoring call of a tool.

Per call, an interval timer raises ``_CallTimeout`` after ``case_timeout_s`` so one pathological response
costs one case, not the batch. The candidate's own prints are captured (they cannot break the protocol line)
and ``SystemExit`` is caught.

Not covered (the jail is the security boundary; this is only the protocol): a candidate that catches
``BaseException`` can swallow the timer (the sandbox's wall clock then ends the run), one that calls
``os._exit`` ends the run without a result line, and one that introspects the harness's frames can read the
nonce and forge results for its own cases — the nonce only guards against accidental lines, like a
candidate printing a look-alike.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MARKER", "HarnessOutput", "harness_program", "parse_harness_output"]

MARKER = "RLAR-HARNESS "

_TEMPLATE = r"""
import contextlib
import io
import json
import signal
import sys
import time

CANDIDATE = __CANDIDATE__


class _CallTimeout(BaseException):
    pass


def _on_alarm(signum, frame):
    raise _CallTimeout()


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("reward() returned %s, not a number" % type(value).__name__)
    return float(value)


def _main():
    out_stream = sys.stdout
    request = json.loads(sys.stdin.read() or "{}")
    out = {"nonce": request.get("nonce", ""), "load_error": None, "score_range": None, "results": []}
    sink = io.StringIO()
    namespace = {"__name__": "candidate"}
    try:
        with contextlib.redirect_stdout(sink):
            exec(compile(CANDIDATE, "<candidate>", "exec"), namespace)
        fn = namespace.get("reward")
        if not callable(fn):
            raise TypeError("the candidate defines no callable reward()")
        declared = namespace.get("SCORE_RANGE")
        if declared is not None:
            out["score_range"] = [float(declared[0]), float(declared[1])]
    except BaseException as exc:
        out["load_error"] = ("%s: %s" % (type(exc).__name__, exc))[:500]
        out_stream.write("\n" + __MARKER__ + json.dumps(out) + "\n")
        return
    limit = float(request.get("case_timeout_s", 1.0))
    repeats = int(request.get("repeats", 1))
    stop_on_error = bool(request.get("stop_on_error", False))
    signal.signal(signal.SIGALRM, _on_alarm)
    for case in request.get("cases", []):
        scores, millis, error = [], [], None
        for _ in range(repeats):
            t0 = time.perf_counter()
            try:
                signal.setitimer(signal.ITIMER_REAL, limit)
                try:
                    with contextlib.redirect_stdout(sink):
                        value = fn(case.get("query", ""), case.get("response", ""), case.get("reference"),
                                   dict(case.get("metadata") or {}))
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                scores.append(_number(value))
            except _CallTimeout:
                error = "timeout: reward() took more than %gs" % limit
            except BaseException as exc:
                error = ("%s: %s" % (type(exc).__name__, exc))[:300]
            millis.append(round((time.perf_counter() - t0) * 1000.0, 3))
            if error is not None:
                break
        out["results"].append({"scores": scores, "error": error, "ms": millis})
        if error is not None and stop_on_error:
            break
    out_stream.write("\n" + __MARKER__ + json.dumps(out) + "\n")
    out_stream.flush()


_main()
"""


def harness_program(code: str) -> str:
    """The sandbox program wrapping candidate source ``code`` (embedded as a literal, never exec'ed here)."""
    if not isinstance(code, str):
        raise TypeError("candidate code must be a string")
    return _TEMPLATE.replace("__CANDIDATE__", repr(code)).replace("__MARKER__", repr(MARKER)).lstrip("\n")


def harness_input(
    cases: list[dict[str, Any]],
    nonce: str,
    *,
    repeats: int = 1,
    case_timeout_s: float = 1.0,
    stop_on_error: bool = False,
) -> str:
    """The stdin document for one run (JSON; NaN never appears in inputs). ``stop_on_error``: end the run at
    the first failing call (validation: one failure rejects the candidate, so the rest is wasted time)."""
    doc = {
        "nonce": nonce,
        "cases": cases,
        "repeats": repeats,
        "case_timeout_s": case_timeout_s,
        "stop_on_error": stop_on_error,
    }
    return json.dumps(doc, ensure_ascii=False, default=str)


@dataclass(slots=True)
class HarnessOutput:
    """The parsed result line, or why there is none (``problem``)."""

    problem: str = ""
    load_error: str | None = None
    score_range: tuple[float, float] | None = None
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problem and self.load_error is None


def parse_harness_output(stdout: str, nonce: str, n_cases: int, *, partial: bool = False) -> HarnessOutput:
    """Find the last result line with our nonce in ``stdout``; validate its shape. ``partial``: a run that
    stopped at its first error may hold fewer results, the last of which has the error."""
    line = None
    for candidate in reversed(stdout.splitlines()):
        if candidate.startswith(MARKER):
            line = candidate[len(MARKER) :]
            break
    if line is None:
        return HarnessOutput(problem="no result line from the harness (the candidate ended the process?)")
    try:
        doc = json.loads(line)
    except ValueError as exc:
        return HarnessOutput(problem=f"unreadable result line: {exc}")
    if not isinstance(doc, dict) or doc.get("nonce") != nonce:
        return HarnessOutput(problem="result line with a wrong nonce")
    if doc.get("load_error"):
        return HarnessOutput(load_error=str(doc["load_error"]))
    results = doc.get("results")
    complete = isinstance(results, list) and (
        len(results) == n_cases or (partial and 0 < len(results) < n_cases and bool(results[-1].get("error")))
    )
    if not isinstance(results, list) or not complete:
        return HarnessOutput(
            problem=f"expected {n_cases} results, got {len(results) if isinstance(results, list) else 'none'}"
        )
    clean: list[dict[str, Any]] = []
    for r in results:
        scores = [float(s) for s in r.get("scores", []) if isinstance(s, int | float)]
        clean.append({"scores": scores, "error": r.get("error"), "ms": [float(m) for m in r.get("ms", [])]})
    declared = doc.get("score_range")
    rng = None
    if (
        isinstance(declared, list)
        and len(declared) == 2
        and all(isinstance(x, int | float) for x in declared)
    ):
        lo, hi = float(declared[0]), float(declared[1])
        if math.isfinite(lo) and math.isfinite(hi):
            rng = (lo, hi)
    return HarnessOutput(score_range=rng, results=clean)
