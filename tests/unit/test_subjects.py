import pytest

from bus import subjects


def test_subject_functions_build_the_documented_subjects() -> None:
    assert subjects.samples("arith") == "rlar.samples.arith"
    assert subjects.score("sandbox") == "rlar.score.sandbox"
    assert subjects.heartbeat("reward", "host.1") == "rlar.heartbeat.reward.host_1"
    assert subjects.dlq("rlar.samples.arith") == "rlar.dlq.rlar.samples.arith"
    assert subjects.dlq(subjects.dlq("x")) == "rlar.dlq.x"


@pytest.mark.parametrize("bad", ["", "a.b", "a*", ">", "a b"])
def test_reserved_characters_in_a_token_are_refused(bad: str) -> None:
    with pytest.raises(subjects.SubjectError):
        subjects.samples(bad)


def test_an_unknown_tool_kind_is_refused() -> None:
    with pytest.raises(subjects.SubjectError):
        subjects.score("magic")
