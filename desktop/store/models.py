"""peewee models of the durable store, bound to a database by `Store`: the `event` log is the
source of truth for sessions, the other tables its projection and the engine's own state.
"""

from __future__ import annotations

import peewee
from playhouse.sqlite_ext import AutoIncrementField

database_proxy = peewee.DatabaseProxy()


class BaseModel(peewee.Model):
    class Meta:
        database = database_proxy


class Preference(BaseModel):
    """A UI preference shared by every window (tab order, theme...), JSON-encoded."""

    key = peewee.CharField(primary_key=True, max_length=200)
    value = peewee.TextField()
    updated = peewee.BigIntegerField()


class SessionRow(BaseModel):
    """One conversation. `time_suspended` is the runner's execution claim: set while a turn
    runs, left set by a crash so restart recovery can resume it (`resume_attempts` is the
    budget spent doing so)."""

    id = peewee.CharField(primary_key=True, max_length=64)
    parent = peewee.ForeignKeyField(
        "self", null=True, column_name="parent_id", on_delete="CASCADE", backref="children"
    )
    title = peewee.TextField()
    directory = peewee.TextField()
    status = peewee.CharField(max_length=16, default="idle")  # idle | error (busy = claim)
    created = peewee.BigIntegerField()
    updated = peewee.BigIntegerField()
    time_suspended = peewee.BigIntegerField(null=True)
    resume_attempts = peewee.IntegerField(default=0)

    class Meta:
        table_name = "session"


class EventRow(BaseModel):
    """The append-only log. `position` is global and never reused (AUTOINCREMENT), so an
    SSE client's Last-Event-ID stays meaningful after deletions; `seq` counts per
    aggregate (the session) without gaps."""

    position = AutoIncrementField()
    id = peewee.CharField(unique=True, max_length=64)
    aggregate_id = peewee.CharField(max_length=64)
    seq = peewee.IntegerField()
    type = peewee.CharField(max_length=100)
    version = peewee.IntegerField(default=1)
    created = peewee.BigIntegerField()
    data = peewee.JSONField()

    class Meta:
        table_name = "event"
        indexes = ((("aggregate_id", "seq"), True),)


class MessageRow(BaseModel):
    """A projected message; `seq` is the aggregate seq of the event that created it, so the
    order (and every page cursor) is stable and identical after a replay."""

    id = peewee.CharField(primary_key=True, max_length=64)
    session = peewee.ForeignKeyField(
        SessionRow, column_name="session_id", on_delete="CASCADE", backref="messages"
    )
    seq = peewee.IntegerField()
    type = peewee.CharField(max_length=16)
    data = peewee.JSONField()

    class Meta:
        table_name = "message"
        indexes = ((("session", "seq"), True),)


class InboxRow(BaseModel):
    """Input waiting for the runner: `mode` queue|steer, `kind` user|synthetic. The id is the
    message id the input becomes, so taking it twice is impossible."""

    id = peewee.CharField(primary_key=True, max_length=64)
    session = peewee.ForeignKeyField(
        SessionRow, column_name="session_id", on_delete="CASCADE", backref="inbox"
    )
    mode = peewee.CharField(max_length=8)
    kind = peewee.CharField(max_length=16)
    data = peewee.JSONField()
    created = peewee.BigIntegerField()

    class Meta:
        table_name = "inbox"
        indexes = ((("session", "created"), False),)


class KvRow(BaseModel):
    """Small durable state by key (for example a session's permission mode)."""

    key = peewee.CharField(primary_key=True, max_length=300)
    value = peewee.JSONField()
    updated = peewee.BigIntegerField()

    class Meta:
        table_name = "kv"


class JobRow(BaseModel):
    """One background job of a session (desktop/jobs/model.py): its API shape (`data`), what
    restart recovery needs (`recovery`), its output, and whether its notice is `owed`."""

    id = peewee.CharField(primary_key=True, max_length=300)
    session_id = peewee.CharField(max_length=64, index=True)
    owed = peewee.BooleanField(default=False, index=True)
    notification_id = peewee.CharField(max_length=64, null=True, index=True)
    completed = peewee.BigIntegerField(null=True)
    data = peewee.JSONField()
    recovery = peewee.JSONField(null=True)
    output = peewee.TextField(null=True)
    updated = peewee.BigIntegerField()

    class Meta:
        table_name = "job"
