"""A session's own model settings: the model, the reasoning effort and the context window it
was given (`PATCH /api/session/{id}`), inherited by its subagents, and the profile its
requests are sent with."""

from __future__ import annotations

import dataclasses
import sqlite3

from desktop.agent.permissions import lineage
from desktop.events.projector import context_key
from desktop.provider.profiles import Profile, is_mistral_family
from desktop.store import sessions as q

EFFORTS = ("low", "medium", "high")


@dataclasses.dataclass(frozen=True)
class SessionModel:
    model: str | None = None
    reasoning_effort: str | None = None
    context_window: int | None = None

    def apply(self, profile: Profile) -> Profile:
        """The provider's profile with the session's choices: another model drops the
        provider settings' window (it was given for their model)."""
        changes: dict[str, object] = {}
        if self.model and self.model != profile.model:
            changes["model"] = self.model
            changes["context_window"] = None
            changes["mistral"] = profile.mistral or is_mistral_family(profile.base_url, self.model)
        if self.reasoning_effort:
            changes["reasoning_effort"] = self.reasoning_effort
        if self.context_window:
            changes["context_window"] = self.context_window
        return dataclasses.replace(profile, **changes) if changes else profile  # type: ignore[arg-type]


def session_model(conn: sqlite3.Connection, session_id: str) -> SessionModel:
    """The session's settings, each from the nearest of the session and its ancestors that
    set it (a subagent works like its parent unless told otherwise)."""
    found: dict[str, object] = {}
    for sid in lineage(conn, session_id) or [session_id]:
        own = q.kv_get(conn, context_key(sid, "model"))
        if isinstance(own, dict):
            for name in ("model", "reasoning_effort"):
                if isinstance(own.get(name), str) and name not in found:
                    found[name] = own[name]
        window = q.kv_get(conn, context_key(sid, "window"))
        if isinstance(window, int) and window > 0 and "context_window" not in found:
            found["context_window"] = window
    return SessionModel(**found)  # type: ignore[arg-type]
