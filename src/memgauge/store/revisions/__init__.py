"""The results store's Alembic migrations: `env.py` and one script per revision under
`versions/`, shipped in the package and run through Alembic's programmatic API
(`memgauge.store.engine.upgrade`)."""
