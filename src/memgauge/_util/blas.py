"""BLAS on one thread for a while (threadpoolctl).

OpenBLAS splits a large product over its threads, which on a busy machine makes it many times
slower (the randomization test's products at 100,000 items: 7.3 s against 0.83 s on one thread
at load 9), and the split changes a product's last bits with the machine's core count.
"""

from __future__ import annotations

from typing import Any

__all__ = ["one_blas_thread"]

_CONTROLLER: Any = None


def one_blas_thread() -> Any:
    """A context in which BLAS runs on one thread."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")
