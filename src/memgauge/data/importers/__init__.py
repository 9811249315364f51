"""Importers: public benchmark files into memgauge's native dataset models.

Each returns the dataset and an `ImportReport` that counts what was read, normalised, dropped
and why, so nothing disappears silently.
"""

from memgauge.data.importers.common import ImportReport
from memgauge.data.importers.locomo import import_locomo
from memgauge.data.importers.longmemeval import import_longmemeval
from memgauge.data.importers.memaudit import import_memaudit

__all__ = ["ImportReport", "import_locomo", "import_longmemeval", "import_memaudit"]
