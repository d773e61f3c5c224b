"""The equivalence tests' tolerance stays finite when an output holds inf (issue 10 finding 7)."""

import numpy as np
import pytest
from compiler_graphs import output_scale


def test_the_scale_ignores_infinite_and_nan_values():
    assert output_scale(np.array([1.0, -np.inf, -3.0, np.nan], np.float32)) == 3.0


def test_the_scale_is_at_least_one():
    assert output_scale(np.array([0.25, np.inf])) == 1.0
    assert output_scale(np.array([np.inf])) == 1.0


def test_a_wrong_finite_value_beside_an_inf_is_still_caught():
    want = np.array([np.inf, 2.0], np.float32)
    got = np.array([np.inf, 2.5], np.float32)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * output_scale(want))
