"""Write `fresh_sqlite.sql` again after a new migration: `python -m memgauge.store.refresh_schema`.

Its own module because it makes a store through `engine`, which reads the file through
`fresh_schema`: kept there, the writer would import `engine` from a module `engine` imports.
"""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import closing
from importlib import resources
from pathlib import Path

from memgauge.store.engine import open_engine, upgrade
from memgauge.store.fresh_schema import FILE, schema_statements, write_schema
from memgauge.store.url import HEAD, store_url


def main() -> None:
    """Write `fresh_sqlite.sql` from a store the migrations make in a temporary directory."""
    with tempfile.TemporaryDirectory() as tmp:
        url = store_url(str(Path(tmp) / "results.db"))
        engine = open_engine(url)
        try:
            upgrade(engine, url, cached=False)
        finally:
            engine.dispose()
        assert url.path is not None
        with closing(sqlite3.connect(url.path)) as conn:
            statements = schema_statements(conn)
    target = Path(str(resources.files("memgauge.store") / FILE))
    write_schema(target, HEAD, statements)
    print(f"wrote {target} ({len(statements)} statements, revision {HEAD})")


if __name__ == "__main__":
    main()
