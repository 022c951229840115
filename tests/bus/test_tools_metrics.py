"""Metric tools on real text: BLEU-2 and chrF (sacrebleu), embedding cosine with the local MiniLM."""

from __future__ import annotations

import pytest
import torch

from rlar.tools import ToolExecutor, ToolInput, ToolResult, builtin_specs, make_tool
from rlar.tools.base import RewardTool

torch.set_num_threads(1)

REF = "The cat sat on the mat."
CLOSE = "The cat sat on a mat."
FAR = "Quarterly revenue grew by eight percent."


def val(res: ToolResult) -> float:
    """The score of an ok result (fails the test otherwise)."""
    assert res.status == "ok" and res.score is not None, res
    return res.score


def spec(name: str, **params):
    s = next(s for s in builtin_specs() if s.name == name)
    return s.replace(params={**s.params, **params}).sealed() if params else s


@pytest.fixture(scope="module")
def embedder() -> RewardTool:
    return make_tool(spec("embedding_similarity"))


async def test_bleu2_matches_sacrebleu_and_orders_close_above_far():
    from sacrebleu.metrics import BLEU

    t = make_tool(spec("bleu2"))
    same, close, far, empty = await t.score_batch([ToolInput("q", r, REF) for r in (REF, CLOSE, FAR, "")])
    assert same.score == pytest.approx(1.0)
    expected = BLEU(max_ngram_order=2, effective_order=True).sentence_score(CLOSE, [REF]).score / 100
    assert close.score == pytest.approx(expected) and 0.5 < val(close) < 1.0
    assert val(far) < 0.2  # only the full stop is shared
    assert empty.score == 0.0 and empty.reason == "empty response"


async def test_bleu2_uses_several_references():
    t = make_tool(spec("bleu2"))
    one = await t.score(ToolInput("q", CLOSE, [REF]))
    two = await t.score(ToolInput("q", CLOSE, [REF, CLOSE]))
    assert two.score == pytest.approx(1.0) and val(one) < 1.0
    assert (await t.score(ToolInput("q", CLOSE, None))).status == "abstain"


async def test_chrf_rewards_partial_character_overlap():
    t = make_tool(spec("chrf"))
    same, typo, far = await t.score_batch(
        [ToolInput("q", r, "translation") for r in ("translation", "translatoin", FAR)]
    )
    assert same.score == pytest.approx(1.0)
    assert 0.3 < val(typo) < 1.0 and val(far) < val(typo)
    chrf_pp = make_tool(spec("chrf", word_order=2))
    pp = await chrf_pp.score(ToolInput("q", CLOSE, REF))
    assert 0.0 < val(pp) < 1.0


async def test_embedding_similarity_ranks_paraphrase_above_unrelated(embedder):
    para, unrelated, empty, no_ref = await embedder.score_batch(
        [
            ToolInput("q", "A cat was sitting on a mat.", REF),
            ToolInput("q", FAR, REF),
            ToolInput("q", "  ", REF),
            ToolInput("q", FAR, None),
        ]
    )
    assert para.status == unrelated.status == "ok"
    assert para.details["cosine"] > 0.8 and unrelated.details["cosine"] < 0.3
    assert para.score == pytest.approx((1 + para.details["cosine"]) / 2)
    assert empty.score == 0.0 and no_ref.status == "abstain"
    identical = await embedder.score(ToolInput("q", REF, REF))
    assert identical.score == pytest.approx(1.0, abs=1e-5)  # cos ≈ 1 + float noise, clipped by finalize


async def test_embedding_takes_the_best_of_several_references(embedder):
    res = await embedder.score(ToolInput("q", "A cat was sitting on a mat.", [FAR, REF]))
    alone = await embedder.score(ToolInput("q", "A cat was sitting on a mat.", REF))
    assert res.score == pytest.approx(alone.score, abs=1e-6)


async def test_transformers_mean_pooling_backend_agrees_with_sentence_transformers(embedder):
    plain = make_tool(spec("embedding_similarity", backend="transformers"))
    texts = ["A cat was sitting on a mat.", FAR, "Le chat est assis sur le tapis."]
    a = embedder.embed(texts)  # type: ignore[attr-defined]
    b = plain.embed(texts)  # type: ignore[attr-defined]
    assert torch.allclose(a, b, atol=1e-4)


async def test_embedding_tool_runs_in_an_executor_worker():
    async with ToolExecutor(timeout_s=30, load_timeout_s=60) as ex:
        res = await ex.score_batch(
            spec("embedding_similarity", mapping="clip"),
            [ToolInput("q", "A cat was sitting on a mat.", REF), ToolInput("q", FAR, REF)],
        )
    assert [r.status for r in res] == ["ok", "ok"]
    assert val(res[0]) > 0.8 and val(res[1]) < 0.3
