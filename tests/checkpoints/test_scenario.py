"""The contract's scenario over HTTP against real `desk serve` processes: two turns change
files (an edit, a new file, a deletion, a shell command), each turn's changes are listed,
the turns are reverted (the first after a kill -9), unreverted, reverted again; the model
never sees reverted messages, a fork's model only its part, and the project's .git never
changes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from desktop.config import Settings
from tests.support.checkpoints import git_dir_sums, make_project, start, tree_sums
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.host import stop_host
from tests.support.runner import DEADLINE, configure
from tests.support.wait import wait_for

pytestmark = pytest.mark.restart


@pytest.fixture
async def fake(settings: Settings) -> AsyncIterator[FakeProvider]:
    async with FakeProvider() as provider:
        configure(settings, provider.base_url)
        yield provider
    await stop_host(settings)


def user_texts(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [m["content"] for m in messages if m["role"] == "user"]


async def test_two_turns_are_listed_reverted_across_a_kill_unreverted_and_forked(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "project")
    git_before = git_dir_sums(project)
    start_sums = tree_sums(project)
    fake.script(
        tool_call_reply(
            Call("c1", "edit", {"path": "a.txt", "old": "beta", "new": "BETA"}),
            Call("c2", "write", {"path": "src/new.txt", "content": "brand new\n"}),
        ),
        text_reply("first done"),
        tool_call_reply(
            Call("c3", "shell", {"command": "rm gone.txt && printf 'delta\\n' >> a.txt"}),
            Call("c4", "shell", {"command": "mkdir -p build && echo obj > build/out.o"}),
        ),
        text_reply("second done"),
    )
    service = await start(tmp_path / "service.log")
    try:
        sid = (await service.post("/api/session", {"directory": str(project)}))["id"]
        first = await service.turn(sid, "first")
        after_first = tree_sums(project)
        second = await service.turn(sid, "second")
        after_second = tree_sums(project)
        assert (project / "build" / "out.o").exists()

        one = await service.get(f"/api/session/{sid}/changes?message_id={first}")
        assert {(f["path"], f["status"]) for f in one["files"]} == {
            ("a.txt", "modified"),
            ("src/new.txt", "added"),
        }
        edit = next(f for f in one["files"] if f["path"] == "a.txt")
        assert (edit["additions"], edit["deletions"]) == (1, 1)
        assert "-beta\n+BETA" in edit["patch"]
        two = await service.get(f"/api/session/{sid}/changes?message_id={second}")
        assert {(f["path"], f["status"]) for f in two["files"]} == {
            ("a.txt", "modified"),
            ("gone.txt", "deleted"),
        }
        whole = await service.get(f"/api/session/{sid}/changes")
        assert {f["path"] for f in whole["files"]} == {"a.txt", "src/new.txt", "gone.txt"}

        reverted = await service.post(f"/api/session/{sid}/revert", {"message_id": second})
        assert sorted(reverted["restored"]) == ["a.txt", "gone.txt"]
        assert reverted["conflicts"] == []
        assert "build/" in reverted["ignored"]  # the .gitignore'd folder: not restored
        assert tree_sums(project) == after_first
        assert (project / "build" / "out.o").exists()
        marked = {m["id"]: m.get("reverted", False) for m in await service.messages(sid)}
        assert marked[first] is False
        assert marked[second] is True
    finally:
        await service.kill()

    service = await start(tmp_path / "service.log")
    try:
        await service.post(f"/api/session/{sid}/revert", {"message_id": first})
        assert tree_sums(project) == start_sums
        assert all(m.get("reverted") for m in await service.messages(sid))

        back = await service.post(f"/api/session/{sid}/unrevert")
        assert sorted(back["restored"]) == ["a.txt", "gone.txt", "src/new.txt"]
        assert tree_sums(project) == after_second
        assert not any(m.get("reverted") for m in await service.messages(sid))
        nothing = await service.call("POST", f"/api/session/{sid}/unrevert", {})
        assert (nothing.status, nothing.error) == (409, "session.nothing_to_unrevert")

        await service.post(f"/api/session/{sid}/revert", {"message_id": second})
        assert tree_sums(project) == after_first
        fake.script(text_reply("third done"))
        await service.turn(sid, "third")
        assert user_texts(fake.requests[-1].body) == ["first", "third"]
        final = await service.call("POST", f"/api/session/{sid}/unrevert", {})
        assert final.error == "session.nothing_to_unrevert"  # the prompt made it final

        answer = next(
            m["id"]
            for m in await service.messages(sid)
            if m["type"] == "assistant" and m["content"] == [{"type": "text", "text": "first done"}]
        )
        forked = await service.post(f"/api/session/{sid}/fork", {"message_id": answer})
        assert forked["forked_from"] == {"session_id": sid, "message_id": answer}
        assert forked["directory"] == str(project)
        assert len(await service.messages(forked["id"])) == 3
        fake.script(text_reply("fork done"))
        await service.turn(forked["id"], "in the fork")
        assert user_texts(fake.requests[-1].body) == ["first", "in the fork"]
        assert tree_sums(project) == after_first  # a fork leaves the files alone
        assert fake.invalid_count == 0
        assert git_dir_sums(project) == git_before
    finally:
        await service.kill()


async def test_what_a_shell_call_changed_across_a_kill_is_recorded_by_the_successor(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "project")
    start_sums = tree_sums(project)
    go = tmp_path / "go"
    command = f"echo first > a.txt; while [ ! -e {go} ]; do sleep 0.05; done; echo new > c.txt"
    fake.script(tool_call_reply(Call("sh", "shell", {"command": command})), text_reply("done"))
    service = await start(tmp_path / "service.log")
    sid = (await service.post("/api/session", {"directory": str(project)}))["id"]
    mid = (await service.post(f"/api/session/{sid}/prompt", {"text": "run"}))["message_id"]
    await wait_for(
        lambda: (project / "a.txt").read_text() == "first\n", DEADLINE, "the command ran", 0.02
    )
    await service.kill()
    successor = await start(tmp_path / "service.log")
    try:
        go.touch()

        async def both_steps_ended() -> bool:
            return await successor.ended(sid) >= 2

        await wait_for(both_steps_ended, DEADLINE, "the turn ended (both its steps)", 0.05)
        await successor.idle(sid)
        changes = await successor.get(f"/api/session/{sid}/changes?message_id={mid}")
        assert sorted(f["path"] for f in changes["files"]) == ["a.txt", "c.txt"]
        await successor.post(f"/api/session/{sid}/revert", {"message_id": mid})
        assert tree_sums(project) == start_sums
    finally:
        await successor.kill()
