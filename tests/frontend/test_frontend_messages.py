"""Errors a learner meets first say what is wrong in their terms and what to do."""

import pytest

import chipsim as cs


@pytest.mark.parametrize(
    ("data", "kind"), [("hello", "text"), ([1, "a"], "text"), ([1j], "complex numbers")]
)
def test_a_tensor_of_non_numbers_says_so(data, kind):
    with pytest.raises(cs.ChipsimError) as info:
        cs.tensor(data)
    msg = str(info.value)
    assert f"numpy reads {data!r} as {kind}" in msg
    assert "cs.tensor([1.0, 2.0, 3.0])" in msg and "no chipsim equivalent" not in msg


def test_a_ragged_list_names_the_rule():
    with pytest.raises(cs.ChipsimError, match="Every row of a nested list must have the same"):
        cs.tensor([[1.0, 2.0], [3.0]])


@pytest.mark.parametrize(
    ("a", "b", "says"),
    [
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0], "their dimension -1 (the last) is 3 and 4."),
        ([[1.0, 2.0]] * 5, [[1.0, 2.0]] * 3, "their dimension -2 (2 from the right) is 5 and 3."),
    ],
)
def test_broadcast_error_names_the_mismatched_dimension_from_the_right(a, b, says):
    with pytest.raises(cs.ShapeError) as info:
        cs.tensor(a) + cs.tensor(b)
    msg = str(info.value)
    assert msg.startswith("add: shapes ") and says in msg
    assert "matched from the right and must be equal or 1" in msg
    assert "from the left" not in msg
