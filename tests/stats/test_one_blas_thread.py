"""`one_blas_thread` is entered by threads at once (the viewer's compare requests, a run's
subjects searching a dense reference memory): BLAS stays on one thread until the last of them
leaves, and then gets back the threads it had, whatever order they leave in."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from memgauge._util.blas import one_blas_thread


def _blas_threads() -> set[int]:
    return {int(x["num_threads"]) for x in threadpool_info() if x["user_api"] == "blas"}


@pytest.fixture
def two_blas_threads() -> Iterator[None]:
    np.ones(2) @ np.ones(2)  # BLAS loaded
    if not _blas_threads():
        pytest.skip("no BLAS library threadpoolctl can see")
    with threadpool_limits(limits=2, user_api="blas"):
        yield


def test_blas_stays_on_one_thread_until_the_last_context_leaves(two_blas_threads: None) -> None:
    """Two threads' contexts, the first to enter leaving first (entered and left here, in the
    order the threads would: OpenBLAS 0.3.31 ignores a thread count set by a thread other than
    the one that last set it, so the threads' own calls cannot be checked from another)."""
    first, second = one_blas_thread(), one_blas_thread()
    seen: dict[str, set[int]] = {}
    first.__enter__()
    second.__enter__()
    seen["both inside"] = _blas_threads()
    first.__exit__(None, None, None)
    seen["second inside"] = _blas_threads()
    second.__exit__(None, None, None)
    seen["none inside"] = _blas_threads()
    assert seen == {"both inside": {1}, "second inside": {1}, "none inside": {2}}


def test_nested_in_one_thread(two_blas_threads: None) -> None:
    with one_blas_thread():
        with one_blas_thread():
            assert _blas_threads() == {1}
        assert _blas_threads() == {1}
    assert _blas_threads() == {2}


_LATER_LIBRARY = """
import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits
from memgauge._util.blas import one_blas_thread

np.ones(2) @ np.ones(2)
with one_blas_thread():
    pass
before = {x["filepath"] for x in threadpool_info() if x["user_api"] == "blas"}
import scipy.linalg  # noqa: E402,F401  (SciPy's own OpenBLAS, loaded after the first use)

after = {x["filepath"] for x in threadpool_info() if x["user_api"] == "blas"}
with threadpool_limits(limits=2, user_api="blas"), one_blas_thread():
    inside = sorted(int(x["num_threads"]) for x in threadpool_info() if x["user_api"] == "blas")
print(len(after - before), inside)
"""


def test_a_blas_library_loaded_after_the_first_use_is_limited_too() -> None:
    """A fresh process, since which libraries are loaded is the point: the first context saw
    NumPy's BLAS alone, SciPy's is loaded later, and the next context limits both."""
    import ast
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _LATER_LIBRARY], capture_output=True, text=True, check=True
    )
    new, inside = done.stdout.split(" ", 1)
    if new == "0":
        pytest.skip("SciPy shares NumPy's BLAS library here")
    assert set(ast.literal_eval(inside)) == {1}, done.stdout
