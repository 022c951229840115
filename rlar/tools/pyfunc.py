"""Your own reward function in Python, registered, versioned and routed like the built-in tools.

Three call styles (``style`` in the spec's params; ``auto`` picks one from the parameter names):

- ``sample``: ``fn(query, response, reference, metadata) -> float | {"score": float, "reason": str} | None``
  (one sample per call; ``async def`` works too);
- ``batched``: ``fn(queries, responses, references, metadatas) -> list[...]`` (one list per call, same items);
- ``trl``: a TRL reward function, unchanged: ``fn(prompts, completions, **kwargs) -> list[float | None]``.
  It gets ``prompts`` and ``completions`` (strings, or chat messages with ``conversational``), the reference
  list under ``reference_kwarg`` (default ``"reference"``; say ``"solution"`` if your function reads
  ``kwargs["solution"]``), and every metadata column of the records as a list (TRL passes a dataset's extra
  columns the same way). ``completion_ids`` and ``trainer_state`` are not passed.

Return values, checked by the one rule of :func:`rlar.tools.base.check_score` (the same for every tool path):

- a score is an ``int``, ``float`` or numpy scalar, finite and inside ``score_range``;
- ``None`` (or ``{"score": None}``) is the documented "cannot judge this sample": ``abstain``, masked rather
  than scored 0, as in TRL — in a batch too, for that sample alone;
- a ``str`` (``"0.7"`` is never parsed), ``bytes``, a ``bool``, NaN/inf or an out-of-range number is that
  sample's ``error`` with the reason; a batched/TRL function returning a list of the wrong length (or not a
  list) is an ``error`` for the whole call ("returned 39 scores for 40 completions");
- a raised exception is ``error`` ``raised ValueError: boom (at my_rewards.py:7 in fn)``, with the first
  lines of the traceback in the result's details. Never ``abstain``, never a 0 that gets trained on.

Concurrency and deadline: ``concurrency`` (default ``DEFAULT_CONCURRENCY``) calls of the function run at once,
each in its own killable worker process, and ``deadline_s`` counts per sample (per call for batched and TRL
styles) from the moment that call starts — so samples that hang time out together, one deadline per round of
``concurrency`` samples, not one after another (:mod:`rlar.tools.executor`).

Where it runs is the tool's ``kind``:

- ``rule`` / ``metric`` / ``model`` / ``judge``: **trusted** — imported and called in the reward worker's tool
  processes (killable, with a deadline). Opt-in: a reward worker imports the module only when its name is in
  ``[reward] allowed_prefixes`` and the module is importable (``[reward] python_path``); ``rlar train`` adds
  both for the ``[[tools]]`` of its own config. The spec records the module source's sha256; a worker whose
  copy differs refuses to run it ("changed since it was registered"), so a version always means one code.
- ``sandbox``: **untrusted** — the module's source is copied into the spec and runs only in the sandbox actor's
  jail (like a synthesised verifier, :mod:`rlar.tools.synthesized`), with the system Python's standard
  library and nothing else. It must be one file; ``{"score", "reason"}`` keeps only the score there, and
  ``None`` is an error (the jail's protocol carries numbers).

:func:`python_tool_spec` builds the spec from a :class:`PythonToolConfig` (a ``[[tools]]`` table, or the
arguments of ``rlar tools register --python``); nothing of the module is executed for ``sandbox`` tools.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rlar.tools.base import Origin, Outcome, RewardTool, ToolInput, ToolKind, ToolResult, ToolSpec
from rlar.tools.synthesized import IMPL as SANDBOX_IMPL

__all__ = [
    "IMPL_BATCHED",
    "IMPL_SAMPLE",
    "BatchedPythonFunctionTool",
    "PythonFunctionTool",
    "PythonToolConfig",
    "PythonToolError",
    "detect_style",
    "python_tool_spec",
]

IMPL_SAMPLE = "rlar.tools.pyfunc:PythonFunctionTool"
IMPL_BATCHED = "rlar.tools.pyfunc:BatchedPythonFunctionTool"
Style = Literal["auto", "sample", "batched", "trl"]
TRUSTED_KINDS = tuple(k.value for k in ToolKind if k is not ToolKind.SANDBOX)
"""Kinds a reward worker imports in its own process (every one but ``sandbox``, which runs in the jail)."""
DEFAULT_CONCURRENCY = 4


class PythonToolError(ValueError):
    """A ``[[tools]]`` entry or ``rlar tools register --python`` call that cannot become a tool."""


class PythonToolConfig(BaseModel):
    """One ``[[tools]]`` table: a Python reward function to register as a tool (see :mod:`rlar.tools.pyfunc`)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = Field(min_length=1)
    """The tool's name in the registry (tasks name it in ``default_tools``; the router shows it)."""
    python: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
    """``module:function``, e.g. ``my_rewards:capitalised`` (the module is found under ``path``)."""
    description: str = Field(min_length=1)
    """What the function checks, in plain words: the router matches tasks to tools by it."""
    kind: Literal[tuple(k.value for k in ToolKind)] = "rule"  # type: ignore[valid-type]
    """Where it runs: ``sandbox`` = untrusted, in the sandbox jail (stdlib only, one file); any other kind =
    trusted, imported by the reward workers serving that kind."""
    style: Style = "auto"
    """Call style: ``sample``, ``batched``, ``trl``, or ``auto`` (from the parameter names: ``prompts,
    completions`` → trl; ``queries`` → batched; else sample)."""
    path: str | None = None
    """Directory the module is imported from (relative: against the config file; default: the config file's
    directory, or the working directory for ``rlar tools register``)."""
    task_types: list[str] = Field(default_factory=list)
    """Task types it fits (e.g. ``capitalize``); the router gives a bonus for a match."""
    answer_formats: list[str] = Field(default_factory=list)
    """Answer formats it fits (e.g. ``short_text``, ``word``)."""
    score_range: tuple[float, float] = (0.0, 1.0)
    """Declared range; a score outside it is the tool's error."""
    needs_reference: bool = False
    """The function needs the task's reference: samples without one abstain, and the router does not pick it
    for tasks without references."""
    deadline_s: float | None = Field(None, gt=0)
    """Per-call deadline (default: the reward worker's ``timeout_s``): per sample for the ``sample`` style, per
    list for ``batched``/``trl``; it counts from the start of the call, so concurrent calls time out together."""
    concurrency: int = Field(DEFAULT_CONCURRENCY, ge=1, le=256)
    """Calls of the function in flight at once, per reward worker (each in its own killable worker process):
    raise it for a function that waits on I/O (an API, a judge), lower it for a CPU-heavy one."""
    reference_kwarg: str = "reference"
    """``trl`` style: the keyword under which the references are passed (e.g. ``solution``)."""
    conversational: bool = False
    """``trl`` style: pass prompts and completions as chat messages, as TRL does for conversational data."""

    @model_validator(mode="after")
    def _check(self) -> PythonToolConfig:
        lo, hi = self.score_range
        if not lo < hi:
            raise ValueError(f"score_range must have low < high, got {list(self.score_range)}")
        return self

    @property
    def module(self) -> str:
        return self.python.partition(":")[0]

    @property
    def function(self) -> str:
        return self.python.partition(":")[2]

    @property
    def trusted(self) -> bool:
        return self.kind != "sandbox"


def module_file(module: str, path: str | Path | None) -> Path | None:
    """The source file of ``module`` under ``path`` (``a.b`` → ``a/b.py`` or ``a/b/__init__.py``), without
    importing anything; None when it is not a plain file there."""
    base = Path(path) if path is not None else Path.cwd()
    rel = Path(*module.split("."))
    for cand in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
        if cand.is_file():
            return cand.resolve()
    return None


def detect_style(fn: Callable[..., Any]) -> str:
    """``trl`` when the first parameters are ``prompts, completions`` (or it takes ``completions`` and
    ``**kwargs``), ``batched`` when the first is ``queries``, else ``sample``."""
    params = list(inspect.signature(fn).parameters.values())
    names = [p.name for p in params]
    has_var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    if names[:2] == ["prompts", "completions"] or ("completions" in names and has_var_kw):
        return "trl"
    if names[:1] == ["queries"]:
        return "batched"
    return "sample"


def _style_from_source(source: str, function: str) -> str:
    """``detect_style`` from the source, without executing it (for sandbox tools)."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function:
            names = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
            if names[:2] == ["prompts", "completions"] or ("completions" in names and node.args.kwarg):
                return "trl"
            return "batched" if names[:1] == ["queries"] else "sample"
    raise PythonToolError(f"the module defines no function {function!r} at its top level")


def _sandbox_code(source: str, function: str, style: str, cfg: PythonToolConfig) -> str:
    """The module's source plus an adapter exposing ``reward(query, response, reference, metadata)``."""
    tree = ast.parse(source)
    defines_reward = any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == "reward"
        for n in tree.body
    )
    if style == "sample" and function == "reward":
        return source
    if defines_reward:
        raise PythonToolError(
            "a sandbox tool's module may not define its own 'reward' unless that is the function registered "
            "(the jail calls reward(query, response, reference, metadata))"
        )
    if any(isinstance(n, ast.AsyncFunctionDef) and n.name == function for n in tree.body):
        raise PythonToolError("sandbox tools must be plain functions, not async def")
    if style == "sample":
        call = f"{function}(query, response, reference, metadata)"
    elif style == "batched":
        call = f"{function}([query], [response], [reference], [metadata])[0]"
    else:
        prompt = "[{'role': 'user', 'content': query}]" if cfg.conversational else "query"
        completion = "[{'role': 'assistant', 'content': response}]" if cfg.conversational else "response"
        call = (
            f"{function}(prompts=[{prompt}], completions=[{completion}], "
            f"**{{{cfg.reference_kwarg!r}: [reference]}}, **{{k: [v] for k, v in metadata.items() "
            f"if k not in ('prompts', 'completions', {cfg.reference_kwarg!r})}})[0]"
        )
    return (
        source.rstrip("\n")
        + "\n\n\n# --- rlar adapter: the sandbox harness calls reward(query, response, reference, metadata) ---\n"
        + "def reward(query, response, reference, metadata):\n"
        + f"    out = {call}\n"
        + "    return out['score'] if isinstance(out, dict) else out\n"
    )


def python_tool_spec(cfg: PythonToolConfig, *, base_dir: str | Path | None = None) -> ToolSpec:
    """A sealed spec for ``cfg``. Trusted kinds import the module here (to check the function and detect its
    style) from ``cfg.path`` (relative to ``base_dir``); ``sandbox`` reads the source only."""
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    path = Path(cfg.path).expanduser() if cfg.path else base
    if not path.is_absolute():
        path = base / path
    path = path.resolve()
    src = module_file(cfg.module, path)
    provenance = {"origin": Origin.USER.value, "author": "", "source": cfg.python}
    if cfg.kind == "sandbox":
        if src is None:
            raise PythonToolError(f"tool {cfg.name!r}: module {cfg.module!r} is not a file under {path}")
        source = src.read_text()
        try:
            style = cfg.style if cfg.style != "auto" else _style_from_source(source, cfg.function)
            code = _sandbox_code(source, cfg.function, style, cfg)
        except (SyntaxError, PythonToolError) as exc:
            raise PythonToolError(f"tool {cfg.name!r} ({src}): {exc}") from None

        return ToolSpec(
            name=cfg.name,
            kind=ToolKind.SANDBOX,
            description=cfg.description,
            task_types=list(cfg.task_types),
            answer_formats=list(cfg.answer_formats),
            score_range=cfg.score_range,
            impl=SANDBOX_IMPL,
            code=code,
            params={
                "needs_reference": cfg.needs_reference,
                "case_timeout_s": cfg.deadline_s or 1.0,
                "limits": None,
                "max_batch": 256,
                "function": cfg.python,
                "style": style,
            },
            provenance={**provenance, "source_file": str(src)},
        ).sealed()
    fn, file = _import_function(cfg.module, cfg.function, path)
    style = cfg.style if cfg.style != "auto" else detect_style(fn)
    params: dict[str, Any] = {
        "function": cfg.python,
        "style": style,
        "source_sha256": _sha256_file(file),
        "needs_reference": cfg.needs_reference,
    }
    if cfg.deadline_s is not None:
        params["deadline_s"] = cfg.deadline_s
    params["concurrency"] = cfg.concurrency
    if style == "trl":
        params.update(reference_kwarg=cfg.reference_kwarg, conversational=cfg.conversational)
    return ToolSpec(
        name=cfg.name,
        kind=ToolKind(cfg.kind),
        description=cfg.description,
        task_types=list(cfg.task_types),
        answer_formats=list(cfg.answer_formats),
        score_range=cfg.score_range,
        impl=IMPL_SAMPLE if style == "sample" else IMPL_BATCHED,
        params=params,
        provenance={**provenance, "source_file": str(file), "python_path": str(path)},
    ).sealed()


def _sha256_file(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _import_function(
    module: str, function: str, path: str | Path | None = None
) -> tuple[Callable[..., Any], Path]:
    """Import ``module`` (with ``path`` first on sys.path) and return (the function, its source file)."""
    if path is not None and str(path) not in sys.path:
        sys.path.insert(0, str(path))
    try:
        mod = importlib.import_module(module)
        # A long-lived worker re-imports a module whose file changed (a new version was registered).
        file = inspect.getsourcefile(mod)
        sha = _sha256_file(file) if file else ""
        if getattr(mod, "__rlar_sha256__", sha) != sha:
            mod = importlib.reload(mod)
        mod.__rlar_sha256__ = sha  # type: ignore[attr-defined]
    except Exception as exc:
        where = f" from {path}" if path is not None else ""
        raise PythonToolError(f"cannot import {module!r}{where}: {type(exc).__name__}: {exc}") from None
    obj: Any = mod
    for part in function.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise PythonToolError(f"module {module!r} ({mod.__file__}) has no {function!r}")
    if not callable(obj):
        raise PythonToolError(f"{module}:{function} is not callable")
    file = inspect.getsourcefile(mod)
    if file is None:
        raise PythonToolError(f"module {module!r} has no source file (a compiled module cannot be versioned)")
    return obj, Path(file)


def _outcome(tool: RewardTool, out: Any) -> Outcome:
    """A user function's return value as a tool outcome (see the module docstring)."""
    if out is None:  # the documented "cannot judge": masked, not scored 0 (as TRL)
        return ToolResult.abstain("the reward function returned None (cannot judge this sample)")
    if isinstance(out, ToolResult):
        return out
    if isinstance(out, dict):
        if "score" not in out:
            return ToolResult.error(f"the reward function returned a dict without 'score': {sorted(out)}")
        if out["score"] is None:
            return ToolResult.abstain(str(out.get("reason") or "the reward function returned no score"))
        return tool.ok(out["score"], str(out.get("reason", "")))
    return tool.ok(out)


class PythonFunctionTool(RewardTool):
    """A trusted Python reward function (``sample`` style), called in the tool worker process."""

    _style: ClassVar[str] = "sample"

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        p = spec.params
        module, _, function = str(p.get("function", "")).partition(":")
        if not module or not function:
            raise ValueError(f"tool {spec.name!r}: params.function must be 'module:function'")
        self.style = str(p.get("style", self._style))
        fn, file = _import_function(module, function)
        want = p.get("source_sha256")
        if want and _sha256_file(file) != want:
            raise ValueError(
                f"{file} changed since {spec.name} v{spec.version} was registered; register it again "
                "(rlar tools register, or restart the run) to get a new version"
            )
        self.fn = fn
        self.needs_reference = bool(p.get("needs_reference", False))

    @classmethod
    def imported_modules(cls, spec: ToolSpec) -> list[str]:
        """The user module this tool imports: it must be under the caller's allowed prefixes."""
        return [str(spec.params.get("function", "")).partition(":")[0]]

    async def _call(self, *args: Any, **kwargs: Any) -> Any:
        out = self.fn(*args, **kwargs)
        if inspect.isawaitable(out):
            out = await out
        return out

    async def _score(self, inp: ToolInput) -> Outcome:
        if self.needs_reference and inp.reference is None:
            return ToolResult.abstain("no reference")
        out = await self._call(inp.query, inp.response, inp.reference, dict(inp.metadata))
        return _outcome(self, out)


class BatchedPythonFunctionTool(PythonFunctionTool):
    """A trusted Python reward function called with lists (``batched`` and ``trl`` styles)."""

    batched: ClassVar[bool] = True
    call_deadline: ClassVar[bool] = True
    _style: ClassVar[str] = "batched"

    async def _score_batch(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        todo = [x for x in inputs if not (self.needs_reference and x.reference is None)]
        outs: list[Any] = []
        if todo:
            got = await self._call_lists(todo)
            what = "completions" if self.style == "trl" else "responses"
            fn = str(self.spec.params.get("function") or self.spec.name)
            if not isinstance(got, list | tuple) and type(got).__name__ != "ndarray":
                why = f"{fn} returned a {type(got).__name__}, not a list of scores for {len(todo)} {what}"
                return [ToolResult.error(why) for _ in inputs]
            outs = list(got)
            if len(outs) != len(todo):
                why = f"{fn} returned {len(outs)} scores for {len(todo)} {what}"
                return [ToolResult.error(why) for _ in inputs]
        it = iter(outs)
        return [
            ToolResult.abstain("no reference")
            if self.needs_reference and x.reference is None
            else _outcome(self, next(it))
            for x in inputs
        ]

    async def _call_lists(self, xs: Sequence[ToolInput]) -> Any:
        """The function's raw return value for ``xs`` (checked by ``_score_batch``)."""
        queries, responses = [x.query for x in xs], [x.response for x in xs]
        references, metadatas = [x.reference for x in xs], [dict(x.metadata) for x in xs]
        if self.style != "trl":
            return await self._call(queries, responses, references, metadatas)
        p = self.spec.params
        ref_kw = str(p.get("reference_kwarg") or "reference")
        if p.get("conversational"):
            prompts: list[Any] = [[{"role": "user", "content": q}] for q in queries]
            completions: list[Any] = [[{"role": "assistant", "content": r}] for r in responses]
        else:
            prompts, completions = queries, responses
        columns = sorted({k for m in metadatas for k in m} - {"prompts", "completions", ref_kw})
        kwargs = {k: [m.get(k) for m in metadatas] for k in columns}
        kwargs[ref_kw] = references
        return await self._call(prompts=prompts, completions=completions, **kwargs)
