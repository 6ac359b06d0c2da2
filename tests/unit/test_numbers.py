"""The one home of the number checks: a bool is never a number, numpy's scalars count where
asked, infinities and NaN where not refused, counts within their bounds."""

import math

import numpy as np
import pytest

from sedcontract.numbers import is_count, is_number, is_whole


@pytest.mark.parametrize(("value", "plain", "with_numpy", "finite"), [
    (3, True, True, True), (0.5, True, True, True), (np.float64(0.5), True, True, True),
    (np.float32(0.5), False, True, True), (np.int64(3), False, True, True),
    (True, False, False, False), (np.bool_(True), False, False, False),
    (math.inf, True, True, False), (math.nan, True, True, False), ("1", False, False, False),
    (None, False, False, False),
])
def test_a_number_is_never_a_bool_and_numpy_counts_where_asked(value, plain, with_numpy,
                                                                finite):
    assert is_number(value) is plain
    assert is_number(value, numpy=True) is with_numpy
    assert is_number(value, finite=True, numpy=True) is (with_numpy and finite)


def test_whole_numbers_and_counts():
    assert is_whole(3) and not is_whole(3.0) and not is_whole(True)
    assert not is_whole(np.int64(3)) and is_whole(np.int64(3), numpy=True)
    assert is_count(0, 5) and is_count(5, 5) and not is_count(6, 5) and not is_count(-1, 5)
    assert is_count(-5, 5, signed=True) and not is_count(-6, 5, signed=True)
    assert not is_count(False, 5) and not is_count(1.0, 5)
