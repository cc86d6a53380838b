import { describe, expect, test } from "vitest"
import {
  decorate,
  HIGHLIGHT_LIMIT,
  renderMarkdown,
  StreamingMarkdown,
} from "../src/chat/markdown.js"

const dom = (text) => {
  const div = document.createElement("div")
  div.innerHTML = renderMarkdown(text) // renderMarkdown sanitizes
  return div
}

describe("renderMarkdown", () => {
  test("raw HTML in the model's text stays text", () => {
    const div = dom('<img src=x onerror="alert(1)"> <script>alert(2)</script>')
    expect(div.querySelector("img, script")).toBeNull()
    expect(div.textContent).toContain("<img src=x onerror=")
  })

  test("javascript: and data: links lose their href; http links open outside with noopener", () => {
    const div = dom(
      "[a](javascript:alert(1)) [b](data:text/html,<b>x</b>) [c](https://example.com/x) [d](/api/pty)",
    )
    const links = [...div.querySelectorAll("a")]
    const hrefs = links.map((a) => a.getAttribute("href"))
    expect(hrefs.filter(Boolean)).toEqual(["https://example.com/x"])
    const safe = links.find((a) => a.getAttribute("href"))
    expect(safe.getAttribute("target")).toBe("_blank")
    expect(safe.getAttribute("rel")).toBe("noopener noreferrer")
    const raw = dom(
      '[a](javascript:alert(1)) <a href="javascript:alert(1)">x</a> <https://ok.example>',
    )
    expect([...raw.querySelectorAll("[href]")].map((a) => a.getAttribute("href"))).toEqual([
      "https://ok.example",
    ])
  })

  test("images are not loaded", () => {
    expect(dom("![beacon](https://evil.example/p.png)").querySelector("img")).toBeNull()
  })

  test("a closed fence naming a registered language is highlighted; others are escaped text", () => {
    expect(
      dom("```python\ndef f(): pass\n```").querySelector("code.language-python .hljs-keyword")
        ?.textContent,
    ).toBe("def")
    expect(dom("```\ndef f(): pass\n```").querySelector(".hljs-keyword")).toBeNull()
    expect(dom("```cobol\nMOVE A TO B\n```").querySelector("[class^=hljs]")).toBeNull()
    const open = dom("```python\ndef f(): pass")
    expect(open.querySelector("pre code").textContent).toBe("def f(): pass")
    expect(open.querySelector(".hljs-keyword")).toBeNull()
  })

  test("a fence over the size cap is not highlighted", () => {
    const big = "x = 1\n".repeat(Math.ceil(HIGHLIGHT_LIMIT / 6) + 1)
    expect(dom("```python\n" + big + "```").querySelector(".hljs-number")).toBeNull()
    expect(dom("```python\nx = 1\n```").querySelector(".hljs-number")).not.toBeNull()
  })

  test("code blocks are escaped inside the fence too", () => {
    const div = dom("```html\n<img src=x onerror=alert(1)>\n```")
    expect(div.querySelector("img")).toBeNull()
    expect(div.querySelector("pre").textContent).toContain("<img src=x onerror=alert(1)>")
  })
})

describe("code block tools", () => {
  test("a fence's language is its label beside the copy button, as text; no language, no label", () => {
    const div = dom("```Python extra words\nprint(1)\n```\n\n```\nplain\n```\n\n```c++\nx\n```")
    decorate(div)
    const tools = [...div.querySelectorAll("pre > .code-tools")]
    expect(tools.map((t) => t.querySelector(".code-lang")?.textContent ?? null)).toEqual([
      "python",
      null,
      "c++",
    ])
    expect(tools[0].querySelector(".code-copy").getAttribute("aria-label")).toBe("Copy python code")
    decorate(div) // idempotent
    expect(div.querySelectorAll(".code-tools")).toHaveLength(3)
  })

  test("an info string that is not a plain language name gives no label and no markup", () => {
    const div = dom('```<img src=x onerror=alert(1)>\nx\n```\n\n```"><b>hi</b>\ny\n```')
    decorate(div)
    expect(div.querySelectorAll(".code-lang")).toHaveLength(0)
    expect(div.querySelector("img, b")).toBeNull()
  })
})

describe("StreamingMarkdown", () => {
  function harness() {
    const frames = []
    const element = document.createElement("div")
    const renderer = new StreamingMarkdown(element, { schedule: (fn) => frames.push(fn) })
    const frame = () => frames.splice(0).forEach((fn) => fn())
    return { element, renderer, frames, frame }
  }

  test("many updates between frames render once", () => {
    const { renderer, frames, frame } = harness()
    renderer.update("Hel")
    renderer.update("Hello")
    renderer.update("Hello wor")
    expect(frames.length).toBe(1)
    frame()
    expect(renderer.renders.tail).toBe(1)
  })

  test("completed blocks are rendered once and kept; only the last block re-renders", () => {
    const { element, renderer, frame } = harness()
    let text = "# Title\n\nFirst paragraph.\n\n"
    renderer.update(text)
    frame()
    text += "Second para"
    renderer.update(text)
    frame()
    const committed = [...element.querySelectorAll(".md-block")]
    expect(committed.map((b) => b.textContent.trim())).toEqual(["Title", "First paragraph."])
    for (const word of [" grows", " and", " grows."]) {
      text += word
      renderer.update(text)
      frame()
    }
    // The committed block is the same node, never re-rendered.
    expect([...element.querySelectorAll(".md-block")]).toEqual(committed)
    expect(renderer.renders.committed).toBe(2)
    expect(element.querySelector(".md-tail").textContent.trim()).toBe(
      "Second para grows and grows.",
    )
    // Each frame parses only the text after the committed blocks.
    expect(renderer.committed).toBe("# Title\n\nFirst paragraph.\n\n".length)
  })

  test("a streaming fence is highlighted once it closes", () => {
    const { element, renderer, frame } = harness()
    renderer.update("Code:\n\n```js\nconst a = 1")
    frame()
    expect(element.querySelector(".hljs-keyword")).toBeNull()
    renderer.update("Code:\n\n```js\nconst a = 1\n```\n")
    frame()
    expect(element.querySelector(".hljs-keyword")?.textContent).toBe("const")
  })

  test("finish renders the whole text once, as a full render would", () => {
    const { element, renderer, frame } = harness()
    const text =
      "# A\n\n- one\n- two\n\nSee [x][ref].\n\n```python\nprint(1)\n```\n\n[ref]: https://example.com\n"
    for (let i = 1; i <= text.length; i += 7) {
      renderer.update(text.slice(0, i))
      frame()
    }
    renderer.finish(text)
    const full = document.createElement("div")
    full.innerHTML = renderMarkdown(text) // sanitized
    for (const tools of element.querySelectorAll(".code-tools")) tools.remove()
    expect(element.innerHTML).toBe(full.innerHTML)
    expect(renderer.renders.full).toBe(1)
    expect(element.querySelector("a").getAttribute("href")).toBe("https://example.com")
  })

  test("a replaced text (an edit) starts again instead of keeping stale blocks", () => {
    const { element, renderer, frame } = harness()
    renderer.update("Old block.\n\nOld tail")
    frame()
    renderer.update("New text only")
    frame()
    expect(element.textContent).not.toContain("Old")
    expect(element.textContent).toContain("New text only")
  })
})
