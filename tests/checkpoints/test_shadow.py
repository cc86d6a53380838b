"""The shadow repository on real folders: snapshots, diffs and writing files back, with
the project's own .git left byte-identical."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from desktop.checkpoints import snapshot as snapshot_module
from desktop.checkpoints.diff import changed, with_patches
from desktop.checkpoints.revert import conflicts, write
from desktop.checkpoints.shadow import ShadowRepo
from desktop.checkpoints.snapshot import ignored, snapshot


def tree_sums(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under root (outside .git) with its checksum and mode."""
    out: dict[str, tuple[str, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            out[rel] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mode)
    return out


def git_dir_sums(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (root / ".git").rglob("*")
        if p.is_file()
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    (root / "keep.txt").write_text("keep\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def repo(tmp_path: Path, project: Path) -> ShadowRepo:
    return ShadowRepo(tmp_path / "data" / "checkpoints", str(project))


async def test_a_revert_writes_back_edits_creations_deletions_and_modes_byte_for_byte(
    project: Path, repo: ShadowRepo
) -> None:
    before_git = git_dir_sums(project)
    start_sums = tree_sums(project)
    start = await snapshot(repo)
    (project / "a.txt").write_text("one\nTWO\nthree\n")
    (project / "new" / "deep").mkdir(parents=True)
    (project / "new" / "deep" / "b.txt").write_text("b\n")
    (project / "keep.txt").chmod(0o755)
    (project / "blob.bin").write_bytes(bytes(range(256)) * 4)
    end = await snapshot(repo)
    files = {f.path: f for f in await changed(repo, start, end)}
    assert {p: f.status for p, f in files.items()} == {
        "a.txt": "modified",
        "new/deep/b.txt": "added",
        "keep.txt": "modified",
        "blob.bin": "added",
    }
    assert (files["a.txt"].additions, files["a.txt"].deletions) == (2, 1)
    patched = {f.path: f for f in await with_patches(repo, start, end, list(files.values()))}
    assert "+TWO" in (patched["a.txt"].patch or "")
    assert patched["blob.bin"].binary
    assert patched["blob.bin"].patch is None
    assert "new mode 100755" in (patched["keep.txt"].patch or "")
    await write(repo, dict.fromkeys(files, start))
    assert tree_sums(project) == start_sums
    assert not (project / "new").exists()  # the folders the file removal emptied go too
    assert git_dir_sums(project) == before_git


async def test_a_deleted_file_comes_back_and_a_changed_one_is_a_conflict(
    project: Path, repo: ShadowRepo
) -> None:
    start = await snapshot(repo)
    (project / "a.txt").unlink()
    (project / "keep.txt").write_text("agent\n")
    end = await snapshot(repo)
    (project / "keep.txt").write_text("the person's edit\n")
    now = await snapshot(repo)
    assert await conflicts(repo, now, {"a.txt": end, "keep.txt": end}) == ["keep.txt"]
    await write(repo, {"a.txt": start})
    assert (project / "a.txt").read_text() == "one\ntwo\n"
    assert (project / "keep.txt").read_text() == "the person's edit\n"


async def test_ignored_folders_and_files_over_the_size_limit_are_not_snapshotted(
    project: Path, repo: ShadowRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_module, "MAX_FILE_BYTES", 1000)
    (project / ".gitignore").write_text("build/\n")
    start = await snapshot(repo)
    (project / "build").mkdir()
    (project / "build" / "out.o").write_bytes(b"\0" * 10)
    (project / "huge.dat").write_bytes(b"x" * 2000)
    (project / "small.txt").write_text("s\n")
    end = await snapshot(repo)
    assert [f.path for f in await changed(repo, start, end)] == ["small.txt"]
    assert "build/" in await ignored(repo)


async def test_a_folder_that_is_not_a_git_repository_works_the_same(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "x.txt").write_text("x\n")
    repo = ShadowRepo(tmp_path / "data" / "checkpoints", str(plain))
    start = await snapshot(repo)
    (plain / "x.txt").write_text("y\n")
    end = await snapshot(repo)
    assert [(f.path, f.status) for f in await changed(repo, start, end)] == [("x.txt", "modified")]
    await write(repo, {"x.txt": start})
    assert (plain / "x.txt").read_text() == "x\n"
    assert not (plain / ".git").exists()


async def test_an_unchanged_folder_gives_the_same_snapshot(repo: ShadowRepo) -> None:
    assert await snapshot(repo) == await snapshot(repo)


async def test_a_folder_over_the_first_snapshots_limits_is_not_recorded(
    project: Path, repo: ShadowRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_module, "MAX_FIRST_FILES", 1)
    with pytest.raises(snapshot_module.TooLarge):
        await snapshot(repo)
    assert not (repo.git_dir / "index").exists()


def test_the_home_folder_the_root_and_the_temp_dir_are_never_recorded(tmp_path: Path) -> None:
    for shared in ("/", os.path.realpath(os.path.expanduser("~")), tempfile.gettempdir()):
        assert ShadowRepo(tmp_path, os.path.realpath(shared)).off
    assert not ShadowRepo(tmp_path, str(tmp_path)).off
