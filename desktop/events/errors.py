"""Errors of the session engine, each with the HTTP status and error type the API answers."""

from __future__ import annotations


class SessionError(Exception):
    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.type = error_type
        self.message = message


def invalid(message: str) -> SessionError:
    return SessionError(400, "request.invalid", message)


def session_not_found(session_id: str) -> SessionError:
    return SessionError(404, "session.not_found", f"No session {session_id!r}.")


def message_not_found(session_id: str, message_id: str) -> SessionError:
    return SessionError(
        404, "session.message_not_found", f"No message {message_id!r} in session {session_id!r}."
    )


def message_not_assistant(message_id: str) -> SessionError:
    return SessionError(
        400,
        "session.message_not_assistant",
        f"Message {message_id!r} is not an assistant message; only those can be edited.",
    )


def message_tool_incomplete(message_id: str) -> SessionError:
    return SessionError(
        400,
        "session.message_tool_incomplete",
        f"The new content of {message_id!r} has a tool part still streaming or running.",
    )


def message_incomplete(message_id: str) -> SessionError:
    return SessionError(
        409,
        "session.message_incomplete",
        f"Assistant message {message_id!r} is not completed yet.",
    )


def busy(session_id: str) -> SessionError:
    return SessionError(409, "session.busy", f"Session {session_id!r} is busy; try when idle.")


def message_not_user(message_id: str) -> SessionError:
    return SessionError(
        400,
        "session.message_not_user",
        f"Message {message_id!r} is not a user message; a revert goes back to one.",
    )


def nothing_to_unrevert(session_id: str) -> SessionError:
    return SessionError(
        409,
        "session.nothing_to_unrevert",
        f"Session {session_id!r} has no revert since its last prompt.",
    )


def prompt_not_queued(message_id: str) -> SessionError:
    """A cancel that came too late: the prompt already reached the model."""
    return SessionError(
        409,
        "session.prompt_delivered",
        "That prompt was already sent to the model, so it can no longer be cancelled "
        f"({message_id}).",
    )


INPUT_GONE = "session.input_gone"


def input_gone(session_id: str) -> SessionError:
    """A delivery whose waiting input was cancelled since the runner read it."""
    return SessionError(
        409, INPUT_GONE, f"Input of session {session_id!r} was cancelled meanwhile."
    )


class ProjectionError(Exception):
    """An event its projection cannot apply; the append is rolled back with it."""

    def __init__(self, error: SessionError) -> None:
        super().__init__(error.message)
        self.error = error
