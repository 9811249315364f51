"""Importers: public benchmark files into memgauge's native dataset models.

Each returns the dataset and an `ImportReport` that counts what was read, normalised, dropped
and why, so nothing disappears silently.
"""

from memgauge.data.importers.beir import BeirGrades, import_beir
from memgauge.data.importers.common import ImportReport, require_evaluable
from memgauge.data.importers.csv_items import import_csv_items
from memgauge.data.importers.locomo import import_locomo
from memgauge.data.importers.longmemeval import import_longmemeval
from memgauge.data.importers.memaudit import import_memaudit

__all__ = [
    "BeirGrades",
    "ImportReport",
    "import_beir",
    "import_csv_items",
    "import_locomo",
    "import_longmemeval",
    "import_memaudit",
    "require_evaluable",
]
