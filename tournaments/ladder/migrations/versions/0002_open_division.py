"""The open division: the students' CURVE public keys, and the division of each job and game (the games of an
existing ladder are all graded).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "remote_keys",
        sa.Column("student", sa.String(length=200), nullable=False, comment="One key per student."),
        sa.Column(
            "entrant",
            sa.String(length=40),
            nullable=False,
            comment="The open division's entrant (and remote seat) of this key; a new key is a new entrant.",
        ),
        sa.Column("public_key", sa.String(length=40), nullable=False, comment="Z85 CURVE public key."),
        sa.Column("registered", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["student"], ["students.name"]),
        sa.PrimaryKeyConstraint("student"),
        sa.UniqueConstraint("entrant"),
        sa.UniqueConstraint("public_key"),
    )
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(
            sa.Column(
                "division",
                sa.String(length=16),
                nullable=False,
                server_default="graded",
                comment="A match's division: only a worker that hosts remote seats claims an open one.",
            )
        )
    with op.batch_alter_table("games") as batch:
        batch.add_column(
            sa.Column(
                "division",
                sa.String(length=16),
                nullable=False,
                server_default="graded",
                comment="Each division's table is fitted on its own games: an open game never changes a mark.",
            )
        )


def downgrade() -> None:
    """Plain ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later have it): a batch's copy of `games` would be
    dropped under the seats' foreign key."""
    op.drop_column("games", "division")
    op.drop_column("jobs", "division")
    op.drop_table("remote_keys")
