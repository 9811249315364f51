"""Small shared type aliases."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# int8, int16 or int32: the narrowest that holds the batch's grades (metrics.ranking.grade_dtype)
GradeArray = npt.NDArray[np.signedinteger[Any]]
Float32Array = npt.NDArray[np.float32]
AnyArray = npt.NDArray[Any]
BoolArray = npt.NDArray[np.bool_]

__all__ = [
    "AnyArray",
    "BoolArray",
    "Float32Array",
    "FloatArray",
    "GradeArray",
    "IntArray",
]
