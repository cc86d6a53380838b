"""peewee models of the durable store. Bound to a database by `Store`."""

from __future__ import annotations

import peewee

database_proxy = peewee.DatabaseProxy()


class BaseModel(peewee.Model):
    class Meta:
        database = database_proxy


class Preference(BaseModel):
    """A UI preference shared by every window (tab order, theme...), JSON-encoded."""

    key = peewee.CharField(primary_key=True, max_length=200)
    value = peewee.TextField()
    updated = peewee.BigIntegerField()
