"""Context accounting and compaction, without a provider: the budget's numbers, the
calibrated count, what the model sees of a compacted history, and compaction on a real
store (one durable event; tool calls never parted from their results; replay alike)."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from desktop.agent.compaction import (
    COMPACTION,
    SUMMARY_HEADER,
    CompactionFailed,
    Compactor,
    model_view,
    output_cap,
    plan,
)
from desktop.agent.context import Accounting, Budget, raw_tokens, session_context
from desktop.agent.lowering import lower_messages
from desktop.events import history
from desktop.events.bus import DurableBus, draft
from desktop.events.fanout import Fanout
from desktop.provider.errors import CONTEXT_OVERFLOW, ProviderError
from desktop.provider.validate import validate_request
from desktop.store import log
from desktop.store.db import Store

SID = "ses_ctx"
T = TypeVar("T")


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "type": "user", "text": text, "time": {"created": 1}}


def tool_turn(mid: str, calls: list[tuple[str, str]], text: str = "") -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    for call_id, output in calls:
        content.append(
            {
                "type": "tool",
                "id": call_id,
                "name": "read",
                "state": {"status": "completed", "input": {"path": call_id}, "content": output},
                "time": {"created": 1},
            }
        )
    return {
        "id": mid,
        "type": "assistant",
        "content": content,
        "finish": "tool_calls",
        "time": {"created": 1},
    }


def conversation(rounds: int, output: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for r in range(rounds):
        out.append(user(f"msg_u{r}", f"prompt {r} " + "please " * rng.randint(1, 20)))
        for s in range(rng.randint(1, 3)):
            calls = [(f"call_{r}_{s}_{c}", "x" * rng.randint(1, output)) for c in range(2)]
            out.append(tool_turn(f"msg_a{r}_{s}", calls, text="looking" if s else ""))
        out.append(
            {"id": f"msg_e{r}", "type": "assistant", "content": [{"type": "text", "text": "ok"}],
             "finish": "stop", "time": {"created": 1}}
        )  # fmt: skip
    return out


def test_the_budget_reserves_the_answer_and_compacts_below_the_rest() -> None:
    small, large = Budget(8192), Budget(200_000)
    assert small.reserve == 1638  # a fifth of a small window...
    assert large.reserve == 16_384  # ...at most 16k
    assert small.threshold < small.usable < small.window
    assert large.target < large.threshold
    assert (large.threshold, large.target) == (156_073, 91_808)


def test_the_count_is_the_last_reported_one_plus_the_calibrated_estimate_of_the_rest() -> None:
    books = Accounting()
    assert books.used(SID, "m", 1000.0) == 1000  # nothing reported yet: the raw estimate
    books.observe(SID, "m", 1000.0, 1300)
    assert books.factor("m") == pytest.approx(1.3)
    assert books.used(SID, "m", 1100.0) == 1300 + 130
    books.forget(SID)  # the history changed shape: estimated whole, calibrated
    assert books.used(SID, "m", 1100.0) == 1430
    assert books.used("ses_other", "m", 100.0) == 130  # the model's factor is shared


def test_the_model_sees_the_summary_and_placeholders_while_the_history_keeps_everything() -> None:
    messages = conversation(4, 3000)
    through = messages[5]["id"]
    pruned_call = messages[-2]["content"][-1]["id"]
    compaction = {
        "id": "msg_c",
        "type": "synthetic",
        "text": "Goal: keep going",
        "description": COMPACTION,
        "metadata": {COMPACTION: {"through": through, "pruned": [pruned_call]}},
    }
    full = [*messages, compaction, user("msg_new", "and now?")]
    view = model_view(full)
    assert view[0]["text"].startswith(SUMMARY_HEADER)
    assert view[0]["text"].endswith("Goal: keep going")
    assert [m["id"] for m in view[1:]] == [m["id"] for m in messages[6:]] + ["msg_new"]
    part = next(
        p
        for m in view
        if m["type"] == "assistant"
        for p in m["content"]
        if p.get("id") == pruned_call
    )
    assert part["state"]["content"].startswith("[Output pruned to save context")
    assert "Call read again" in part["state"]["content"]
    # The history itself is untouched (the person's view).
    assert messages[-2]["content"][-1]["state"]["content"].startswith("x")
    validate_request({"model": "m", "messages": lower_messages(view), "stream": True})


def test_the_summary_keeps_the_latest_request_when_it_was_summarised_itself() -> None:
    messages = [user("msg_u", "build the parser"), tool_turn("msg_a", [("c", "y" * 100)])]
    compaction = {
        "id": "msg_c", "type": "synthetic", "text": "Goal: parser", "description": COMPACTION,
        "metadata": {COMPACTION: {"through": "msg_a", "pruned": []}},
    }  # fmt: skip
    view = model_view([*messages, compaction])
    assert view[0]["text"].endswith("build the parser")


def test_a_single_output_larger_than_the_window_is_cut_with_a_note() -> None:
    budget = Budget(4096)
    cap = output_cap(budget, 1.0)
    assert cap is not None
    huge = tool_turn("msg_a", [("c1", "line\n" * 100_000)])
    view = model_view([user("msg_u", "cat it"), huge], cap=cap)
    content = view[1]["content"][0]["state"]["content"]
    assert len(content) < cap + 400
    assert "characters cut here" in content
    assert raw_tokens(view) < budget.usable


def test_pruning_comes_first_and_leaves_the_recent_part_alone() -> None:
    messages = conversation(6, 4000, seed=3)
    budget = Budget(int(raw_tokens(messages) * 0.9))
    found = plan(messages, budget, 1.0, 0.0, budget.target * 2)
    assert found.pruned
    assert not found.older  # pruning was enough for this goal
    recent = {p["id"] for p in messages[-3]["content"] if p["type"] == "tool"}
    assert not recent & set(found.pruned)


@pytest.fixture
async def bus(tmp_path: Path) -> AsyncIterator[DurableBus]:
    store = Store(tmp_path / "desk.db")
    await store.open()
    bus = DurableBus(store, Fanout(limit=256))
    bus.start()
    await bus.publish(draft(SID, "session.created", {"title": "t", "directory": "/tmp"}))
    yield bus
    await bus.stop()
    await store.close()


async def seed(bus: DurableBus, messages: list[dict[str, Any]]) -> None:
    drafts = []
    for m in messages:
        if m["type"] == "user":
            drafts.append(
                draft(
                    SID,
                    "session.prompted",
                    {"message_id": m["id"], "text": m["text"], "mode": "queue"},
                )
            )
            continue
        mid = m["id"]
        drafts.append(
            draft(
                SID,
                "session.step.started",
                {"message_id": mid, "agent": "build", "model": {"id": "m", "provider_id": "p"}},
            )
        )
        for p in m["content"]:
            if p["type"] == "text":
                drafts.append(draft(SID, "session.text", {"message_id": mid, "text": p["text"]}))
            else:
                drafts.append(
                    draft(
                        SID,
                        "session.tool.called",
                        {
                            "message_id": mid,
                            "call_id": p["id"],
                            "name": "read",
                            "input": p["state"]["input"],
                        },
                    )
                )
                drafts.append(
                    draft(
                        SID,
                        "session.tool.success",
                        {"message_id": mid, "call_id": p["id"], "content": p["state"]["content"]},
                    )
                )
        drafts.append(draft(SID, "session.step.ended", {"message_id": mid, "finish": m["finish"]}))
    await bus.publish(drafts)


async def read(bus: DurableBus, fn: Callable[[sqlite3.Connection], T]) -> T:
    store = bus.store
    return await store.run(lambda: fn(store.connection()))


async def stored(bus: DurableBus) -> list[dict[str, Any]]:
    snap = await read(bus, lambda c: history.read(c, SID))
    assert snap is not None
    return snap.messages


async def no_learning(exc: ProviderError) -> Budget | None:
    return None


@pytest.mark.parametrize("seed_value", range(6))
async def test_compaction_is_one_event_whose_view_fits_and_keeps_calls_with_results(
    bus: DurableBus, seed_value: int
) -> None:
    await seed(bus, conversation(8, 6000, seed=seed_value))
    messages = await stored(bus)
    budget = Budget(int(raw_tokens(messages) * 0.6))
    asked: list[list[dict[str, Any]]] = []

    async def summarise(request: list[dict[str, Any]]) -> str:
        asked.append(request)
        validate_request({"model": "m", "messages": request, "stream": True})
        assert raw_tokens([{"type": "user", "text": request[1]["content"]}]) < budget.usable
        return "Goal: g\nDecisions: d\nDone: x\nFiles: a.py\nLeft: y"

    before = await read(bus, lambda c: log.last_seq(c, SID))
    done = await Compactor(bus).compact(
        SID, messages, budget, factor=1.0, fixed=200.0, summarise=summarise,
        learn=no_learning, reason="threshold",
    )  # fmt: skip
    assert done.after < done.before
    assert await read(bus, lambda c: log.last_seq(c, SID)) == before + 1  # one event
    after = await stored(bus)
    assert len(after) == len(messages) + 1  # the person's view keeps every message
    view = model_view(after, cap=output_cap(budget, 1.0))
    assert raw_tokens(view) + 200 <= budget.target
    lowered = lower_messages(view)
    validate_request({"model": "m", "messages": lowered, "stream": True})
    assert lowered[-1] == lower_messages(messages[-1:])[-1]  # the newest is sent unchanged


async def test_a_summary_request_that_overflows_twice_fails_once_and_changes_nothing(
    bus: DurableBus,
) -> None:
    await seed(bus, conversation(30, 300, seed=9))  # small outputs: pruning cannot help
    messages = await stored(bus)
    budget = Budget(int(raw_tokens(messages) * 0.5))
    calls = 0

    async def summarise(request: list[dict[str, Any]]) -> str:
        nonlocal calls
        calls += 1
        raise ProviderError(CONTEXT_OVERFLOW, "too long", retryable=False)

    before = await read(bus, lambda c: log.last_seq(c, SID))
    with pytest.raises(CompactionFailed):
        await Compactor(bus).compact(
            SID, messages, budget, factor=1.0, fixed=0.0, summarise=summarise,
            learn=no_learning, reason="overflow",
        )  # fmt: skip
    assert calls == 2  # once, then once more in smaller pieces: never a loop
    assert await read(bus, lambda c: log.last_seq(c, SID)) == before


async def test_the_step_record_gives_the_sessions_context_and_replays_alike(
    bus: DurableBus,
) -> None:
    await seed(bus, conversation(1, 10))
    mid = (await stored(bus))[-1]["id"]
    await bus.publish(
        draft(SID, "session.step.ended", {"message_id": mid, "finish": "stop",
              "context": {"used": 4200, "window": 8192, "model": "m"}})
    )  # fmt: skip
    found = await read(bus, lambda c: session_context(c, SID))
    assert found == {
        "context": {"used": 4200, "window": 8192},
        "model": {"id": "m", "context_window": 8192},
    }
    await bus.publish(draft(SID, "session.context.window", {"window": 32768}))
    found = await read(bus, lambda c: session_context(c, SID))
    assert found["context"] == {"used": 4200, "window": 32768}


async def test_nothing_to_compact_is_said_as_such_and_sends_no_request(bus: DurableBus) -> None:
    await seed(bus, [user("msg_u", "hello " * 50)])
    messages = await stored(bus)
    asked: list[Any] = []

    async def summarise(request: list[dict[str, Any]]) -> str:
        asked.append(request)
        return "never"

    with pytest.raises(CompactionFailed) as caught:
        await Compactor(bus).compact(
            SID, messages, Budget(200), factor=1.0, fixed=0.0, summarise=summarise,
            learn=no_learning, reason="threshold",
        )  # fmt: skip
    assert caught.value.nothing
    assert asked == []
