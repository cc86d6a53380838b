"""Sessions and their messages through the real API, for the chat tests and bench/ui_chat.

Messages come from durable events published through the service's test hook
(`POST /api/test/events`, present only with DESK_TEST_HOOKS=1), the same bus and projection
the agent uses."""

from __future__ import annotations

from typing import Any

from tests.support.service import Service

MODEL = {"id": "test-model", "provider_id": "test"}
HOOK_BATCH = 1000  # the hook's limit per request


def create_session(service: Service, title: str = "Chat", directory: str = "/tmp") -> str:
    return str(
        service.request("POST", "/api/session", {"title": title, "directory": directory})["id"]
    )


def publish(service: Service, session_id: str, events: list[tuple[str, dict[str, Any]]]) -> None:
    items = [{"session_id": session_id, "type": kind, "data": data} for kind, data in events]
    for start in range(0, len(items), HOOK_BATCH):
        service.request("POST", "/api/test/events", {"events": items[start : start + HOOK_BATCH]})


def user(message_id: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    return [("session.prompted", {"message_id": message_id, "text": text, "mode": "queue"})]


def assistant(
    message_id: str, text: str, *, completed: bool = True
) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = [
        ("session.step.started", {"message_id": message_id, "agent": "build", "model": MODEL}),
        ("session.text", {"message_id": message_id, "text": text}),
    ]
    if completed:
        events.append(("session.step.ended", {"message_id": message_id, "finish": "stop"}))
    return events


def history(count: int) -> list[tuple[str, dict[str, Any]]]:
    """Alternating questions and Markdown answers (one with a highlighted code block in ten)."""
    events: list[tuple[str, dict[str, Any]]] = []
    for n in range(count // 2):
        events += user(f"u{n:05d}", f"Question {n}: how does part {n} work?")
        body = f"Part **{n}** works like this:\n\n- first it reads\n- then it writes\n"
        if n % 10 == 0:
            body += f"\n```python\ndef part_{n}(x):\n    return x * {n}\n```\n"
        events += assistant(f"a{n:05d}", body)
    return events


# Scrolls a chat to the top until every page is in; returns how many messages are listed.
LOAD_EVERY_PAGE_SCRIPT = """async () => {
            const el = document.querySelector('.chat-scroll')
            const frame = () => new Promise((resolve) => requestAnimationFrame(resolve))
            const done = () => {
                const chat = window.__desk.chat()
                const all = chat.listed.length === chat.messages.length
                return chat.olderDone && el.scrollTop === 0 && all
            }
            for (let i = 0; i < 100000 && !done(); i++) {
                el.scrollTop = 0
                await frame()
            }
            return window.__desk.chat().listed.length
        }"""

# Scrolls through the whole list, `step` px per frame, down and (with `back`) up again,
# watching long tasks (PerformanceObserver 'longtask'); returns [task durations in ms,
# messages rendered].
SCROLL_THROUGH_SCRIPT = """async ([step, back]) => {
            const el = document.querySelector('.chat-scroll')
            const frame = () => new Promise((resolve) => requestAnimationFrame(resolve))
            await frame()
            await frame()
            const tasks = []
            // The list is virtualised: every message must be rendered at some point on the way.
            const seen = new Set()
            const look = () => {
                const shown = el.querySelectorAll('.chat-messages .message')
                for (const m of shown) seen.add(m.dataset.id)
            }
            const observer = new PerformanceObserver((list) => {
                for (const entry of list.getEntries()) tasks.push(Math.round(entry.duration))
            })
            observer.observe({ type: 'longtask' })
            look() // the screen it starts on
            const bottom = () => el.scrollTop + el.clientHeight >= el.scrollHeight - 2
            for (let i = 0; i < 100000 && !bottom(); i++) {
                el.scrollBy(0, step)
                await frame()
                look()
            }
            for (let i = 0; back && i < 100000 && el.scrollTop > 0; i++) {
                el.scrollBy(0, -step)
                await frame()
                look()
            }
            await frame()
            observer.disconnect()
            return [tasks, seen.size]
        }"""
