"""`Knn.check` names what it was given where the reference's answer belongs: the arguments
swapped, or the run's answer given twice, ended in "'Neighbours' object has no attribute
'neighbours'"."""

from __future__ import annotations

import pytest

from ndpkit.errors import NdpkitError
from ndpkit.kernels import get_kernel, run_in_memory


def test_check_names_an_expected_answer_that_is_not_the_reference() -> None:
    knn = get_kernel("knn2")
    data, params = knn.generate(4096, seed=1), knn.params(seed=0)
    result = run_in_memory(knn, data, params, 100)
    reference = knn.reference(data, params)
    knn.check(result, reference)  # the right way round
    for result_given, expected in ((reference, result), (result, result), (result, None)):
        with pytest.raises(NdpkitError, match=r"expected must be the reference's answer"):
            knn.check(result_given, expected)
    with pytest.raises(NdpkitError, match=r"result must be the kernel's Neighbours"):
        knn.check(None, reference)
