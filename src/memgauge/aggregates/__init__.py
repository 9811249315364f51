"""Run-level aggregates: the registry of aggregates and the ones memgauge ships.

Built-ins are declared as entry points (`memgauge.aggregates` in pyproject.toml), the same way
a plug-in declares its own; `AGGREGATES.build(name, args)` makes one from a spec.
"""

from memgauge._util.registry import Registry
from memgauge.aggregates.base import Aggregate, Target, TaskView

__all__ = ["AGGREGATES", "Aggregate", "Target", "TaskView"]

AGGREGATES: Registry[Aggregate] = Registry("aggregate", "memgauge.aggregates")
