"""SSE parse throughput of the provider client against a bare byte count, same run.

A local aiohttp server streams one prebuilt chat-completions body (Groq-shaped text
deltas, reasoning deltas, a tool call with split arguments, usage, `[DONE]`). Each run
reads it twice over a real socket: once with a bare `iter_any()` loop that only counts
bytes (the baseline: what aiohttp costs), once through `ChatClient.stream_body` (SSE
framing, JSON decoding, event assembly). Also the same body through `parse_stream` in
memory, without the network, and `json.loads` of each chunk alone (where most of the time
goes). Prints medians of the runs and the client/baseline ratio.

    .venv/bin/python bench/provider.py [--runs 5] [--deltas 50000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import time

import aiohttp
from aiohttp import web

from desktop.provider.client import ChatClient
from desktop.provider.profiles import make_profile
from desktop.provider.stream import TextDelta, parse_stream

WRITE = 64 * 1024


def build_body(deltas: int) -> bytes:
    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        payload = {
            "id": "chatcmpl-660048b0-3c99-4215-a582-e116b77eb881",
            "object": "chat.completion.chunk",
            "created": 1787755209,
            "model": "qwen/qwen3-32b",
            "system_fingerprint": "fp_66891002f6",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"

    parts = [chunk({"role": "assistant", "content": ""})]
    parts += [chunk({"reasoning": f"step {i} "}) for i in range(deltas // 10)]
    parts += [chunk({"content": f"word{i} "}) for i in range(deltas)]
    parts.append(
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": ""},
                    }
                ]
            }
        )
    )
    args = json.dumps({"path": "x" * 2000})
    parts += [
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i : i + 8]}}]})
        for i in range(0, len(args), 8)
    ]
    parts.append(chunk({}, "tool_calls"))
    parts.append(b'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\n')
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


async def serve(body: bytes) -> tuple[web.AppRunner, str]:
    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for start in range(0, len(body), WRITE):
            await response.write(body[start : start + WRITE])
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    await web.SockSite(runner, sock).start()
    return runner, f"http://127.0.0.1:{port}/v1"


REQUEST = {"model": "m", "messages": [{"role": "user", "content": "go"}], "stream": True}


async def bare(http: aiohttp.ClientSession, url: str) -> tuple[float, int]:
    start = time.perf_counter()
    total = 0
    async with http.post(url + "/chat/completions", json=REQUEST) as response:
        async for chunk in response.content.iter_any():
            total += len(chunk)
    return time.perf_counter() - start, total


async def client(chat: ChatClient) -> tuple[float, int]:
    start = time.perf_counter()
    texts = 0
    async for event in chat.stream_body(REQUEST):
        if isinstance(event, TextDelta):
            texts += 1
    return time.perf_counter() - start, texts


async def main(runs: int, deltas: int) -> None:
    body = build_body(deltas)
    runner, url = await serve(body)
    mb = len(body) / 1e6
    bare_times: list[float] = []
    client_times: list[float] = []
    memory_times: list[float] = []
    json_times: list[float] = []
    payloads = [frame[6:] for frame in body.split(b"\n\n") if frame.startswith(b"data: {")]
    pieces = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    try:
        async with aiohttp.ClientSession() as http:
            chat = ChatClient(
                make_profile("openai-compatible", base_url=url, model="m"), session=http
            )
            for _ in range(runs):
                elapsed, size = await bare(http, url)
                assert size == len(body)
                bare_times.append(elapsed)
                elapsed, texts = await client(chat)
                assert texts == deltas
                client_times.append(elapsed)
                start = time.perf_counter()
                parse_stream(pieces)
                memory_times.append(time.perf_counter() - start)
                start = time.perf_counter()
                for payload in payloads:
                    json.loads(payload)
                json_times.append(time.perf_counter() - start)
    finally:
        await runner.cleanup()
    b, c, m, j = (
        statistics.median(t) for t in (bare_times, client_times, memory_times, json_times)
    )
    print(
        f"body: {mb:.1f} MB, {deltas} text deltas (+{deltas // 10} reasoning, 1 tool call); "
        f"medians of {runs} runs"
    )
    print(f"  bare iter_any byte count (baseline): {mb / b:8.1f} MB/s")
    print(
        f"  ChatClient.stream_body             : {mb / c:8.1f} MB/s "
        f"({deltas / c:,.0f} text deltas/s), ratio {b / c:.2f}x of baseline"
    )
    print(
        f"  parse_stream in memory, 4 KiB chunks: {mb / m:8.1f} MB/s "
        f"({deltas / m:,.0f} text deltas/s)"
    )
    print(
        f"  json.loads of each chunk alone      : {mb / j:8.1f} MB/s "
        f"(the floor for any JSON-decoding client; parse_stream takes {m / j:.2f}x its time)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=50000)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.deltas))
