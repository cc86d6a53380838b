"""axe-core in the page: its serious and critical violations, and a readable account of them.
axe comes from web/node_modules (a devDependency) and is evaluated over the DevTools protocol,
which the page's Content-Security-Policy does not govern, so the page keeps its real policy."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from tests.support.service import WEB

AXE = WEB / "node_modules" / "axe-core" / "axe.min.js"

# The serious and critical violations within `parts` (CSS selectors; none: the whole
# document), each with a few of its nodes.
RUN_AXE = """async (parts) => {
    const context = parts ? { include: parts.map((part) => [part]) } : document
    const result = await window.axe.run(context, { resultTypes: ['violations'] })
    return result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => ({
            id: v.id,
            impact: v.impact,
            help: v.help,
            nodes: v.nodes.slice(0, 6).map((n) => ({
                target: n.target.join(' '),
                html: n.html.slice(0, 160),
                why: n.failureSummary,
            })),
        }))
}"""


def violations(page: Page, parts: list[str] | None = None) -> list[dict[str, Any]]:
    """axe's serious and critical violations in the page (or only within `parts`)."""
    assert AXE.is_file(), "axe-core missing: run npm ci in web/"
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text() + "\n;0")
    found: list[dict[str, Any]] = page.evaluate(RUN_AXE, parts)
    return found


def described(found: dict[str, list[dict[str, Any]]]) -> str:
    """The violations found in each scene, a line each, with their nodes below."""
    lines = []
    for scene, items in found.items():
        for v in items:
            lines.append(f"{scene}: {v['impact']} {v['id']} ({v['help']})")
            lines += [f"    {n['target']}: {n['html']}\n      {n['why']}" for n in v["nodes"]]
    return "\n".join(lines)
