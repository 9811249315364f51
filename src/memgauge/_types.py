"""Small shared type aliases."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
GradeArray = npt.NDArray[np.int8]
BoolArray = npt.NDArray[np.bool_]
JSONDict = dict[str, Any]

__all__ = ["BoolArray", "FloatArray", "GradeArray", "IntArray", "JSONDict"]
