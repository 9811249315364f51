"""The hand-run SQLite migrations are frozen: SQLite keeps each CREATE statement's text as
written (`sqlite_master.sql`, what `.schema` prints), so a store upgraded from before Alembic
has exactly these texts. Their SQL, whatever the Python that spells it, stays byte for byte
that of 0001-0009 as released."""

from __future__ import annotations

import hashlib

from memgauge.store import migrations

FROZEN_SHA256 = "d04a12b5f68db7a863d141b4f22b56c40e69b400409c1d149a63b67ff70fbe3d"


def test_the_frozen_migrations_statements_are_unchanged() -> None:
    h = hashlib.sha256()
    for name, step in migrations.MIGRATIONS:
        h.update(name.encode())
        h.update((step if isinstance(step, str) else "").encode())
    h.update(migrations._SEED_TABLES.encode())  # 0006's tables, run by a function
    assert h.hexdigest() == FROZEN_SHA256
