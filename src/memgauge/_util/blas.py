"""BLAS on one thread for a while (threadpoolctl).

OpenBLAS splits a large product over its threads, which on a busy machine makes it many times
slower (the randomization test's products at 100,000 items: 7.3 s against 0.83 s on one thread
at load 9), and the split changes a product's last bits with the machine's core count; its
second thread also makes the small products of one embedding batch or one dense search slower
(BENCHMARKS.md, "Offline embeddings").

BLAS's thread count is the process's, not a thread's: contexts that threads enter at once (the
viewer's compare requests, a run's subjects searching a dense memory) share one limit, set by
the first to enter and lifted by the last to leave. A limit per context restored what it found
on leaving: the first to leave gave BLAS its threads back under the others, and the last put
back the one thread it had found, for the rest of the process.
"""

from __future__ import annotations

import sys
from typing import Any

from memgauge._util.shared import SharedSetting

__all__ = ["one_blas_thread"]

_CONTROLLER: Any = None
#: `len(sys.modules)` when the controller was made: a BLAS library is loaded by an import
#: (SciPy brings its own OpenBLAS), and a controller sees only the libraries loaded before it
_MODULES_SEEN = -1


def _one_thread() -> Any:
    global _CONTROLLER, _MODULES_SEEN
    if _CONTROLLER is None or len(sys.modules) != _MODULES_SEEN:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()  # about 1.4 ms: made again only after imports
        _MODULES_SEEN = len(sys.modules)
    return _CONTROLLER.limit(limits=1, user_api="blas")


#: a context in which BLAS runs on one thread (until every thread inside one has left)
one_blas_thread = SharedSetting(_one_thread, lambda limit: limit.restore_original_limits())
