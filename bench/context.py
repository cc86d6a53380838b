"""What context handling costs, and how well it counts. Prints figures; never fails.

- compaction of a ~100k-token history without the model's time (the summary request is
  answered at once): Desk's own work from the decision to the durable event, on a real
  store. Baseline: one step's usual request work on the same history (read it from SQLite,
  lower it, build and preflight the body). Target < 50 ms.
- the request's size before and after (estimated tokens, characters, messages).
- the estimate's error against the provider's count (the strict fake's own tokenizer, which
  is not Desk's) over a growing coding conversation: uncalibrated characters / 4, and
  calibrated per model on the earlier requests' reported counts (the runner's way). Target
  within 10 %.
- the extra cost per step of the token accounting (window from kv, the model view, the
  estimate) against the step's request work without it. Target < 1 ms.

Run: .venv/bin/python bench/context.py [--tokens 100000] [--runs 15]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from desktop.agent.compaction import Compactor, model_view, output_cap  # noqa: E402
from desktop.agent.context import (  # noqa: E402
    Accounting,
    Budget,
    Windows,
    raw_text_tokens,
    raw_tokens,
)
from desktop.agent.fitting import Fitter  # noqa: E402
from desktop.agent.lowering import LoweringOptions, lower_messages  # noqa: E402
from desktop.agent.prompt import system_prompt  # noqa: E402
from desktop.events import history  # noqa: E402
from desktop.events.bus import DurableBus, draft  # noqa: E402
from desktop.events.fanout import Fanout  # noqa: E402
from desktop.provider.client import ChatClient  # noqa: E402
from desktop.provider.profiles import ToolSpec, make_profile  # noqa: E402
from desktop.store.db import Store  # noqa: E402
from desktop.tools.registry import default_tools, tool_specs  # noqa: E402
from tests.support.fake_provider import count_prompt  # noqa: E402

SID = "ses_bench"
WORDS = [
    *[
        "the",
        "of",
        "and",
        "to",
        "in",
        "is",
        "that",
        "for",
        "it",
        "as",
        "with",
        "was",
        "on",
        "be",
        "by",
        "this",
        "are",
        "or",
        "from",
        "at",
        "an",
    ],
    *[
        "which",
        "file",
        "line",
        "function",
        "return",
        "value",
        "error",
        "test",
        "path",
        "config",
        "session",
        "model",
    ],
    *[
        "token",
        "window",
        "request",
        "response",
        "buffer",
        "stream",
        "parser",
        "index",
        "offset",
        "limit",
    ],
    *["result", "output", "input"],
]
CODE = [
    "def {n}(self, value: int) -> int:\n    return value * {k} + self.offset\n",
    "    if not isinstance(item, dict):\n        raise ValueError(f'bad item {{item!r}}')\n",
    "for (let i = 0; i < rows.length; i++) {{ total += rows[i].{n} * {k}; }}\n",
    '{{"id": "{n}", "size": {k}, "tags": ["a", "b"], "ok": true}}\n',
]


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def code(rng: random.Random, lines: int) -> str:
    out = []
    for i in range(lines):
        name = "".join(rng.choice("abcdefghij_") for _ in range(rng.randint(4, 12)))
        out.append(f"{i + 1}\t" + rng.choice(CODE).format(n=name, k=rng.randint(1, 9999)))
    return "".join(out)


def conversation(tokens: int, seed: int = 1) -> list[tuple[str, dict[str, Any]]]:
    """Durable events of a coding session of about `tokens` raw-estimated tokens."""
    rng = random.Random(seed)
    events: list[tuple[str, dict[str, Any]]] = []
    size = 0.0
    n = 0
    while size < tokens:
        n += 1
        text = f"Step {n}: " + prose(rng, rng.randint(10, 60))
        events.append(
            ("session.prompted", {"message_id": f"msg_u{n}", "text": text, "mode": "queue"})
        )
        events.append(("session.input.delivered", {"message_id": f"msg_u{n}"}))
        size += len(text) / 4
        for s in range(rng.randint(1, 4)):
            mid = f"msg_a{n}_{s}"
            events.append(
                (
                    "session.step.started",
                    {"message_id": mid, "agent": "build", "model": {"id": "m", "provider_id": "p"}},
                )
            )
            note = prose(rng, rng.randint(5, 40))
            events.append(("session.text", {"message_id": mid, "text": note}))
            call = f"call_{n}_{s}"
            path = f"src/mod{rng.randint(1, 50)}.py"
            events.append(
                (
                    "session.tool.called",
                    {"message_id": mid, "call_id": call, "name": "read", "input": {"path": path}},
                )
            )
            output = code(rng, rng.randint(10, 250))
            events.append(
                ("session.tool.success", {"message_id": mid, "call_id": call, "content": output})
            )
            events.append(("session.step.ended", {"message_id": mid, "finish": "tool_calls"}))
            size += (len(note) + len(output) + 40) / 4
        mid = f"msg_e{n}"
        events.append(
            (
                "session.step.started",
                {"message_id": mid, "agent": "build", "model": {"id": "m", "provider_id": "p"}},
            )
        )
        events.append(("session.text", {"message_id": mid, "text": prose(rng, 30)}))
        events.append(("session.step.ended", {"message_id": mid, "finish": "stop"}))
    return events


async def open_bus(folder: Path) -> DurableBus:
    store = Store(folder / "desk.db")
    await store.open()
    bus = DurableBus(store, Fanout(limit=256))
    bus.start()
    await bus.publish(draft(SID, "session.created", {"title": "bench", "directory": str(folder)}))
    return bus


async def seed(bus: DurableBus, events: list[tuple[str, dict[str, Any]]]) -> None:
    for start in range(0, len(events), 500):
        await bus.publish([draft(SID, k, d) for k, d in events[start : start + 500]])


async def read_history(bus: DurableBus) -> list[dict[str, Any]]:
    store = bus.store
    snap = await store.run(lambda: history.read(store.connection(), SID))
    assert snap is not None
    return snap.messages


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def bench_compaction(tokens: int, runs: int) -> None:
    profile = make_profile("openai-compatible", base_url="http://127.0.0.1:9/v1", model="m")
    client = ChatClient(profile)
    specs = tool_specs(default_tools())
    tools = [ToolSpec(s["name"], s["description"], s["parameters"]) for s in specs]
    system = system_prompt("/tmp", specs, "")
    options = LoweringOptions(system=system)
    fixed = raw_text_tokens(system) + len(json.dumps([t.parameters for t in tools])) / 4
    baseline: list[float] = []
    timings: dict[str, list[float]] = {"prune": [], "summary": []}
    sizes: dict[str, tuple[int, int, int]] = {}

    async def summarise(request: list[dict[str, Any]]) -> str:
        return "Goal: g\nDecisions: d\nDone: x\nFiles: a.py\nLeft: y"

    async def learn(exc: Any) -> None:
        return None

    for run in range(runs):
        for mode in ("prune", "summary"):
            with tempfile.TemporaryDirectory() as tmp:
                bus = await open_bus(Path(tmp))
                await seed(bus, conversation(tokens, seed=run + 1))
                t0 = time.perf_counter()
                messages = await read_history(bus)
                body = client.build(lower_messages(messages, options), tools=tools)
                baseline.append(time.perf_counter() - t0)
                before = int(raw_tokens(messages) + fixed)
                budget = Budget(int(before / 0.9))  # the threshold is passed
                # "summary": a goal pruning alone cannot reach, so the older part is summarised.
                goal = budget.target if mode == "prune" else budget.target // 4
                t0 = time.perf_counter()
                messages = await read_history(bus)
                await Compactor(bus).compact(
                    SID, messages, budget, factor=1.0, fixed=fixed, summarise=summarise,
                    learn=learn, reason="threshold", goal=goal,
                )  # fmt: skip
                timings[mode].append(time.perf_counter() - t0)
                after = model_view(await read_history(bus), cap=output_cap(budget, 1.0))
                after_body = client.build(lower_messages(after, options), tools=tools)
                sizes.setdefault("before", (before, len(json.dumps(body)), len(body["messages"])))
                sizes.setdefault(
                    mode,
                    (
                        int(raw_tokens(after) + fixed),
                        len(json.dumps(after_body)),
                        len(after_body["messages"]),
                    ),
                )
                await bus.stop()
                await bus.store.close()
    await client.close()
    b = median_ms(baseline)
    print(f"compaction of a {sizes['before'][0]:,}-token history (median of {runs}, no model time)")
    print(f"  baseline: read + lower + build/preflight one request  {b:8.1f} ms")
    for mode, label in (("prune", "prune only"), ("summary", "prune + summarise")):
        ms = median_ms(timings[mode])
        print(f"  compaction, {label:<18} (read, plan, event) {ms:8.1f} ms  target < 50 ms")
    print("request size: before -> after prune -> after prune + summary")
    for index, label in enumerate(("estimated tokens", "body characters", "messages")):
        row = [sizes[k][index] for k in ("before", "prune", "summary")]
        print(f"  {label:<17} {row[0]:>10,} -> {row[1]:>8,} -> {row[2]:>8,}")


async def bench_estimate() -> None:
    """A growing conversation: every request counted by the fake; Desk estimates each one
    before it is sent, calibrated on the counts reported for the requests before it."""
    rng = random.Random(7)
    system = "You are a coding agent. " + prose(rng, 200)
    messages: list[dict[str, Any]] = []
    view: list[dict[str, Any]] = []
    books = Accounting()
    raw_errors: list[float] = []
    calibrated: list[float] = []
    for n in range(40):
        text = prose(rng, rng.randint(10, 80))
        view.append({"type": "user", "text": text})
        messages.append({"role": "user", "content": text})
        output = code(rng, rng.randint(10, 200)) if n % 3 else prose(rng, rng.randint(50, 600))
        state = {"status": "completed", "input": {"path": f"f{n}.py"}, "content": output}
        call = {"type": "tool", "id": f"c{n}", "name": "read", "state": state}
        view.append({"type": "assistant", "content": [{"type": "text", "text": "Reading."}, call]})
        function = {"name": "read", "arguments": json.dumps({"path": f"f{n}.py"})}
        calls = [{"id": f"c{n}", "type": "function", "function": function}]
        messages.append({"role": "assistant", "content": "Reading.", "tool_calls": calls})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": output})
        raw = raw_tokens(view) + raw_text_tokens(system)
        estimate = books.used(SID, "m", raw)
        counted = count_prompt({"messages": [{"role": "system", "content": system}, *messages]})
        if n >= 3:  # after the first few reports
            raw_errors.append(abs(raw - counted) / counted)
            calibrated.append(abs(estimate - counted) / counted)
        books.observe(SID, "m", raw, counted)
    print("estimate vs the provider's count (the fake's own tokenizer), 37 requests")
    for label, errors in (
        ("uncalibrated chars/4    ", raw_errors),
        ("calibrated (Desk's way) ", calibrated),
    ):
        median, worst = statistics.median(errors) * 100, max(errors) * 100
        print(f"  {label} median {median:5.1f} %  max {worst:5.1f} %")
    print("  target: calibrated within 10 %")


async def bench_accounting(tokens: int, runs: int) -> None:
    profile = make_profile("openai-compatible", base_url="http://127.0.0.1:9/v1", model="m")
    client = ChatClient(profile)
    specs = tool_specs(default_tools())
    tools = [ToolSpec(s["name"], s["description"], s["parameters"]) for s in specs]
    system = system_prompt("/tmp", specs, "")
    with tempfile.TemporaryDirectory() as tmp:
        bus = await open_bus(Path(tmp))
        await seed(bus, conversation(tokens))
        messages = await read_history(bus)

        async def no_list(_: Any) -> int | None:
            return None

        async def never_summarise(_: list[dict[str, Any]]) -> str:
            raise AssertionError("the window is four times the history: nothing is compacted")

        fitter = Fitter(bus, Windows(bus.store, no_list), Accounting(), Compactor(bus))
        await bus.publish(draft(SID, "session.context.window", {"window": tokens * 4}))
        plain: list[float] = []
        fitted: list[float] = []
        for _ in range(runs):
            t0 = time.perf_counter()
            client.build(lower_messages(messages, LoweringOptions(system=system)), tools=tools)
            plain.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            prepared = await fitter.prepare(
                SID, profile, never_summarise, messages, [], system, tools
            )
            client.build(lower_messages(prepared.view, LoweringOptions(system=system)), tools=tools)
            fitted.append(time.perf_counter() - t0)
        await bus.stop()
        await bus.store.close()
    await client.close()
    p, f = median_ms(plain), median_ms(fitted)
    print(f"token accounting per step, {len(messages)}-message history (median of {runs})")
    print(f"  step request work without it   {p:7.2f} ms")
    print(f"  with it (window, view, count)  {f:7.2f} ms  extra {f - p:+.2f} ms  target < 1 ms")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    await bench_compaction(args.tokens, max(1, args.runs // 3))
    await bench_estimate()
    await bench_accounting(args.tokens, args.runs)


if __name__ == "__main__":
    asyncio.run(main())
