"""Desk's identity for each tool call: unique in its session whatever id the provider sends."""

from __future__ import annotations

import re
import sqlite3

from desktop.events.ids import new_id
from desktop.store.db import Store

# What a provider id may look like to be kept: short, printable, no separators of our keys.
_USABLE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def used_call_ids(conn: sqlite3.Connection, session_id: str) -> set[str]:
    """Every tool call id of the session's messages."""
    rows = conn.execute(
        "SELECT json_extract(p.value, '$.id') FROM message m, json_each(m.data, '$.content') p "
        "WHERE m.session_id = ? AND json_extract(p.value, '$.type') = 'tool'",
        (session_id,),
    ).fetchall()
    return {r[0] for r in rows if isinstance(r[0], str)}


class CallIds:
    """The ids of one step's calls, by the provider's call index."""

    def __init__(self, used: set[str]) -> None:
        self._used = set(used)
        self._by_index: dict[int, str] = {}

    def assign(self, index: int, provider_id: str | None) -> str:
        """The call's id (the same for every event of the call's index)."""
        found = self._by_index.get(index)
        if found is not None:
            return found
        return self._take(index, provider_id)

    def pending(self, calls: list[tuple[int, str | None]]) -> list[str]:
        """The ids of the step's complete calls (index, provider id), in order: each its
        index's id, and a new one for any later call that claims an index already used."""
        ids: list[str] = []
        for index, provider_id in calls:
            chosen = self.assign(index, provider_id)
            if chosen in ids:
                chosen = self._take(None, None)
            ids.append(chosen)
        return ids

    def _take(self, index: int | None, provider_id: str | None) -> str:
        if provider_id and _USABLE.fullmatch(provider_id) and provider_id not in self._used:
            chosen = provider_id
        else:
            chosen = new_id("call")
        self._used.add(chosen)
        if index is not None:
            self._by_index[index] = chosen
        return chosen


async def call_ids_for(store: Store, session_id: str) -> CallIds:
    used = await store.run(lambda: used_call_ids(store.connection(), session_id))
    return CallIds(used)
