"""A STRICT fake chat-completions endpoint: scripted streamed replies, every rule enforced.

`FakeProvider` is a real aiohttp server on 127.0.0.1 speaking `POST /v1/chat/completions`
with SSE chunks shaped like OpenAI's and Groq's (`chat.completion.chunk`, a usage-only
final chunk, `data: [DONE]`). Every request is recorded. Every rule of
docs/STRICT-PROVIDER.md is checked here, independently of Desk's own preflight validator
(a shared implementation would prove nothing), and a violation is answered 400 with the
real providers' error texts in OpenAI's error shape and counted in `invalid_requests`:
tests assert that count is zero.

Given a `window`, the fake counts each prompt's tokens with its own crude tokenizer (not
Desk's estimate), reports that count as `usage.prompt_tokens`, and answers a prompt over the
window 400 in one of six real servers' words (`overflow`: rule 8's OpenAI, Groq, vLLM,
llama.cpp, OpenRouter, Anthropic texts), recorded in `overflows`. `models` serves
`GET /v1/models` (absent: 404).

Replies are scripted with the builders at the bottom (`text_reply`, `tool_call_reply`,
`error_reply`, `cut_reply`, `stream_error_reply`); with nothing scripted, the fake answers
a short text so a test that only cares about requests need not script anything.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MISTRAL_ID = re.compile(r"^[a-zA-Z0-9]{9}$")

# Exact texts seen from real providers (STRICT-PROVIDER.md); keep them byte for byte.
RULE1_OPENAI = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
RULE1_DEEPSEEK = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. (insufficient tool messages following tool_calls message)"
)
RULE2 = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
RULE3 = (
    "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}', in messages[{first}] "
    "and messages[{second}]."
)
RULE4_EMPTY = "Empty tool_calls is not supported in message."
RULE4_CONTENT = (
    "Invalid type for 'messages[{i}].content': expected a string or null when 'tool_calls' "
    "is present."
)
RULE5_MISSING = "Missing required parameter: 'messages[{i}].tool_calls[{j}].{what}'."
RULE5_TYPE = "Invalid value: {value}. Supported values are: 'function'."
RULE5_ARGUMENTS = (
    "Invalid 'messages[{i}].tool_calls[{j}].function.arguments': expected a string "
    "containing valid JSON."
)
RULE6_ID = "'messages.{i}.tool_call_id' : property 'tool_call_id' is missing"
RULE6_CONTENT = "'messages.{i}.content' : value must be a string"
RULE7_ROLE = "Unexpected role 'user' after role 'tool'"
RULE7_ID = "Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9."
TOOL_NAME_TEXT = (
    "Invalid 'tools[{i}].function.name': string does not match pattern. Expected a string "
    "that matches the pattern '^[a-zA-Z0-9_-]+$'."
)
ROLES = ("system", "developer", "user", "assistant", "tool")

# Rule 8: the context-overflow answers, per server (window W, prompt N).
OVERFLOW_OPENAI = (
    "This model's maximum context length is {window} tokens. However, your messages resulted "
    "in {prompt} tokens. Please reduce the length of the messages."
)
OVERFLOW_GROQ = "Please reduce the length of the messages or completion."
OVERFLOW_VLLM = (
    "This model's maximum context length is {window} tokens. However, you requested {total} "
    "tokens ({prompt} in the messages, {completion} in the completion). Please reduce the "
    "length of the messages or completion."
)
OVERFLOW_LLAMA = "the request exceeds the available context size, try increasing it"
OVERFLOW_OPENROUTER = (
    "This endpoint's maximum context length is {window} tokens. However, you requested about "
    "{prompt} tokens ({prompt} of text input). Please reduce the length of either one, or use "
    'the "middle-out" transform to compress your prompt automatically.'
)
OVERFLOW_ANTHROPIC = "prompt is too long: {prompt} tokens > {window} maximum"
OVERFLOW_STYLES = ("openai", "groq", "vllm", "llamacpp", "openrouter", "anthropic")
_WORD = re.compile(r"\w+|[^\w\s]")


def count_text(text: str) -> int:
    """The fake's own tokenizer: a word is one token per 6 characters started, a symbol one."""
    return sum(1 + (len(w) - 1) // 6 for w in _WORD.findall(text))


def count_prompt(body: dict[str, Any]) -> int:
    """The fake's count of a request's prompt: messages (4 a message) and tools."""
    total = 3
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        total += 4
        content = message.get("content")
        if isinstance(content, str):
            total += count_text(content)
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                total += 3 + count_text(str(function.get("name", "")))
                total += count_text(str(function.get("arguments", "")))
    if body.get("tools"):
        total += count_text(json.dumps(body["tools"]))
    return total


def overflow_answer(style: str, window: int, prompt: int, completion: int = 0) -> bytes:
    """The body a server of `style` answers (status 400) to a prompt over its window."""
    if style == "openai":
        return json.dumps(
            {
                "error": {
                    "message": OVERFLOW_OPENAI.format(window=window, prompt=prompt),
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            }
        ).encode()
    if style == "groq":
        return json.dumps(
            {
                "error": {
                    "message": OVERFLOW_GROQ,
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            }
        ).encode()
    if style == "vllm":
        message = OVERFLOW_VLLM.format(
            window=window, total=prompt + completion, prompt=prompt, completion=completion
        )
        return json.dumps(
            {"object": "error", "type": "BadRequestError", "code": 400, "message": message}
        ).encode()
    if style == "llamacpp":
        return json.dumps(
            {
                "error": {
                    "code": 400,
                    "type": "exceed_context_size_error",
                    "message": OVERFLOW_LLAMA,
                    "n_prompt_tokens": prompt,
                    "n_ctx": window,
                }
            }
        ).encode()
    if style == "openrouter":
        message = OVERFLOW_OPENROUTER.format(window=window, prompt=prompt)
        return json.dumps({"error": {"message": message, "code": 400}}).encode()
    if style == "anthropic":
        message = OVERFLOW_ANTHROPIC.format(window=window, prompt=prompt)
        return json.dumps(
            {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        ).encode()
    raise ValueError(f"unknown overflow style {style!r}")


class Violation(Exception):
    def __init__(self, message: str, param: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


def error_body(message: str, param: str | None, error_type: str = "invalid_request_error") -> bytes:
    return json.dumps(
        {"error": {"message": message, "type": error_type, "param": param, "code": None}}
    ).encode()


def check_request(body: object, *, mistral: bool = False, rule1: str = "openai") -> None:
    """Raise Violation for the first rule `body` breaks, the way a strict endpoint would."""
    if not isinstance(body, dict):
        raise Violation("The request body must be a JSON object.", None)
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise Violation("you must provide a model parameter", "model")
    if body.get("stream") is not True:
        raise Violation("This fake provider only streams: 'stream' must be true.", "stream")
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise Violation("Invalid type for 'tools': expected an array.", "tools")
        for i, tool in enumerate(tools):
            function = tool.get("function") if isinstance(tool, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            if not isinstance(name, str) or not TOOL_NAME.match(name):
                raise Violation(TOOL_NAME_TEXT.format(i=i), f"tools[{i}].function.name")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Violation(
            "Invalid 'messages': empty array. Expected an array with minimum length 1.", "messages"
        )
    check_messages(messages, mistral=mistral, rule1=rule1)


def check_messages(messages: list[Any], *, mistral: bool, rule1: str) -> None:
    owed: list[str] = []  # ids of the last tool_calls message not yet answered
    owed_at = 0
    nearest: set[str] = set()  # ids of the nearest preceding assistant's tool_calls
    answered_at: dict[str, int] = {}
    previous = ""
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise Violation(f"Invalid value for 'messages[{i}].role'.", f"messages.[{i}].role")
        role = message["role"]
        if owed and role != "tool":
            text = (
                RULE1_DEEPSEEK if rule1 == "deepseek" else RULE1_OPENAI.format(ids=", ".join(owed))
            )
            raise Violation(text, f"messages.[{owed_at}].role")
        if mistral and role == "user" and previous == "tool":
            raise Violation(RULE7_ROLE, None)
        if role == "assistant":
            nearest = set()
            if "tool_calls" in message and message["tool_calls"] is not None:
                calls = message["tool_calls"]
                if not isinstance(calls, list) or not calls:
                    raise Violation(RULE4_EMPTY, f"messages.[{i}].tool_calls")
                content = message.get("content")
                if content is not None and not isinstance(content, str):
                    raise Violation(RULE4_CONTENT.format(i=i), f"messages[{i}].content")
                ids: list[str] = []
                for j, call in enumerate(calls):
                    ids.append(_check_call(i, j, call, mistral))
                owed = list(ids)
                owed_at = i
                nearest = set(ids)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise Violation(RULE6_ID.format(i=i), f"messages.{i}.tool_call_id")
            if not isinstance(message.get("content"), str):
                raise Violation(RULE6_CONTENT.format(i=i), f"messages.{i}.content")
            if call_id in answered_at:
                raise Violation(
                    RULE3.format(id=call_id, first=answered_at[call_id], second=i), "messages"
                )
            if call_id not in nearest:
                raise Violation(RULE2, f"messages.[{i}].role")
            answered_at[call_id] = i
            if call_id in owed:
                owed.remove(call_id)
        previous = role
    if owed:
        text = RULE1_DEEPSEEK if rule1 == "deepseek" else RULE1_OPENAI.format(ids=", ".join(owed))
        raise Violation(text, f"messages.[{owed_at}].role")


def _check_call(i: int, j: int, call: object, mistral: bool) -> str:
    if not isinstance(call, dict):
        raise Violation(
            f"Invalid type for 'messages[{i}].tool_calls[{j}]': expected an object.", None
        )
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise Violation(
            RULE5_MISSING.format(i=i, j=j, what="id"), f"messages[{i}].tool_calls[{j}].id"
        )
    if call.get("type") != "function":
        raise Violation(
            RULE5_TYPE.format(value=json.dumps(call.get("type"))),
            f"messages[{i}].tool_calls[{j}].type",
        )
    function = call.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or not name:
        raise Violation(
            RULE5_MISSING.format(i=i, j=j, what="function.name"),
            f"messages[{i}].tool_calls[{j}].function.name",
        )
    assert isinstance(function, dict)
    if not _is_json_text(function.get("arguments")):
        raise Violation(
            RULE5_ARGUMENTS.format(i=i, j=j), f"messages[{i}].tool_calls[{j}].function.arguments"
        )
    if mistral and not MISTRAL_ID.match(call_id):
        raise Violation(RULE7_ID.format(id=call_id), None)
    return call_id


def _counted(piece: bytes, prompt: int) -> bytes:
    """A usage chunk with the fake's own prompt count."""
    payload = json.loads(piece[len(b"data: ") :])
    usage = payload["usage"]
    usage["prompt_tokens"] = prompt
    usage["total_tokens"] = prompt + usage.get("completion_tokens", 0)
    return sse(payload)


def _is_json_text(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        json.loads(value)
    except ValueError:
        return False
    return True


# --- replies -----------------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted answer. `chunks` are written one write each (one network chunk each,
    roughly); a `status` other than 200 answers `body` instead of a stream."""

    chunks: list[bytes] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    cut_after: int | None = None  # drop the connection after this many chunks
    gate: asyncio.Event | None = None  # wait for it after `gate_after` chunks
    gate_after: int = 0


def sse(payload: object) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def chunk(
    delta: dict[str, Any], finish: str | None = None, *, model: str = "fake-model"
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1787755209,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def usage_chunk(prompt: int = 11, completion: int = 7, reasoning: int = 0) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1787755209,
        "model": "fake-model",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        },
    }


def text_reply(
    *pieces: str,
    reasoning: Sequence[str] = (),
    reasoning_field: str = "reasoning",
    finish: str = "stop",
    usage: bool = True,
    done: bool = True,
) -> Reply:
    chunks = [sse(chunk({"role": "assistant", "content": ""}))]
    chunks += [sse(chunk({reasoning_field: piece})) for piece in reasoning]
    chunks += [sse(chunk({"content": piece})) for piece in pieces]
    chunks.append(sse(chunk({}, finish)))
    if usage:
        chunks.append(sse(usage_chunk(reasoning=len(reasoning))))
    if done:
        chunks.append(DONE)
    return Reply(chunks)


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: dict[str, Any]


def tool_call_reply(*calls: Call, text: str = "", split: int = 3) -> Reply:
    """Tool calls whose `arguments` arrive in pieces of `split` characters, OpenAI style:
    the first delta of each call carries id, type and name; later ones only arguments."""
    chunks = [sse(chunk({"role": "assistant", "content": text or None}))]
    for index, call in enumerate(calls):
        raw = json.dumps(call.arguments)
        chunks.append(
            sse(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
        )
        for start in range(0, len(raw), max(1, split)):
            piece = raw[start : start + split]
            chunks.append(
                sse(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
            )
    chunks.append(sse(chunk({}, "tool_calls")))
    chunks.append(sse(usage_chunk()))
    chunks.append(DONE)
    return Reply(chunks)


def error_reply(
    status: int,
    message: str = "Rate limit reached",
    *,
    retry_after: str | None = None,
    retry_after_ms: str | None = None,
    error_type: str = "rate_limit_error",
) -> Reply:
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["retry-after"] = retry_after
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    return Reply(status=status, headers=headers, body=error_body(message, None, error_type))


def cut_reply(*pieces: str) -> Reply:
    """Streams `pieces` of text (maybe none) and then drops the connection."""
    reply = text_reply(*pieces)
    reply.cut_after = 1 + len(pieces)
    return reply


def stream_error_reply(
    *pieces: str, message: str = "Upstream overloaded", code: int = 502
) -> Reply:
    """Some text, then an `{"error": ...}` object inside the 200 stream (OpenRouter style)."""
    chunks = [sse(chunk({"role": "assistant", "content": ""}))]
    chunks += [sse(chunk({"content": piece})) for piece in pieces]
    chunks.append(sse({"error": {"message": message, "code": code}}))
    return Reply(chunks)


# --- the server --------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    body: Any
    headers: dict[str, str]
    status: int = 0


@dataclass
class InvalidRequest:
    index: int  # position in `requests`
    message: str
    param: str | None


class FakeProvider:
    """`async with FakeProvider() as fake:` then point a client at `fake.base_url`."""

    def __init__(
        self,
        *,
        mistral: bool = False,
        api_key: str | None = None,
        rule1: str = "openai",
        window: int | None = None,
        overflow: str = "openai",
        models: list[dict[str, Any]] | None = None,
        route: Callable[[Any], Reply | None] | None = None,
    ) -> None:
        if overflow not in OVERFLOW_STYLES:
            raise ValueError(f"unknown overflow style {overflow!r}")
        self.window = window
        self.overflow = overflow
        self.models = models
        self.route = route  # answers a request before the script does, when it returns a reply
        self.overflows: list[int] = []  # positions in `requests` answered as over the window
        self.mistral = mistral
        self.api_key = api_key
        self.rule1 = rule1
        self.replies: list[Reply] = []
        self.requests: list[RecordedRequest] = []
        self.invalid_requests: list[InvalidRequest] = []
        self.default = text_reply("Done.")
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        self.request_seen = asyncio.Event()

    @property
    def invalid_count(self) -> int:
        return len(self.invalid_requests)

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def start(self) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeProvider:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _models(self, request: web.Request) -> web.Response:
        if self.models is None:
            return web.Response(status=404, text="404 page not found")
        return web.json_response({"object": "list", "data": self.models})

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = None
        recorded = RecordedRequest(body, dict(request.headers))
        self.requests.append(recorded)
        self.request_seen.set()
        if (
            self.api_key is not None
            and request.headers.get("Authorization") != f"Bearer {self.api_key}"
        ):
            recorded.status = 401
            return web.Response(
                status=401,
                body=error_body("Invalid API Key", None),
                content_type="application/json",
            )
        try:
            if body is None:
                raise Violation(
                    "We could not parse the JSON body of your request. (HINT: This likely means "
                    "you aren't using your HTTP library correctly.",
                    None,
                )
            check_request(body, mistral=self.mistral, rule1=self.rule1)
        except Violation as violation:
            recorded.status = 400
            self.invalid_requests.append(
                InvalidRequest(len(self.requests) - 1, violation.message, violation.param)
            )
            return web.Response(
                status=400,
                body=error_body(violation.message, violation.param),
                content_type="application/json",
            )
        prompt = count_prompt(body) if self.window is not None else None
        if prompt is not None and self.window is not None and prompt > self.window:
            recorded.status = 400
            self.overflows.append(len(self.requests) - 1)
            completion = body.get("max_tokens") or body.get("max_completion_tokens") or 0
            return web.Response(
                status=400,
                body=overflow_answer(self.overflow, self.window, prompt, int(completion)),
                content_type="application/json",
            )
        routed = self.route(body) if self.route is not None else None
        if routed is not None:
            reply = routed
        else:
            reply = self.replies.pop(0) if self.replies else self.default
        recorded.status = reply.status
        if reply.status != 200:
            return web.Response(
                status=reply.status,
                body=reply.body,
                headers=reply.headers,
                content_type="application/json",
            )
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                **reply.headers,
            }
        )
        await response.prepare(request)
        for n, piece in enumerate(reply.chunks):
            if reply.gate is not None and n == reply.gate_after:
                await reply.gate.wait()
            if reply.cut_after is not None and n == reply.cut_after:
                transport = request.transport
                if transport is not None:
                    transport.abort()
                return response
            if prompt is not None and b'"usage"' in piece:
                piece = _counted(piece, prompt)
            await response.write(piece)
        await response.write_eof()
        return response
