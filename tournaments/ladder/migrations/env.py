"""Alembic's environment: always online, on the connection that tournaments.ladder.database.migrate passes."""

from __future__ import annotations

from alembic import context

from tournaments.ladder.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
