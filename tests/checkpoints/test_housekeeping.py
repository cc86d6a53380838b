"""Housekeeping of the shadow repositories on real git repositories: a repack keeps every
kept snapshot restorable byte for byte, retention prunes exactly the turns before the last
ones (their revert and diff refused as expired), and a deleted session's repository goes,
at once or, after a kill -9 between the deletion and its cleanup, at the next start."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

import desktop.checkpoints.housekeeping as housekeeping
from desktop.checkpoints import history
from desktop.checkpoints.housekeeping import GONE, Retention, held, keep, repack
from desktop.checkpoints.revert import write
from desktop.checkpoints.shadow import ShadowRepo, repo_name
from desktop.checkpoints.snapshot import snapshot
from desktop.config import Settings
from tests.support.app import TOKEN
from tests.support.checkpoints import make_project, start, tree_sums
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.host import stop_host
from tests.support.runner import configure, messages, new_session, prompt, until_idle
from tests.support.runner import log as event_log
from tests.support.wait import wait_for

AUTH = {"Authorization": f"Bearer {TOKEN}"}
EAGER = Retention(turns=2, interval=0.0, grace="now", loose=1)


def git(repo: ShadowRepo, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], env=repo.env, cwd=repo.directory, capture_output=True)


def exists(repo: ShadowRepo, tree: str) -> bool:
    return git(repo, "cat-file", "-e", tree).returncode == 0


def counts(repo: ShadowRepo) -> dict[str, int]:
    out = git(repo, "count-objects", "-v").stdout.decode()
    pairs = (line.split(": ") for line in out.splitlines())
    return {k: int(v) for k, v in pairs if k in ("count", "packs")}


async def restored(repo: ShadowRepo, tree: str, paths: set[str]) -> dict[str, tuple[str, int]]:
    """The directory's files once every path ever recorded is written as `tree` has it."""
    await write(repo, dict.fromkeys(paths, tree))
    return tree_sums(Path(repo.directory))


async def test_a_repack_keeps_every_kept_checkpoint_restorable_and_drops_the_rest(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "project")
    repo = ShadowRepo(tmp_path / "data" / "checkpoints", str(project))
    trees = [await snapshot(repo)]
    for i in range(30):
        (project / f"f{i % 7}.txt").write_text(f"turn {i}\n" * (i + 1))
        (project / "a.txt").write_text(f"alpha {i}\n")
        trees.append(await snapshot(repo))
    paths = {p for p in tree_sums(project)} | {f"f{i}.txt" for i in range(7)}
    kept, dropped = trees[-10:], trees[:-10]
    before = {t: await restored(repo, t, paths) for t in kept}
    assert counts(repo)["count"] > 60  # loose objects, none packed

    assert await keep(repo, kept) is False  # nothing was kept before: nothing lost
    assert await held(repo) == set(kept)
    await repack(repo, "now")

    assert counts(repo) == {"count": 0, "packs": 1}
    assert {t: await restored(repo, t, paths) for t in kept} == before
    assert not any(exists(repo, t) for t in dropped)
    assert await keep(repo, kept[5:]) is True  # five trees kept no more: a repack is due


def test_retention_keeps_the_last_turns_and_refuses_only_reverts_that_need_older_steps() -> None:
    def step(mid: str, start: str, end: str, **extra: Any) -> dict[str, Any]:
        mark = {"start": start, "end": end, "files": []}
        return {"id": mid, "type": "assistant", "checkpoint": mark, **extra}

    messages = [
        {"id": "u1", "type": "user"},
        step("a1", "t0", "t1"),
        {"id": "u2", "type": "user"},
        step("a2", "t1", "t2", reverted=True),
        {"id": "u3", "type": "user"},
        step("a3", "t2", "t3"),
        {"id": "u4", "type": "user"},
        step("a4", "t3", "t4"),
    ]
    assert history.kept_from(messages, 2) == 4
    assert history.kept_trees(messages, 2) == {"t2", "t3", "t4"}
    assert history.kept_trees(messages, 9) == {f"t{i}" for i in range(5)}
    assert history.expired(messages, 0, 2)  # needs a1's step
    assert not history.expired(messages, 2, 2)  # a2 is reverted: not needed
    assert not history.expired(messages, 4, 2)


# Through the service ------------------------------------------------------------------


async def turn(client: TestClient, sid: str, text: str) -> str:
    ended = sum(e["type"] == "session.step.ended" for e in await event_log(client, AUTH, sid))
    mid = await prompt(client, AUTH, sid, text)

    async def done() -> bool:
        events = await event_log(client, AUTH, sid)
        more = sum(e["type"] == "session.step.ended" for e in events) > ended
        return more and str((await until_idle(client, AUTH, sid))["status"]) != "busy"

    await wait_for(done, what="the turn's end")
    return mid


def writes(name: str, content: str) -> list[Any]:
    return [
        tool_call_reply(Call(name, "write", {"path": name, "content": content})),
        text_reply("ok"),
    ]


async def steps(client: TestClient, sid: str) -> list[history.Step]:
    found = (history.step_of(m) for m in await messages(client, AUTH, sid))
    return [s for s in found if s is not None]


@pytest.fixture
def eager(monkeypatch: pytest.MonkeyPatch) -> Retention:
    """Retention of two turns, housekeeping after every turn, unreferenced objects pruned
    at once."""
    monkeypatch.setattr(housekeeping, "RETENTION", EAGER)
    return EAGER


async def test_after_a_turn_retention_prunes_exactly_the_older_turns_and_refuses_their_revert(
    eager: Retention, agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "project")
    repo = ShadowRepo(tmp_path / "data" / "checkpoints", str(project))
    fake.script(*writes("one.txt", "1\n"), *writes("two.txt", "2\n"), *writes("three.txt", "3\n"))
    sid = await new_session(agent, AUTH, str(project))
    first = await turn(agent, sid, "one")
    second = await turn(agent, sid, "two")
    before_second = {k: v for k, v in tree_sums(project).items() if k != "two.txt"}
    await turn(agent, sid, "three")
    s1, s2, s3 = await steps(agent, sid)
    kept = {s2.start, s2.end, s3.start, s3.end}

    async def pruned() -> bool:
        return not exists(repo, s1.start) and await held(repo) == kept

    await wait_for(pruned, what="the first turn's snapshot pruned after the third turn")
    assert all(exists(repo, t) for t in kept)

    response = await agent.post(
        f"/api/session/{sid}/revert", json={"message_id": first}, headers=AUTH
    )
    assert (response.status, (await response.json())["error"]["type"]) == (
        409,
        "checkpoint.expired",
    )
    response = await agent.get(f"/api/session/{sid}/changes?message_id={first}", headers=AUTH)
    assert response.status == 409
    assert (project / "one.txt").exists()

    response = await agent.post(
        f"/api/session/{sid}/revert", json={"message_id": second}, headers=AUTH
    )
    assert response.status == 200, await response.text()
    assert tree_sums(project) == before_second


async def test_deleting_a_session_removes_its_repository_and_prunes_a_shared_ones_snapshots(
    eager: Retention, agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    alone = make_project(tmp_path / "alone")
    shared = make_project(tmp_path / "shared")
    root = tmp_path / "data" / "checkpoints"
    fake.script(*writes("x.txt", "x\n"), *writes("y.txt", "y\n"))
    sid_alone = await new_session(agent, AUTH, str(alone))
    sid_shared = await new_session(agent, AUTH, str(shared))
    other = await new_session(agent, AUTH, str(shared))
    await turn(agent, sid_alone, "x")
    await turn(agent, sid_shared, "y")
    (step,) = await steps(agent, sid_shared)
    shared_repo = ShadowRepo(root, str(shared))
    assert (root / repo_name(str(alone)) / "HEAD").exists()
    assert exists(shared_repo, step.start)

    assert (await agent.delete(f"/api/session/{sid_alone}", headers=AUTH)).status == 204
    assert not (root / repo_name(str(alone))).exists()

    assert (await agent.delete(f"/api/session/{sid_shared}", headers=AUTH)).status == 204
    assert (root / repo_name(str(shared)) / "HEAD").exists()  # `other` still works there

    async def gone() -> bool:
        return not exists(shared_repo, step.start) and not await held(shared_repo)

    await wait_for(gone, what="the deleted session's snapshots pruned")
    assert (await agent.get(f"/api/session/{other}", headers=AUTH)).status == 200


@pytest.fixture
async def served(settings: Settings) -> Any:
    async with FakeProvider() as provider:
        configure(settings, provider.base_url)
        yield provider
    await stop_host(settings)


@pytest.mark.restart
async def test_a_kill_between_a_deletion_and_its_cleanup_is_cleaned_at_the_next_start(
    settings: Settings, served: FakeProvider, tmp_path: Path
) -> None:
    """The deletion is committed and the repository still there (as a kill -9 right after the
    commit leaves it: the test puts back a copy taken before the cleanup ran), beside a
    repository half removed by a kill during its removal."""
    deleted, kept = make_project(tmp_path / "deleted"), make_project(tmp_path / "kept")
    root = settings.data_dir / "checkpoints"
    served.script(*writes("a.txt", "A\n"), *writes("b.txt", "B\n"))
    service = await start(tmp_path / "service.log")
    try:
        doomed = (await service.post("/api/session", {"directory": str(deleted)}))["id"]
        alive = (await service.post("/api/session", {"directory": str(kept)}))["id"]
        await service.turn(doomed, "a")
        await service.turn(alive, "b")
        repo, kept_repo = root / repo_name(str(deleted)), root / repo_name(str(kept))
        copy = tmp_path / "copy"
        await asyncio.to_thread(shutil.copytree, repo, copy, symlinks=True)
        async with (
            aiohttp.ClientSession(headers=service.headers) as http,
            http.delete(f"{service.url}/api/session/{doomed}") as response,
        ):
            assert response.status == 204
        assert not repo.exists()
    finally:
        await service.kill()
    await asyncio.to_thread(shutil.copytree, copy, repo, symlinks=True)
    half = root / (repo_name(str(tmp_path / "elsewhere")) + GONE)
    await asyncio.to_thread(shutil.copytree, copy / "objects", half / "objects")

    successor = await start(tmp_path / "service.log")
    try:
        assert not repo.exists()
        assert not half.exists()
        assert (kept_repo / "HEAD").exists()
        assert (await successor.get(f"/api/session/{alive}"))["id"] == alive
        assert len([m for m in await successor.messages(alive) if m.get("checkpoint")]) == 1
    finally:
        await successor.kill()
