"""Alembic's environment for the results store: migrations run on the connection that
`memgauge.store.engine.upgrade` passes in `config.attributes["connection"]`, inside the
transaction it holds (which serializes processes migrating one store at once)."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
