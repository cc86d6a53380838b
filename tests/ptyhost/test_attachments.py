"""Every rule of the attachment protocol, against a real daemon, PTYs and handed-off sockets."""

from __future__ import annotations

import asyncio

import pyte
import pytest

from desktop.ptyhost.client import PtyHostClient
from desktop.ptyhost.flow import FlowLimits
from desktop.ptyhost.protocol import PtyHostError
from tests.support.host import HostFactory, attach, shell
from tests.support.wait import wait_for

LINES = "i=0; while [ $i -lt {n} ]; do echo line$i; i=$((i+1)); done"


async def output_of(host: PtyHostClient, terminal_id: str) -> bytes:
    """Everything the terminal produced so far (the ring must not have wrapped)."""
    reader = await attach(host, terminal_id, role="observer")
    reader.attachment.close()
    assert reader.attached["replay"]["truncated"] is False  # type: ignore[index]
    return bytes(reader.output)


async def tail_of(host: PtyHostClient, terminal_id: str) -> int:
    info = await host.get(terminal_id)
    return int(info["output"]["tail"])  # type: ignore[index]


async def wait_tail(host: PtyHostClient, terminal_id: str, needle: bytes) -> bytes:
    async def check() -> bytes | None:
        data = await output_of(host, terminal_id)
        return data if needle in data else None

    found: bytes = await wait_for(check, what=f"{needle!r} in the output", interval=0.05)
    return found


async def test_replay_from_any_cursor_is_exact_then_live_follows(host: PtyHostClient) -> None:
    info = await host.create(
        {"command": "sh", "args": ["-c", LINES.format(n=300) + "; echo DONE; exec cat"]}
    )
    terminal_id = str(info["id"])
    everything = await wait_tail(host, terminal_id, b"DONE\r\n")
    whole = await attach(host, terminal_id, cursor=0)
    assert whole.attached["replay"] == {
        "requested": 0,
        "available": 0,
        "end": len(everything),
        "truncated": False,
    }
    assert bytes(whole.output) == everything
    middle = len(everything) // 3
    part = await attach(host, terminal_id, cursor=middle, role="observer")
    assert part.attached["replay"]["requested"] == middle  # type: ignore[index]
    assert bytes(part.output) == everything[middle:]
    assert part.replay_end == len(everything)
    at_end = await attach(host, terminal_id, cursor=len(everything), role="observer")
    assert at_end.output == b""
    assert at_end.attached["replay"]["truncated"] is False  # type: ignore[index]
    await whole.type_line("live words")
    for reader in (whole, part, at_end):
        await reader.until(lambda r: r.output.count(b"live words") == 2, what="echo and cat")
    assert bytes(part.output) == bytes(whole.output)[middle:]
    assert bytes(at_end.output) == bytes(whole.output)[len(everything) :]
    # A client's cursor (replay.end plus the bytes since) is the terminal's own offset of
    # the next byte: no gap, no duplicate.
    assert part.cursor == len(part.output) + middle
    assert part.cursor == whole.cursor == at_end.cursor == await tail_of(host, terminal_id)


async def test_reconnect_mid_stream_sees_every_byte_exactly_once(host: PtyHostClient) -> None:
    info = await host.create(
        {
            "command": "sh",
            "args": ["-c", "read go; " + LINES.format(n=4000) + "; echo END; exec cat"],
        }
    )
    terminal_id = str(info["id"])
    first = await attach(host, terminal_id)
    await first.type_line("")
    await first.until(lambda r: len(r.output) > 5000, what="some output")
    cursor = first.cursor
    first.attachment.close()
    second = await attach(host, terminal_id, cursor=cursor)
    await second.until_output(b"END\r\n")
    everything = await output_of(host, terminal_id)
    assert bytes(first.output[:cursor]) + bytes(second.output) == everything
    assert everything.count(b"line3999\r\n") == 1


async def test_cursor_beyond_tail_or_other_epoch_gets_a_checkpoint(host: PtyHostClient) -> None:
    info = await host.create({"command": "sh", "args": ["-c", "echo hello-screen; exec cat"]})
    terminal_id = str(info["id"])
    await wait_tail(host, terminal_id, b"hello-screen")
    tail = await tail_of(host, terminal_id)
    for options in ({"cursor": tail + 1000}, {"cursor": 0, "epoch": "another-epoch"}):
        reader = await attach(host, terminal_id, role="observer", **options)
        replay = reader.attached["replay"]
        assert isinstance(replay, dict)
        assert replay["truncated"] is True
        assert replay["end"] == tail
        assert reader.output == b""
        assert len(reader.checkpoints) >= 1
        assert reader.frames[0][:2] == ("checkpoint", tail)
        assert reader.types() == ["replay_complete"]
        screen = render(b"".join(reader.checkpoints))
        assert "hello-screen" in screen.display[0]
        reader.attachment.close()


def render(data: bytes, cols: int = 80, rows: int = 24) -> pyte.Screen:
    screen = pyte.Screen(cols, rows)
    pyte.ByteStream(screen).feed(data)
    return screen


async def test_ring_wrap_replays_a_correct_checkpoint(start_host: HostFactory) -> None:
    host = await start_host(pty_ring_bytes=64 * 1024)
    script = "seq 1 30000; printf '\\033[2J\\033[H\\033[1;31mFINAL\\033[0m screen'; exec cat"
    info = await host.create({"command": "sh", "args": ["-c", script]})
    terminal_id = str(info["id"])

    # The whole script's output first: a snapshot taken mid-seq would describe an earlier
    # screen than the replay's checkpoint.
    async def final_screen() -> bool:
        lines = (await host.snapshot(terminal_id))["lines"]
        assert isinstance(lines, list)
        return any("FINAL screen" in str(line) for line in lines)

    await wait_for(final_screen, interval=0.05, what="the final screen")
    await wait_for_tail_at_least(host, terminal_id, 30000 * 6)
    snapshot = await host.snapshot(terminal_id)
    reader = await attach(host, terminal_id, cursor=0)
    replay = reader.attached["replay"]
    assert isinstance(replay, dict)
    assert replay["truncated"] is True
    assert replay["available"] > 0
    checkpoint = b"".join(reader.checkpoints)
    import base64

    assert checkpoint == base64.b64decode(str(snapshot["checkpoint"]))
    assert [line.rstrip() for line in render(checkpoint).display] == snapshot["lines"]
    assert render(checkpoint).display[0].startswith("FINAL screen")
    # Live output continues right after the checkpoint.
    await reader.type_line("after")
    await reader.until(lambda r: r.output.count(b"after") == 2)


async def wait_for_tail_at_least(host: PtyHostClient, terminal_id: str, size: int) -> None:
    async def reached() -> bool:
        return await tail_of(host, terminal_id) >= size

    await wait_for(reached, what=f"a tail of at least {size}", interval=0.05)


async def test_roles_takeover_and_reconnect(host: PtyHostClient) -> None:
    info = await shell(host)
    terminal_id = str(info["id"])
    one = await attach(host, terminal_id, attachment_id="one")
    assert (one.attached["role"], one.attached["generation"]) == ("controller", 1)
    two = await attach(host, terminal_id, attachment_id="two")
    assert two.attached["role"] == "observer"  # a second controller request without takeover
    # Observer input never reaches the PTY and is answered with an error.
    await two.attachment.send_input(b"echo FROM-OBSERVER\r")
    error = await two.until_type("error")
    assert "observer" in str(error["message"])
    await two.attachment.resize(100, 40)
    await two.until(lambda r: len(r.of_type("error")) == 2)
    await one.type_line("echo FROM-CONTROLLER")
    await one.until_output(b"FROM-CONTROLLER\r\n")
    await two.until_output(b"FROM-CONTROLLER\r\n")
    assert b"FROM-OBSERVER" not in one.output

    three = await attach(host, terminal_id, attachment_id="three", takeover=True)
    assert (three.attached["role"], three.attached["generation"]) == ("controller", 2)
    changed = await one.until_type("controller_changed")
    assert changed == {"type": "controller_changed", "attachment_id": "three", "generation": 2}
    await two.until_type("controller_changed")
    await one.attachment.send_input(b"echo OLD-CONTROLLER\r")
    await one.until(lambda r: len(r.of_type("error")) == 1, what="demoted input refused")

    await three.attachment.resize(100, 30)
    for reader in (one, two, three):
        resized = await reader.until_type("resized")
        assert resized == {"type": "resized", "cols": 100, "rows": 30, "generation": 2}
    await three.type_line("stty size")
    await three.until_output(b"30 100\r\n")
    assert (await host.get(terminal_id))["size"] == {"cols": 100, "rows": 30}
    with pytest.raises(PtyHostError) as conflict:
        await host.update(terminal_id, {"size": {"cols": 90, "rows": 20}, "attachment_id": "one"})
    assert conflict.value.status == 409
    await host.update(terminal_id, {"size": {"cols": 90, "rows": 20}, "attachment_id": "three"})

    three.attachment.close()
    await one.until(lambda r: r.of_type("controller_changed")[-1]["attachment_id"] is None)
    assert one.of_type("controller_changed")[-1]["generation"] == 3
    back = await attach(host, terminal_id, attachment_id="three")
    assert (back.attached["role"], back.attached["generation"]) == ("controller", 4)
    await back.type_line("echo BACK")
    await back.until_output(b"BACK\r\n")
    assert b"OLD-CONTROLLER" not in back.output


async def test_two_controllers_at_once_exactly_one_wins(host: PtyHostClient) -> None:
    info = await shell(host)
    terminal_id = str(info["id"])
    for _ in range(5):
        readers = await asyncio.gather(
            *(attach(host, terminal_id, attachment_id=f"racer{i}") for i in range(4))
        )
        roles = [reader.attached["role"] for reader in readers]
        assert roles.count("controller") == 1
        for reader in readers:
            reader.attachment.close()
        await wait_for_no_controller(host, terminal_id)
    racers = await asyncio.gather(
        *(attach(host, terminal_id, attachment_id=f"t{i}", takeover=True) for i in range(3))
    )
    generations = sorted(int(r.attached["generation"]) for r in racers)  # type: ignore[call-overload]
    assert len(set(generations)) == 3
    winner = max(racers, key=lambda r: int(r.attached["generation"]))  # type: ignore[call-overload]
    for reader in racers:
        await reader.attachment.send_input(
            b"echo " + str(reader.attached["attachment_id"]).encode() + b"-typed\r"
        )
    await winner.until_output(str(winner.attached["attachment_id"]).encode() + b"-typed\r\n")
    losers = [r for r in racers if r is not winner]
    for loser in losers:
        await loser.until(lambda r: r.of_type("error") != [], what="loser input refused")


async def wait_for_no_controller(host: PtyHostClient, terminal_id: str) -> None:
    probe = await attach(host, terminal_id, role="observer")
    probe.attachment.close()


async def test_exited_comes_after_every_byte(host: PtyHostClient) -> None:
    info = await host.create({"command": "sh", "args": ["-c", "seq 1 20000; exit 3"]})
    reader = await attach(host, str(info["id"]))
    exited = await reader.until_type("exited")
    assert exited["exit_code"] == 3
    assert exited["final_offset"] == reader.cursor
    assert reader.output.endswith(b"20000\r\n")
    after = await host.get(str(info["id"]))
    assert after["status"] == "exited"
    assert after["exit_code"] == 3
    late = await attach(host, str(info["id"]), cursor=0, takeover=True)
    await late.until_type("exited")
    assert bytes(late.output) == bytes(reader.output)
    await late.attachment.send_input(b"x")
    assert "not running" in str((await late.until_type("error"))["message"])


async def test_a_shell_killed_by_sigterm_exits_with_128_plus_the_signal(
    host: PtyHostClient,
) -> None:
    info = await host.create({"command": "sh", "args": ["-c", "kill -TERM $$"]})
    reader = await attach(host, str(info["id"]))
    assert (await reader.until_type("exited"))["exit_code"] == 128 + 15


async def test_slow_observer_is_resynchronised_never_stalls_the_controller(
    start_host: HostFactory,
) -> None:
    host = await start_host(pty_ring_bytes=64 * 1024)
    info = await host.create(
        {"command": "sh", "args": ["-c", "read go; seq 1 100000; echo END; exec cat"]}
    )
    terminal_id = str(info["id"])
    controller = await attach(host, terminal_id)
    observer = await attach(host, terminal_id, role="observer", ack=False)
    await controller.type_line("")
    await controller.until_output(b"END\r\n", within=30)
    assert controller.cursor == await tail_of(host, terminal_id)
    assert controller.output.count(b"\n") >= 100000
    # The observer, never acking, was sent at most a window of bytes meanwhile.
    sent = observer.unacked  # what it read while attaching, never acknowledged
    while (frame := observer.attachment.next_ready()) is not None:
        if isinstance(frame, bytes):
            sent += len(frame)
    assert 0 < sent <= FlowLimits.for_ring(64 * 1024).window_high
    observer.ack = True
    await observer.attachment.ack(64 * 1024 * 1024)
    resync = await observer.until_type("resync")
    await observer.until(lambda r: len(r.checkpoints) >= 1 and r.frames[-1][0] == "checkpoint")
    assert observer.frames[-1][:2] == ("checkpoint", resync["end"])
    screen = render(b"".join(observer.checkpoints))
    assert any("END" in line for line in screen.display)
    await controller.type_line("fresh")
    await observer.until(lambda r: r.output.count(b"fresh") == 2, what="live after resync")


async def test_slow_controller_back_pressures_its_pty_only(start_host: HostFactory) -> None:
    host = await start_host(pty_ring_bytes=256 * 1024)
    info = await host.create({"command": "sh", "args": ["-c", "read go; seq 1 300000; echo END"]})
    terminal_id = str(info["id"])
    stalled = await attach(host, terminal_id, ack=False)
    await stalled.type_line("")
    # The reader stops well before the ring could lose an unacknowledged byte.
    await wait_for_tail_at_least(host, terminal_id, 100 * 1024)
    other = await shell(host)
    echo = await attach(host, str(other["id"]))
    for word in ("alpha", "beta", "gamma"):
        await echo.type_line(f"echo {word}-ok")
        await echo.until_output(f"{word}-ok\r\n".encode())
        tail = await tail_of(host, terminal_id)
        assert tail <= 256 * 1024, tail
    assert (await host.get(terminal_id))["status"] == "running"
    stalled.ack = True
    await stalled.attachment.ack(stalled.unacked)
    stalled.unacked = 0
    await stalled.until_type("exited", within=60)
    expected = b"\r\n" + b"".join(b"%d\r\n" % i for i in range(1, 300001)) + b"END\r\n"
    assert bytes(stalled.output) == expected


async def test_utf8_split_across_reads_arrives_intact(host: PtyHostClient) -> None:
    script = (
        "read go; printf '\\303'; sleep 0.3; printf '\\251\\342\\202'; sleep 0.3; printf '\\254\\n'"
    )
    info = await host.create({"command": "sh", "args": ["-c", script]})
    reader = await attach(host, str(info["id"]))
    await reader.type_line("")
    await reader.until_type("exited")
    assert reader.output.endswith("\u00e9\u20ac\r\n".encode())
    outputs = [offset for kind, offset, _ in reader.frames if kind == "output"]
    assert len(outputs) >= 3  # really split across reads


async def test_title_bell_foreground_and_host_events(host: PtyHostClient) -> None:
    events: list[dict[str, object]] = []

    async def collect() -> None:
        async for event in host.events():
            events.append(event)

    collector = asyncio.ensure_future(collect())
    try:
        info = await shell(host)
        terminal_id = str(info["id"])
        reader = await attach(host, terminal_id)
        await reader.type_line("printf '\\033]0;my title\\007'")
        assert (await reader.until_type("title_changed"))["title"] == "my title"
        await reader.type_line("printf 'ding\\a'")
        await reader.until_type("bell")
        await reader.type_line("cat")  # in the foreground until the end of its input
        changed = await reader.until_type("foreground_process_changed")
        assert changed["process"] == "cat"
        await reader.attachment.send_input(b"\x04")
        await reader.until(
            lambda r: r.of_type("foreground_process_changed")[-1]["process"] == "bash",
            what="back to bash",
        )
        await reader.type_line("exit 5")
        await reader.until_type("exited")
        await host.delete(terminal_id)
        await wait_for(lambda: any(e["event"] == "deleted" for e in events))
    finally:
        collector.cancel()
    kinds = [event["event"] for event in events]
    assert kinds[0] == "created"
    assert kinds[-1] == "deleted"
    assert {"event": "exited", "id": terminal_id, "exit_code": 5} in events
    titles = [e["info"]["title"] for e in events if e["event"] == "updated"]  # type: ignore[index]
    assert "my title" in titles
    processes = [e["info"]["foreground_process"] for e in events if e["event"] == "updated"]  # type: ignore[index]
    assert "cat" in processes


async def test_twenty_floods_do_not_starve_an_echoing_terminal(host: PtyHostClient) -> None:
    floods = [
        await host.create({"command": "sh", "args": ["-c", "exec yes flood-line"]})
        for _ in range(20)
    ]
    # Half the floods have an attached client that never acks (stalled tabs).
    stalled = [
        await attach(host, str(info["id"]), ack=False, role="observer") for info in floods[:10]
    ]
    echo_info = await shell(host)
    echo = await attach(host, str(echo_info["id"]))
    loop = asyncio.get_running_loop()
    latencies = []
    for index in range(10):
        started = loop.time()
        await echo.attachment.send_input(f"{index}".encode())
        expected = f"{index}".encode()
        await echo.until(lambda r: r.output.endswith(expected), within=10)  # noqa: B023
        latencies.append(loop.time() - started)
    await echo.type_line("")
    tails = [await tail_of(host, str(info["id"])) for info in floods]
    assert all(tail > 0 for tail in tails)
    for info in floods:
        await host.delete(str(info["id"]))
    for reader in stalled:
        reader.attachment.close()
    assert max(latencies) < 5.0, latencies
