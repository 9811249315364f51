"""memgauge: measure whether an LLM agent's memory works."""

from memgauge.errors import DataError, MemgaugeError, Problem, UnavailableError, UsageError

__version__ = "0.1.0"

__all__ = [
    "DataError",
    "MemgaugeError",
    "Problem",
    "UnavailableError",
    "UsageError",
    "__version__",
]
