// Markdown for assistant text: markdown-it (html:false, no images) + highlight.js core, then
// sanitize() before any sink. Highlighting runs only on closed fences naming a registered
// language, up to HIGHLIGHT_LIMIT characters: an unclosed fence is still streaming, and a
// huge one would stall the page.
//
// While an answer streams, StreamingMarkdown renders completed top-level blocks once and
// re-renders only the last block, at most once per animation frame (re-parsing the whole
// text per token is quadratic); finish() does one full render when the message ends.

import MarkdownIt from "markdown-it"
import hljs from "highlight.js/lib/core"
import bash from "highlight.js/lib/languages/bash"
import css from "highlight.js/lib/languages/css"
import diff from "highlight.js/lib/languages/diff"
import go from "highlight.js/lib/languages/go"
import javascript from "highlight.js/lib/languages/javascript"
import json from "highlight.js/lib/languages/json"
import python from "highlight.js/lib/languages/python"
import rust from "highlight.js/lib/languages/rust"
import sql from "highlight.js/lib/languages/sql"
import typescript from "highlight.js/lib/languages/typescript"
import xml from "highlight.js/lib/languages/xml"
import yaml from "highlight.js/lib/languages/yaml"
import { sanitize } from "./sanitize.js"

export const HIGHLIGHT_LIMIT = 20_000

for (const [name, language] of Object.entries({
  bash,
  css,
  diff,
  go,
  javascript,
  json,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
})) {
  hljs.registerLanguage(name, language)
}

const md = new MarkdownIt({ html: false, linkify: true, typographer: false })
md.disable("image") // a remote image would be a beacon; the link text stays

const CLOSING_FENCE = /^[\s>]*(`{3,}|~{3,})\s*$/

function fenceClosed(token, env) {
  const [start, end] = token.map ?? [0, 0]
  if (end - 1 <= start) return false
  const match = CLOSING_FENCE.exec(env.lines[end - 1] ?? "")
  return Boolean(match) && match[1][0] === token.markup[0] && match[1].length >= token.markup.length
}

md.renderer.rules.fence = (tokens, index, options, env) => {
  const token = tokens[index]
  const lang = token.info.trim().split(/\s+/, 1)[0].toLowerCase()
  const named = /^[a-z0-9+#_-]{1,32}$/.test(lang)
  const code = token.content
  const body =
    named && hljs.getLanguage(lang) && code.length <= HIGHLIGHT_LIMIT && fenceClosed(token, env)
      ? hljs.highlight(code, { language: lang, ignoreIllegals: true }).value
      : md.utils.escapeHtml(code)
  return `<pre><code${named ? ` class="language-${lang}"` : ""}>${body}</code></pre>\n`
}

const normalise = (text) => text.replace(/\r\n?/g, "\n")

/** Markdown source to sanitised markup (TrustedHTML under Trusted Types). */
export function renderMarkdown(text) {
  const source = normalise(text)
  const env = { lines: source.split("\n") }
  return sanitize(md.render(source, env))
}

/** Rendered markup of finished texts, newest last: a virtualised list renders a message again
 * each time it scrolls back into view, and parsing + sanitising is most of that cost. */
const rendered = new Map()
const RENDERED_MAX = 500

/** renderMarkdown for a finished text, remembered (the markup is immutable TrustedHTML). */
export function renderMarkdownCached(text) {
  let markup = rendered.get(text)
  if (markup === undefined) {
    markup = renderMarkdown(text)
    if (rendered.size >= RENDERED_MAX) rendered.delete(rendered.keys().next().value)
  } else {
    rendered.delete(text)
  }
  rendered.set(text, markup)
  return markup
}

/** A code block's language, from its sanitised `language-…` class (the fence's info string's
 * first word, as the renderer checked it), or null. */
export function codeLanguage(pre) {
  const code = pre.querySelector(":scope > code")
  for (const name of code?.classList ?? [])
    if (name.startsWith("language-")) return name.slice("language-".length)
  return null
}

/**
 * Adds the tools of a code block to every one under `root` that lacks them: the language label
 * when the fence named one (set as text, never markup) and the copy button beside it (our DOM,
 * not the model's).
 */
export function decorate(root) {
  for (const pre of root.querySelectorAll("pre")) {
    if (pre.querySelector(":scope > .code-tools")) continue
    const tools = document.createElement("span")
    tools.className = "code-tools"
    const language = codeLanguage(pre)
    if (language) {
      const label = document.createElement("span")
      label.className = "code-lang"
      label.textContent = language
      tools.append(label)
    }
    const button = document.createElement("button")
    button.type = "button"
    button.className = "code-copy"
    button.textContent = "Copy"
    button.setAttribute("aria-label", language ? `Copy ${language} code` : "Copy code")
    tools.append(button)
    pre.prepend(tools)
  }
}

/** Index of the first token of the last top-level block, or -1 when there is one block or none. */
function lastBlockStart(tokens) {
  let last = -1
  let count = 0
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]
    if (token.level === 0 && token.nesting !== -1 && token.map) {
      last = i
      count++
    }
  }
  return count >= 2 ? last : -1
}

export class StreamingMarkdown {
  /** `schedule` defaults to requestAnimationFrame (tests pass their own). */
  constructor(element, { schedule = (fn) => requestAnimationFrame(fn) } = {}) {
    this.element = element
    this.schedule = schedule
    this.text = ""
    this.committed = 0 // characters of `text` rendered into committed blocks
    this.pending = false
    this.done = false
    this.renders = { committed: 0, tail: 0, full: 0 } // counts, for tests and benchmarks
    this.tail = document.createElement("div")
    this.tail.className = "md-tail"
    element.replaceChildren(this.tail)
  }

  update(text) {
    text = normalise(text)
    if (this.done) return
    if (!text.startsWith(this.text.slice(0, this.committed))) this.#reset() // replaced, not appended
    this.text = text
    if (this.pending) return
    this.pending = true
    this.schedule(() => this.#frame())
  }

  /** The message ended: one full render of the final text. */
  finish(text = this.text) {
    this.done = true
    this.text = normalise(text)
    this.renders.full++
    this.element.innerHTML = renderMarkdown(this.text) // renderMarkdown = markdown-it + sanitize()
    decorate(this.element)
  }

  #reset() {
    this.committed = 0
    this.element.replaceChildren(this.tail)
  }

  #frame() {
    this.pending = false
    if (this.done) return
    const rest = this.text.slice(this.committed)
    const env = { lines: rest.split("\n") }
    const tokens = md.parse(rest, env)
    const cut = lastBlockStart(tokens)
    let tailTokens = tokens
    if (cut > 0) {
      const block = document.createElement("div")
      block.className = "md-block"
      block.innerHTML = sanitize(md.renderer.render(tokens.slice(0, cut), md.options, env))
      decorate(block)
      this.tail.before(block)
      this.renders.committed++
      // Advance past the committed lines: the next frame parses from the last block's start.
      const line = tokens[cut].map[0]
      let offset = 0
      for (let i = 0; i < line; i++) offset += env.lines[i].length + 1
      this.committed += offset
      tailTokens = tokens.slice(cut)
    }
    this.tail.innerHTML = sanitize(md.renderer.render(tailTokens, md.options, env))
    decorate(this.tail)
    this.renders.tail++
  }
}
