"""The ladder's first schema: state, students, tokens, versions, jobs, games, seats, logs, deadline snapshot.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False, comment="Queue order within a priority."),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False, comment="0 first: checks come before matches."),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("claimed_by", sa.String(length=200), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished", sa.DateTime(timezone=True), nullable=True),
        sa.Column("version_id", sa.String(length=40), nullable=True, comment="A check's version."),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("seq"),
    )
    op.create_index("jobs_queue", "jobs", ["state", "priority", "seq"], unique=False)
    op.create_table(
        "ladder_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column(
            "secret", sa.String(length=64), nullable=False, comment="Keys the pseudonyms and the deals; never shown."
        ),
        sa.Column("frozen", sa.Boolean(), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=True),
        sa.Column("snapshot_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "changes",
            sa.Integer(),
            nullable=False,
            comment="Bumped on every change to what the table shows (Ladder.changes).",
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "students",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("pseudonym", sa.String(length=64), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
        sa.UniqueConstraint("pseudonym"),
    )
    op.create_table(
        "tokens",
        sa.Column(
            "token_id",
            sa.String(length=32),
            nullable=False,
            comment="The token's public part, for looking it up; the rest is checked against `hash`.",
        ),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("hash", sa.String(length=200), nullable=False, comment="argon2id of the whole token."),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("token_id"),
    )
    op.create_index("tokens_by_name", "tokens", ["role", "name"], unique=False)
    op.create_table(
        "games",
        sa.Column(
            "id",
            sa.String(length=80),
            nullable=False,
            comment="JOB:INDEX: a game posted twice (a repeated report, a reissued job's late one) is stored once.",
        ),
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("game_index", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("stored", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "final", sa.Boolean(), nullable=False, comment="Played after the deadline's snapshot (the final run)."
        ),
        sa.Column("isolation", sa.String(length=16), nullable=False),
        sa.Column("replay", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["jobs.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "game_index", name="games_once"),
    )
    op.create_table(
        "match_logs",
        sa.Column("job_id", sa.String(length=40), nullable=False),
        sa.Column("entrant", sa.String(length=200), nullable=False),
        sa.Column(
            "log",
            sa.Text(),
            nullable=False,
            comment="The bot's output in the match, capped; its own student and staff only.",
        ),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["jobs.id"],
        ),
        sa.PrimaryKeyConstraint("job_id", "entrant"),
    )
    op.create_table(
        "versions",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("student", sa.String(length=200), nullable=False),
        sa.Column(
            "digest",
            sa.String(length=80),
            nullable=False,
            comment="The content hash of the folder: its copy is versions/DIGEST/ in the ladder folder.",
        ),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("late", sa.Boolean(), nullable=False),
        sa.Column("check_report", sa.JSON(), nullable=True),
        sa.Column("build_log", sa.Text(), nullable=True),
        sa.Column("verdict", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["student"],
            ["students.name"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("versions_by_student", "versions", ["student", "created"], unique=False)
    op.create_table(
        "deadline_snapshot",
        sa.Column("student", sa.String(length=200), nullable=False),
        sa.Column("version_id", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(
            ["student"],
            ["students.name"],
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["versions.id"],
        ),
        sa.PrimaryKeyConstraint("student"),
    )
    op.create_table(
        "seat_results",
        sa.Column("game_id", sa.String(length=80), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("entrant", sa.String(length=200), nullable=False, comment="A version's id, or a baseline's name."),
        sa.Column("student", sa.String(length=200), nullable=True, comment="None for a baseline."),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("faults", sa.JSON(), nullable=False),
        sa.Column("forfeited", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
        ),
        sa.PrimaryKeyConstraint("game_id", "seat"),
    )
    op.create_index("seats_by_entrant", "seat_results", ["entrant"], unique=False)


def downgrade() -> None:
    for table in (
        "deadline_snapshot",
        "match_logs",
        "seat_results",
        "games",
        "versions",
        "tokens",
        "students",
        "jobs",
        "ladder_state",
    ):
        op.drop_table(table)
