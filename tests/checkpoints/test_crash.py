"""A kill -9 of the service in the middle of a revert of many files: the successor finishes
it, so the tree is wholly the reverted one and the conversation says so (never a mix)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from desktop.config import Settings
from tests.support.checkpoints import git_dir_sums, start, tree_sums
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.host import stop_host
from tests.support.runner import DEADLINE, configure
from tests.support.wait import wait_for

FILES = 4000
# The successor finishes the revert before it serves: writing 4,000 files back took git 17 s
# on two cores at a load average of 10, so the usual 30 s for a start is too little there.
SUCCESSOR_READY = 120.0


@pytest.fixture
async def fake(settings: Settings) -> AsyncIterator[FakeProvider]:
    async with FakeProvider() as provider:
        configure(settings, provider.base_url)
        yield provider
    await stop_host(settings)


def many_files(root: Path) -> Path:
    (root / "d").mkdir(parents=True)
    for i in range(FILES):
        (root / "d" / f"f{i:04d}.txt").write_text(f"file {i}\n" * 200)
    return root


def read(path: Path) -> bytes | None:
    """The file's bytes, or None while it is missing (git replaces a file by a new one)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def restored_count(root: Path, start: dict[str, tuple[str, int]]) -> int:
    count = 0
    for i in range(FILES):
        rel = f"d/f{i:04d}.txt"
        raw = read(root / rel)
        count += raw is not None and hashlib.sha256(raw).hexdigest() == start[rel][0]
    return count


@pytest.mark.soak  # 4,000 files reverted around a kill -9: the slowest test outside the browser
@pytest.mark.timeout(300)  # 45 s alone, over 100 s on a loaded machine
async def test_a_kill_mid_revert_of_many_files_ends_with_the_whole_revert_after_restart(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    project = many_files(tmp_path / "project")
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    git_before = git_dir_sums(project)
    start_sums = tree_sums(project)
    fake.script(
        tool_call_reply(Call("c1", "shell", {"command": "sed -i 's/file/FILE/' d/*.txt"})),
        text_reply("changed them all"),
    )
    service = await start(tmp_path / "service.log")
    sid = (await service.post("/api/session", {"directory": str(project)}))["id"]
    mid = await service.turn(sid, "change every file")
    assert restored_count(project, start_sums) == 0
    first = project / "d" / "f0000.txt"
    revert = asyncio.create_task(
        service.call("POST", f"/api/session/{sid}/revert", {"message_id": mid})
    )

    def first_restored() -> bool:
        raw = read(first)  # missing or part-written while git replaces it: not restored yet
        return raw is not None and hashlib.sha256(raw).hexdigest() == start_sums["d/f0000.txt"][0]

    async def one_restored() -> bool:
        if await asyncio.to_thread(first_restored):
            return True
        assert not revert.done(), "the revert ended before the test saw a file restored"
        return False

    await wait_for(one_restored, DEADLINE, "a file restored by the revert", interval=0.001)
    await service.kill()
    partial = await asyncio.to_thread(restored_count, project, start_sums)
    revert.cancel()
    await asyncio.gather(revert, return_exceptions=True)
    assert 0 < partial < FILES, f"the kill landed outside the revert ({partial} restored)"

    successor = await start(tmp_path / "service.log", SUCCESSOR_READY)
    try:
        assert tree_sums(project) == start_sums
        events = await successor.get(f"/api/session/{sid}/log")
        assert [e["type"] for e in events].count("session.reverted") == 1
        assert all(m.get("reverted") for m in await successor.messages(sid))
        back = await successor.post(f"/api/session/{sid}/unrevert")
        assert len(back["restored"]) == FILES
        assert restored_count(project, start_sums) == 0
        assert git_dir_sums(project) == git_before
    finally:
        await successor.kill()
