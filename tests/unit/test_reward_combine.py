"""``rlar.tools.combine``: the weighted mean of the ok results, an abstention without any."""

from __future__ import annotations

import math

import pytest

from rlar.tools.combine import combine


# -- combination rule -----------------------------------------------------------------------------------
def test_combine_is_the_weighted_mean_of_ok_results_and_abstains_without_any() -> None:
    assert combine([(0.6, "ok", 1.0), (0.4, "ok", 0.5)]) == ("ok", pytest.approx(0.8))
    # an abstaining or failing tool is left out and the others renormalised — never counted as 0
    assert combine([(0.5, "ok", 0.4), (0.5, "abstain", None), (1.0, "error", None)]) == ("ok", 0.4)
    assert combine([(1.0, "abstain", None), (1.0, "error", None)]) == ("abstain", None)
    assert combine([]) == ("abstain", None)
    assert combine([(0.0, "ok", 1.0)]) == ("abstain", None)
    with pytest.raises(ValueError):
        combine([(-1.0, "ok", 1.0)])
    with pytest.raises(ValueError):
        combine([(math.nan, "ok", 1.0)])
