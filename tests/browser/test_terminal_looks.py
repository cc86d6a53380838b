"""How terminal text looks (issue 12, item 9): every ANSI colour pair readable in both themes,
CJK and emoji drawn with real glyphs, links opened by Ctrl+click only, a thin scrollbar, and
the window titled after the tab in view."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_tabs import focus_terminal, open_ui, shot
from tests.support.browser_terminals import (
    activate,
    buffer_lines,
    create_shell,
    type_line,
    wait_attached,
    wait_for_line,
)
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.shared_service]

# Every foreground on the default background, and black and bright white text on every
# background; each cell is labelled so the page can report the pair.
COLOURS = (
    "for c in 30 31 32 33 34 35 36 37 90 91 92 93 94 95 96 97; do "
    "printf '\\e[%sm F%s \\e[0m' $c $c; done; echo; "
    "for c in 40 41 42 43 44 45 46 47 100 101 102 103 104 105 106 107; do "
    "printf '\\e[30;%sm K%s \\e[97;%sm W%s \\e[0m' $c $c $c $c; done; echo; echo colours-done"
)

CONTRASTS = """() => {
  const parse = (css) => (css.match(/[\\d.]+/g) || []).map(Number)
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4 }
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b)
  }
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p)
    return (x + 0.05) / (y + 0.05)
  }
  const pane = document.querySelector('.pane:not([hidden])')
  const screen = pane.querySelector('.xterm-rows')
  const base = parse(getComputedStyle(pane.querySelector('.xterm-viewport')).backgroundColor)
  const out = {}
  for (const span of screen.querySelectorAll('span')) {
    const label = span.textContent.trim()
    if (!/^[FKW]\\d+$/.test(label)) continue
    const style = getComputedStyle(span)
    const bg = parse(style.backgroundColor)
    const back = bg.length === 4 && bg[3] === 0 ? base : bg.length ? bg.slice(0, 3) : base
    out[label] = ratio(parse(style.color).slice(0, 3), back)
  }
  return out
}"""


def use_dom_renderer(page: Page) -> None:
    # The DOM renderer draws cells as styled spans: the page can read their colours.
    page.add_init_script("localStorage.setItem('desk.renderer', 'dom')")


def test_every_ansi_colour_pair_reads_at_wcag_aa_in_both_themes(
    page: Page, service: Service
) -> None:
    use_dom_renderer(page)
    pty_id = create_shell(service, "colours")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    focus_terminal(page, pty_id)
    type_line(page, COLOURS)
    wait_for_line(page, pty_id, "colours-done")
    for theme in ("light", "dark"):
        page.evaluate("(t) => localStorage.setItem('desk.theme', t)", theme)
        page.reload()
        page.wait_for_function("() => window.__desk && window.__desk.state().loaded")
        wait_attached(page, pty_id)
        wait_for_line(page, pty_id, "colours-done")

        def measured() -> dict[str, Any] | None:
            found: dict[str, Any] = page.evaluate(CONTRASTS)
            return found if len(found) == 48 else None

        ratios = wait_until(measured, what=f"48 coloured cells in the {theme} theme")
        shot(page, f"9-colours-{theme}")
        poor = {label: round(value, 2) for label, value in ratios.items() if value < 4.5}
        assert not poor, f"{theme}: below 4.5:1: {poor}"


GLYPHS = """([family, text]) => {
  const draw = (t) => {
    const canvas = document.createElement('canvas')
    canvas.width = 64; canvas.height = 64
    const ctx = canvas.getContext('2d')
    ctx.font = `40px ${family}`
    ctx.fillStyle = '#000'
    ctx.fillText(t, 4, 48)
    return ctx.getImageData(0, 0, 64, 64).data
  }
  const missing = draw('\\u{10FFFD}')  // a code point no font has: the "empty box"
  const drawn = draw(text)
  let differs = 0, coloured = 0, inked = 0
  for (let i = 0; i < drawn.length; i += 4) {
    if (drawn[i + 3] !== missing[i + 3]) differs++
    if (drawn[i + 3] > 0) inked++
    const rgb = [drawn[i], drawn[i + 1], drawn[i + 2]]
    if (Math.max(...rgb) - Math.min(...rgb) > 40) coloured++
  }
  return { differs, coloured, inked }
}"""


def test_cjk_and_emoji_draw_real_glyphs_not_boxes(page: Page, service: Service) -> None:
    pty_id = create_shell(service, "glyphs")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    focus_terminal(page, pty_id)
    type_line(page, "printf '\\u4e2d\\u6587 \\U0001F600 done\\n'")
    wait_for_line(page, pty_id, "中文 😀 done")
    family = page.evaluate(
        "(id) => document.querySelector(`#pane-${id} .xterm-helper-textarea`) &&"
        " window.__desk.fontFamily(id)",
        pty_id,
    )
    assert "Noto" in family
    cjk = page.evaluate(GLYPHS, [family, "中"])
    emoji = page.evaluate(GLYPHS, [family, "😀"])
    assert cjk["inked"] > 50, cjk
    assert cjk["differs"] > 50, cjk
    assert emoji["coloured"] > 50, emoji
    shot(page, "9-cjk-and-emoji")


def test_links_open_on_ctrl_click_only(page: Page, service: Service) -> None:
    use_dom_renderer(page)
    pty_id = create_shell(service, "links")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    page.evaluate(
        "() => { window.__opened = []; window.open = (url) => { window.__opened.push(url) } }"
    )
    focus_terminal(page, pty_id)
    type_line(page, "clear; echo https://example.com/desk-link")
    wait_for_line(page, pty_id, "https://example.com/desk-link")
    cell = page.locator(f"#pane-{pty_id} .xterm-rows span", has_text="example.com").first
    box = cell.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.move(x + 2, y)
    page.mouse.click(x + 2, y)
    assert page.evaluate("() => window.__opened") == []
    page.keyboard.down("Control")
    page.mouse.move(x + 4, y)
    page.mouse.click(x + 4, y)
    page.keyboard.up("Control")
    wait_until(
        lambda: page.evaluate("() => window.__opened") == ["https://example.com/desk-link"],
        what="opened once on Ctrl+click",
    )


def test_scrollback_shows_a_thin_scrollbar(page: Page, service: Service) -> None:
    pty_id = create_shell(service, "scrolled")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    focus_terminal(page, pty_id)
    type_line(page, "seq 1 200")
    wait_until(lambda: buffer_lines(page, pty_id)[-1] == "$", what="rows")
    viewport = page.locator(f"#pane-{pty_id} .xterm-viewport")
    assert viewport.evaluate("(el) => getComputedStyle(el).scrollbarWidth") == "thin"
    assert viewport.evaluate("(el) => getComputedStyle(el).overflowY") == "scroll"
    assert viewport.evaluate("(el) => el.scrollHeight > el.clientHeight")


def test_window_title_names_the_tab_in_view(page: Page, service: Service) -> None:
    first = create_shell(service, "alpha")
    second = create_shell(service, "beta")
    open_ui(page, service, 2)
    wait_attached(page, first)
    expect(page).to_have_title("alpha — Desk")
    activate(page, second)
    expect(page).to_have_title("beta — Desk")
    service.request("PATCH", f"/api/pty/{second}", {"title": "gamma"})
    expect(page).to_have_title("gamma — Desk")
    focus_terminal(page, second)
    type_line(page, "exit")
    page.locator(f"#pane-{second} .pane-exit").get_by_role("button", name="Close").click()
    expect(page).to_have_title("alpha — Desk")
