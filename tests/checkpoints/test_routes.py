"""The checkpoint routes in process (real app, SQLite, git, the strict fake provider):
conflicts and `force`, every error of the contract changing nothing, busy refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from desktop.checkpoints import snapshot as snapshot_module
from tests.support.app import TOKEN
from tests.support.checkpoints import git_dir_sums, make_project, tree_sums
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.runner import log, messages, new_session, prompt, until_idle
from tests.support.wait import wait_for

AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def turn(client: TestClient, sid: str, text: str) -> str:
    ended = sum(e["type"] == "session.step.ended" for e in await log(client, AUTH, sid))
    mid = await prompt(client, AUTH, sid, text)

    async def done() -> bool:
        events = await log(client, AUTH, sid)
        more = sum(e["type"] == "session.step.ended" for e in events) > ended
        return more and str((await until_idle(client, AUTH, sid))["status"]) != "busy"

    await wait_for(done, what="the turn's end")
    return mid


async def call(client: TestClient, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    response = await client.request(method, path, json=body, headers=AUTH)
    return response.status, await response.json()


async def edited_project(
    client: TestClient, fake: FakeProvider, tmp_path: Path
) -> tuple[Path, str, str]:
    project = make_project(tmp_path / "project")
    fake.script(
        tool_call_reply(
            Call("c1", "edit", {"path": "a.txt", "old": "beta", "new": "BETA"}),
            Call("c2", "write", {"path": "b.txt", "content": "new\n"}),
            Call("c3", "shell", {"command": "chmod -x run.sh && printf '\\001\\002' > logo.bin"}),
        ),
        text_reply("done"),
    )
    sid = await new_session(client, AUTH, str(project))
    mid = await turn(client, sid, "change things")
    return project, sid, mid


async def test_a_file_the_person_edited_is_a_conflict_left_alone_until_forced(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    project, sid, mid = await edited_project(agent, fake, tmp_path)
    (project / "b.txt").write_text("the person's own words\n")
    status, preview = await call(
        agent, "POST", f"/api/session/{sid}/revert", {"message_id": mid, "preview": True}
    )
    assert status == 200
    assert preview["data"]["conflicts"] == ["b.txt"]
    assert (project / "a.txt").read_text() == "alpha\nBETA\ngamma\n"  # a preview writes nothing
    status, body = await call(agent, "POST", f"/api/session/{sid}/revert", {"message_id": mid})
    assert status == 200
    assert body["data"]["conflicts"] == ["b.txt"]
    assert sorted(body["data"]["restored"]) == ["a.txt", "logo.bin", "run.sh"]
    assert (project / "a.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert (project / "run.sh").stat().st_mode & 0o111  # the mode came back
    assert (project / "logo.bin").read_bytes() == bytes(range(256))
    assert (project / "b.txt").read_text() == "the person's own words\n"
    await call(agent, "POST", f"/api/session/{sid}/unrevert")
    status, body = await call(
        agent, "POST", f"/api/session/{sid}/revert", {"message_id": mid, "force": True}
    )
    assert body["data"]["conflicts"] == []
    assert not (project / "b.txt").exists()


async def test_the_changes_of_a_turn_list_a_mode_change_and_a_binary_file_without_a_patch(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    _, sid, mid = await edited_project(agent, fake, tmp_path)
    status, body = await call(agent, "GET", f"/api/session/{sid}/changes?message_id={mid}")
    assert status == 200
    files = {f["path"]: f for f in body["data"]["files"]}
    assert files["logo.bin"]["patch"] is None
    assert "old mode 100755" in files["run.sh"]["patch"]
    assert files["b.txt"]["status"] == "added"
    answers = [m for m in await messages(agent, AUTH, sid) if m.get("checkpoint")]
    assert {f["path"] for f in answers[0]["checkpoint"]["files"]} == set(files)


async def test_every_error_of_the_contract_changes_nothing(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    project, sid, mid = await edited_project(agent, fake, tmp_path)
    answer = next(m["id"] for m in await messages(agent, AUTH, sid) if m["type"] == "assistant")
    files, git_files = tree_sums(project), git_dir_sums(project)
    before = await log(agent, AUTH, sid)
    sessions = (await call(agent, "GET", "/api/session"))[1]["data"]
    cases: list[tuple[str, str, Any, int, str]] = [
        ("POST", "/api/session/ses_nope/revert", {"message_id": mid}, 404, "session.not_found"),
        ("POST", f"/api/session/{sid}/revert", {"message_id": "msg_nope"}, 404,
         "session.message_not_found"),
        ("POST", f"/api/session/{sid}/revert", {"message_id": "bad id!"}, 404,
         "session.message_not_found"),
        ("POST", f"/api/session/{sid}/revert", {"message_id": answer}, 400,
         "session.message_not_user"),
        ("POST", f"/api/session/{sid}/revert", {}, 400, "request.invalid"),
        ("POST", f"/api/session/{sid}/revert", {"message_id": 5}, 400, "request.invalid"),
        ("POST", f"/api/session/{sid}/revert", {"message_id": mid, "force": "yes"}, 400,
         "request.invalid"),
        ("POST", f"/api/session/{sid}/revert", {"message_id": mid, "extra": 1}, 400,
         "request.invalid"),
        ("POST", f"/api/session/{sid}/revert", [1], 400, "request.invalid"),
        ("POST", f"/api/session/{sid}/unrevert", {}, 409, "session.nothing_to_unrevert"),
        ("POST", f"/api/session/{sid}/unrevert", {"x": 1}, 400, "request.invalid"),
        ("POST", "/api/session/ses_nope/unrevert", {}, 404, "session.not_found"),
        ("POST", f"/api/session/{sid}/fork", {"message_id": "msg_nope"}, 404,
         "session.message_not_found"),
        ("POST", f"/api/session/{sid}/fork", {"message_id": 7}, 400, "request.invalid"),
        ("POST", "/api/session/ses_nope/fork", {}, 404, "session.not_found"),
        ("GET", "/api/session/ses_nope/changes", None, 404, "session.not_found"),
        ("GET", f"/api/session/{sid}/changes?message_id=msg_nope", None, 404,
         "session.message_not_found"),
        ("GET", f"/api/session/{sid}/changes?other=1", None, 400, "request.invalid"),
    ]  # fmt: skip
    for method, path, body, status, kind in cases:
        got, answer_body = await call(agent, method, path, body)
        assert (got, answer_body["error"]["type"]) == (status, kind), (method, path, body)
    assert tree_sums(project) == files
    assert git_dir_sums(project) == git_files
    assert await log(agent, AUTH, sid) == before
    assert (await call(agent, "GET", "/api/session"))[1]["data"] == sessions


async def test_revert_fork_and_unrevert_refuse_while_a_turn_runs(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    project, sid, mid = await edited_project(agent, fake, tmp_path)
    go = tmp_path / "go"
    fake.script(
        tool_call_reply(
            Call("w", "shell", {"command": f"while [ ! -e {go} ]; do sleep 0.05; done"})
        ),
        text_reply("waited"),
    )
    await prompt(agent, AUTH, sid, "wait")

    await wait_for(
        lambda: _busy(agent, sid), what="the waiting turn"
    )  # the shell call holds the turn
    files = tree_sums(project)
    for path, body in (
        (f"/api/session/{sid}/revert", {"message_id": mid}),
        (f"/api/session/{sid}/fork", {}),
        (f"/api/session/{sid}/unrevert", {}),
    ):
        status, answer = await call(agent, "POST", path, body)
        assert (status, answer["error"]["type"]) == (409, "session.busy")
    assert tree_sums(project) == files
    go.touch()
    await until_idle(agent, AUTH, sid)


async def _busy(client: TestClient, sid: str) -> bool:
    events = await log(client, AUTH, sid)
    called = any(
        e["data"].get("call_id") == "w" for e in events if e["type"] == "session.tool.called"
    )
    return (
        called and (await call(client, "GET", f"/api/session/{sid}"))[1]["data"]["status"] == "busy"
    )


async def test_a_fork_copies_the_history_up_to_the_message_into_a_new_session(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    project, sid, mid = await edited_project(agent, fake, tmp_path)
    files = tree_sums(project)
    status, body = await call(agent, "POST", f"/api/session/{sid}/fork", {"message_id": mid})
    assert status == 201
    fork = body["data"]
    assert fork["forked_from"] == {"session_id": sid, "message_id": mid}
    copied = await messages(agent, AUTH, fork["id"])
    assert [(m["type"], m["text"]) for m in copied] == [("user", "change things")]
    assert copied[0]["id"] != mid
    status, whole = await call(agent, "POST", f"/api/session/{sid}/fork", {})
    assert len(await messages(agent, AUTH, whole["data"]["id"])) == len(
        await messages(agent, AUTH, sid)
    )
    assert tree_sums(project) == files


async def test_a_folder_too_large_to_record_runs_its_turn_and_a_revert_only_hides_messages(
    agent: TestClient, fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_module, "MAX_FIRST_FILES", 2)
    project, sid, mid = await edited_project(agent, fake, tmp_path)
    assert not [m for m in await messages(agent, AUTH, sid) if m.get("checkpoint")]
    status, body = await call(agent, "POST", f"/api/session/{sid}/revert", {"message_id": mid})
    assert status == 200
    assert (body["data"]["restored"], body["data"]["conflicts"]) == ([], [])
    assert (project / "b.txt").exists()  # nothing was recorded, so nothing is written back
    assert all(m.get("reverted") for m in await messages(agent, AUTH, sid))


async def test_what_a_tool_changed_before_an_interrupt_is_recorded_and_reverted(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "project")
    go = tmp_path / "go"
    command = f"echo changed > a.txt; while [ ! -e {go} ]; do sleep 0.05; done"
    fake.script(tool_call_reply(Call("w", "shell", {"command": command})), text_reply("never"))
    sid = await new_session(agent, AUTH, str(project))
    mid = await prompt(agent, AUTH, sid, "change and wait")
    await wait_for(lambda: _busy(agent, sid), what="the waiting shell call")
    await wait_for(
        lambda: (project / "a.txt").read_text() == "changed\n", what="the command's change"
    )
    _, body = await call(agent, "POST", f"/api/session/{sid}/interrupt", {})
    assert body["data"]["interrupted"] is True
    await until_idle(agent, AUTH, sid)
    _, changes = await call(agent, "GET", f"/api/session/{sid}/changes?message_id={mid}")
    assert [f["path"] for f in changes["data"]["files"]] == ["a.txt"]
    await call(agent, "POST", f"/api/session/{sid}/revert", {"message_id": mid})
    assert (project / "a.txt").read_text() == "alpha\nbeta\ngamma\n"


async def test_a_session_whose_folder_is_gone_answers_409_and_changes_nothing(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    project, sid, mid = await edited_project(agent, fake, tmp_path)
    moved = tmp_path / "moved"
    project.rename(moved)
    before = await log(agent, AUTH, sid)
    for method, path, body in (
        ("POST", f"/api/session/{sid}/revert", {"message_id": mid}),
        ("GET", f"/api/session/{sid}/changes?message_id={mid}", None),
    ):
        status, answer = await call(agent, method, path, body)
        assert (status, answer["error"]["type"]) == (409, "checkpoint.unavailable")
    assert await log(agent, AUTH, sid) == before
    assert (moved / "b.txt").exists()
