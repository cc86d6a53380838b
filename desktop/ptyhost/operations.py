"""The operation table of control connections: each op's name, its handler, and the answer
(`{"id", "ok", "result" | "error"}`) it sends back."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Protocol

from desktop.ptyhost.host import PtyHost
from desktop.ptyhost.jobs import Jobs
from desktop.ptyhost.protocol import PtyHostError
from desktop.ptyhost.spec import parse_create
from desktop.ptyhost.validation import (
    MAX_GROUP,
    MAX_TITLE,
    invalid,
    optional_str,
    parse_attachment_id,
    parse_size,
)
from desktop.values import strict_int

Params = dict[str, object]
Handler = Callable[[Params], object]
AsyncHandler = Callable[[Params], Awaitable[object]]


class Requester(Protocol):
    """The connection a request came on: answers go back on it, async work is its to cancel."""

    def send_json(self, message: dict[str, object]) -> None: ...
    def spawn(self, work: Awaitable[None]) -> None: ...
    def fail(self, error_type: str, message: str) -> None: ...


class Operations:
    """Every op a service may ask of the host (jobs.py has the `job_*` wire shapes)."""

    def __init__(self, host: PtyHost, jobs: Jobs) -> None:
        self.host = host
        self.sync: dict[str, Handler] = {
            "ping": self.ping,
            "list": self.list_terminals,
            "get": self.get,
            "create": self.create,
            "update": self.update,
            "delete": self.delete,
            "job_start": jobs.start,
            "job_get": jobs.get,
            "job_list": jobs.list_jobs,
            "job_output": jobs.output,
            "job_kill": jobs.kill,
            "job_collect": jobs.collect,
            "job_remove": jobs.remove,
        }
        self.asynchronous: dict[str, AsyncHandler] = {
            "snapshot": self.snapshot,
            "shutdown": self.shutdown,
            "job_wait": jobs.wait,
        }

    # ----- dispatch ---------------------------------------------------------------------

    def handle(self, requester: Requester, message: Params) -> None:
        """Answer one request; a request without an integer `id` is a protocol violation."""
        request_id = message.get("id")
        op = message.get("op")
        if not strict_int(request_id):
            requester.fail("protocol.invalid_request", "A request needs an integer `id`.")
            return
        name = op if isinstance(op, str) else ""
        sync = self.sync.get(name)
        if sync is not None:
            try:
                result = sync(message)
            except PtyHostError as exc:
                requester.send_json(failed(request_id, exc))
            else:
                requester.send_json(answered(request_id, result))
            return
        work = self.asynchronous.get(name)
        if work is None:
            requester.send_json(failed(request_id, invalid(f"Unknown operation {op!r}.")))
            return
        requester.spawn(_answer(requester, request_id, work(message)))

    # ----- terminals --------------------------------------------------------------------

    def ping(self, params: Params) -> object:
        host = self.host
        return {"epoch": host.epoch, "pid": host.pid, "terminals": len(host.terminals)}

    def list_terminals(self, params: Params) -> object:
        group = optional_str(params, "group", MAX_GROUP)
        return [
            terminal.info()
            for terminal in self.host.terminals.values()
            if group is None or terminal.group == group
        ]

    def get(self, params: Params) -> object:
        return self.host.terminal(params).info()

    def create(self, params: Params) -> object:
        spec = parse_create(params)
        return self.host.spawn_terminal(self.host.new_terminal_id(), spec).info()

    def update(self, params: Params) -> object:
        terminal = self.host.terminal(params)
        attachment_id = parse_attachment_id(params.get("attachment_id"))
        size = parse_size(params["size"]) if params.get("size") is not None else None
        title_given = "title" in params
        title = optional_str(params, "title", MAX_TITLE)
        if size is not None:
            controller = terminal.controller
            if attachment_id is not None and (
                controller is None or controller.attachment_id != attachment_id
            ):
                raise PtyHostError(
                    "pty.not_controller",
                    f"Attachment {attachment_id} is not this terminal's controller.",
                    409,
                )
        if title_given:
            terminal.set_user_title(title)
        if size is not None:
            terminal.resize(*size)
        return terminal.info()

    def delete(self, params: Params) -> object:
        self.host.remove_terminal(self.host.terminal(params))
        return None

    async def snapshot(self, params: Params) -> object:
        terminal = self.host.terminal(params)
        snapshot = await terminal.snapshot()
        checkpoint = snapshot.pop("checkpoint")
        assert isinstance(checkpoint, bytes)
        snapshot["checkpoint"] = base64.b64encode(checkpoint).decode("ascii")
        snapshot["info"] = terminal.info()
        return snapshot

    async def shutdown(self, params: Params) -> object:
        save = params.get("save", True)
        if not isinstance(save, bool):
            raise invalid("`save` must be a boolean.")
        saved = await self.host.save_terminals() if save else 0
        self.host.stop(save=False)
        return {"saved": saved}


def answered(request_id: int, result: object) -> dict[str, object]:
    return {"id": request_id, "ok": True, "result": result}


def failed(request_id: int, error: PtyHostError) -> dict[str, object]:
    return {"id": request_id, "ok": False, "error": error.to_json()}


async def _answer(requester: Requester, request_id: int, work: Awaitable[object]) -> None:
    try:
        result = await work
    except PtyHostError as exc:
        requester.send_json(failed(request_id, exc))
    else:
        requester.send_json(answered(request_id, result))
