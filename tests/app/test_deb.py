"""The .deb made from the bundle (scripts/build_deb.py) installs with apt, puts Desk in the
application menu, opens the window from its entry, keeps a running Desk's terminal and agent
command across a reinstall, and leaves the data dir when removed.

Root on Debian only: the tests install the package system-wide and purge it at the end.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from configparser import ConfigParser
from pathlib import Path
from typing import Any

import pytest

import desktop
from desktop.app.desktop_entry import WM_CLASS
from tests.support.bundle import bundle_env
from tests.support.desk import PROJECT, Desk, api_call, create_terminal
from tests.support.fake_provider import Call, text_reply, tool_call_reply
from tests.support.fake_provider_thread import threaded_fake_provider
from tests.support.wait import wait_until
from tests.support.xvfb import start_xvfb, stop_xvfb

pytestmark = [
    pytest.mark.package,
    pytest.mark.timeout(900),
]


@pytest.fixture(autouse=True, scope="module")
def _root_on_debian() -> None:
    """These tests install a Debian package: they fail, never skip, elsewhere."""
    assert os.geteuid() == 0, "test_deb.py installs a .deb: run make test as root on Debian"
    assert shutil.which("apt-get"), "test_deb.py installs a .deb with apt-get (Debian)"


ENTRY = Path("/usr/share/applications/desk.desktop")
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


@pytest.fixture(scope="module")
def deb(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("deb")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(PROJECT / "scripts" / "build_deb.py"), str(bundle), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    print(f"\ndeb: built in {time.monotonic() - started:.1f}s, {path.stat().st_size >> 20} MiB")
    return path


def apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        ["apt-get", "-y", "-q", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def install(deb: Path, *, again: bool = False) -> None:
    options = ["--reinstall"] if again else []
    done = apt_get("install", "--no-install-recommends", *options, str(deb))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def installed(deb: Path) -> Iterator[Path]:
    started = time.monotonic()
    install(deb)
    print(f"\ndeb: installed in {time.monotonic() - started:.1f}s")
    try:
        yield deb
    finally:
        subprocess.run(["dpkg", "--purge", "desk"], capture_output=True, check=False)


def installed_env(desk: Desk) -> dict[str, str]:
    """The private dirs' environment with only the system's PATH (so `desk` is /usr/bin/desk)."""
    return {**bundle_env(desk), "PATH": SYSTEM_PATH}


def installed_desk(
    desk: Desk, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["desk", *args],
        env=installed_env(desk),
        cwd=desk.data_dir.parent,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def entry_exec(path: Path) -> list[str]:
    """The entry's Exec line as argv, field codes (%f, %U, ...) dropped."""
    entry = ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(path)
    return [arg for arg in shlex.split(entry["Desktop Entry"]["Exec"]) if not arg.startswith("%")]


def test_the_deb_holds_the_bundle_a_command_the_entry_icons_and_its_dependencies(
    deb: Path,
) -> None:
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True)
    assert deb.name == f"desk_{desktop.__version__}_{arch.stdout.strip()}.deb"
    fields = subprocess.run(
        ["dpkg-deb", "--showformat=${Package}|${Version}|${Depends}", "--show", str(deb)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("|")
    assert fields[:2] == ["desk", desktop.__version__]
    depends = {name.strip() for name in fields[2].split(",")}
    # Libraries the bundle links but does not carry, and data its carried libraries read.
    assert {"libc6", "libegl1", "ca-certificates", "xkb-data"} <= depends
    listing = subprocess.run(
        ["dpkg-deb", "--contents", str(deb)], capture_output=True, text=True, check=True
    ).stdout
    names = {line.split()[5].removeprefix(".") for line in listing.splitlines()}
    assert "/opt/desk/Desk" in names
    assert "/opt/desk/_internal/desktop/web_dist/index.html" in names
    assert "/usr/share/applications/desk.desktop" in names
    assert "/usr/share/icons/hicolor/scalable/apps/desk.svg" in names
    for size in (16, 32, 48, 64, 128, 256, 512):
        assert f"/usr/share/icons/hicolor/{size}x{size}/apps/desk.png" in names
    assert "/usr/bin/desk -> /opt/desk/Desk" in listing


def test_the_installed_entry_is_valid_and_names_the_windows_class(installed: Path) -> None:
    done = subprocess.run(["desktop-file-validate", str(ENTRY)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    text = ENTRY.read_text()
    assert f"StartupWMClass={WM_CLASS}\n" in text
    assert "Name=Desk\n" in text
    assert "Icon=desk\n" in text
    assert shutil.which(entry_exec(ENTRY)[0], path=SYSTEM_PATH) == "/usr/bin/desk"
    png = Path("/usr/share/icons/hicolor/256x256/apps/desk.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_installed_desk_tells_its_version_and_passes_its_self_test(
    installed: Path, desk: Desk
) -> None:
    version = installed_desk(desk, "--version")
    assert version.stdout.strip() == f"desk {desktop.__version__}", version.stderr
    done = installed_desk(desk, "self-test")
    assert done.returncode == 0, done.stdout + done.stderr


def window_classes(display: str) -> set[str]:
    """The WM_CLASS class names of the display's windows called Desk."""
    env = {**os.environ, "DISPLAY": display}
    found = subprocess.run(
        ["xdotool", "search", "--class", WM_CLASS], env=env, capture_output=True, text=True
    )
    classes = set()
    for window in found.stdout.split():
        prop = subprocess.run(
            ["xprop", "-id", window, "WM_CLASS"], env=env, capture_output=True, text=True
        ).stdout
        if "=" in prop:
            classes.add(prop.split("=", 1)[1].split(",")[-1].strip().strip('"'))
    return classes


def test_the_entrys_exec_opens_the_window_connected_with_the_entrys_class(
    installed: Path, desk: Desk, tmp_path: Path
) -> None:
    display = start_xvfb()
    probe = tmp_path / "probe.json"
    env = {
        **installed_env(desk),
        "DISPLAY": display.name,
        "QT_QPA_PLATFORM": "xcb",
        "DESK_WINDOW_PROBE": str(probe),
        "DESK_WINDOW_PROBE_TIMEOUT": "60",
        "DESK_WINDOW_AUTOCLOSE": "1",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    classes: set[str] = set()
    log = tmp_path / "window.log"
    try:
        with log.open("w") as stderr:
            window = subprocess.Popen(
                entry_exec(ENTRY), env=env, cwd=tmp_path, stdout=stderr, stderr=stderr
            )

        def mapped_or_ended() -> bool:
            # Read while the window is up: the probe closes it once connected.
            classes.update(window_classes(display.name))
            return bool(classes) or window.poll() is not None

        try:
            wait_until(mapped_or_ended, timeout=90, what="the Desk window to map")
            window.wait(timeout=120)
        finally:
            if window.poll() is None:
                window.kill()
                window.wait()
    finally:
        stop_xvfb(display)
    output = log.read_text(errors="replace")[-4000:]
    assert window.returncode == 0, output
    report = json.loads(probe.read_text())
    assert report["errors"] == [], f"{report}\n{output}"
    assert report["connected"] is True
    assert classes == {WM_CLASS}


def job_status(url: str, token: str, session: str) -> list[dict[str, Any]]:
    jobs = api_call(url, token, "GET", f"/api/session/{session}/jobs")
    assert isinstance(jobs, list)
    return jobs


def tool_parts(url: str, token: str, session: str) -> list[dict[str, Any]]:
    messages = api_call(url, token, "GET", f"/api/session/{session}/message?limit=200")
    assert isinstance(messages, list)
    return [
        part
        for message in messages
        if message["type"] == "assistant"
        for part in message["content"]
        if part["type"] == "tool"
    ]


def test_reinstalling_over_a_running_desk_keeps_its_terminal_and_its_agent_command(
    installed: Path, desk: Desk, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    command = f"echo started; while [ ! -e {go} ]; do sleep 0.05; done; echo finished"
    with threaded_fake_provider() as fake:
        fake.script(
            tool_call_reply(Call("call_wait", "shell", {"command": command})),
            text_reply("Done."),
        )
        started = installed_desk(desk, "service", "start")
        assert started.returncode == 0, started.stderr
        first = desk.registration()
        url, token = str(first["url"]), str(first["token"])
        api_call(
            url,
            token,
            "PUT",
            "/api/config/provider",
            {
                "provider": "openai-compatible",
                "base_url": fake.base_url,
                "model": "fake-model",
                "api_key": "sk-test",
            },
        )
        terminal = create_terminal(url, token)
        work = tmp_path / "work"
        work.mkdir()
        session = api_call(url, token, "POST", "/api/session", {"directory": str(work)})
        assert isinstance(session, dict)
        sid = str(session["id"])
        api_call(url, token, "POST", f"/api/session/{sid}/prompt", {"text": "wait for go"})
        wait_until(
            lambda: any(job["status"] == "running" for job in job_status(url, token, sid)),
            timeout=60,
            what="the agent's command to run",
        )

        install(installed, again=True)
        # The next start runs the reinstalled code; the PTY host keeps the terminal and the
        # command, and the new service adopts both.
        restarted = installed_desk(desk, "service", "restart")
        assert restarted.returncode == 0, restarted.stderr
        second = desk.registration()
        assert second["pid"] != first["pid"]
        url, token = str(second["url"]), str(second["token"])
        terminals = api_call(url, token, "GET", "/api/pty")
        assert isinstance(terminals, list)
        kept = [t for t in terminals if t["id"] == terminal["id"]]
        assert kept, terminals
        assert kept[0]["status"] == "running", kept[0]
        assert (kept[0]["pid"], kept[0]["epoch"]) == (terminal["pid"], terminal["epoch"])
        assert [job["status"] for job in job_status(url, token, sid)] == ["running"]

        go.touch()
        wait_until(
            lambda: any(p["state"]["status"] == "completed" for p in tool_parts(url, token, sid)),
            timeout=60,
            what="the adopted command's result",
        )
        (part,) = tool_parts(url, token, sid)
        assert part["state"]["metadata"]["exit_code"] == 0
        assert "finished" in part["state"]["content"]
        assert fake.invalid_count == 0


def replace_file(path: Path, data: bytes) -> None:
    """As dpkg installs a file: the new one is renamed over the name, and processes that run
    from the old one keep it."""
    new = path.with_name(f"{path.name}.dpkg-new")
    new.write_bytes(data)
    new.chmod(path.stat().st_mode)
    os.replace(new, path)


def test_a_running_desk_keeps_loading_its_own_code_after_its_files_are_replaced(
    installed: Path, desk: Desk
) -> None:
    started = installed_desk(desk, "service", "start")
    assert started.returncode == 0, started.stderr
    registration = desk.registration()
    url, token = str(registration["url"]), str(registration["token"])
    assert api_call(url, token, "GET", "/api/pty") == []  # the PTY host runs, has spawned nothing
    host = desk.settings.pty_host_registration_path.read_text()
    executable = Path("/opt/desk/Desk")  # the bootloader, with the archive of Python modules
    original = executable.read_bytes()
    # An upgrade's archive holds other bytes at the offsets the running processes know.
    replace_file(executable, original.translate(bytes(b ^ 0xFF for b in range(256))))
    try:
        # The host's first spawn loads its spawning module now, from the archive it started with.
        terminal = create_terminal(url, token)
        assert terminal["status"] == "running", terminal
    finally:
        replace_file(executable, original)
    assert desk.settings.pty_host_registration_path.read_text() == host
    api_call(url, token, "DELETE", f"/api/pty/{terminal['id']}")


def test_removing_the_package_leaves_the_data_dir(installed: Path, desk: Desk) -> None:
    started = installed_desk(desk, "service", "start")
    assert started.returncode == 0, started.stderr
    stopped = installed_desk(desk, "service", "stop", "--all")
    assert stopped.returncode == 0, stopped.stderr
    kept = sorted(path.name for path in desk.data_dir.iterdir())
    assert "desk.sqlite3" in kept

    done = apt_get("purge", "desk")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not Path("/opt/desk").exists()
    assert not Path("/usr/bin/desk").exists()
    assert not ENTRY.exists()
    assert sorted(path.name for path in desk.data_dir.iterdir()) == kept
