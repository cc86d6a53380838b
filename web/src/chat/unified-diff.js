// The one diff component: a unified diff as coloured lines with the old and new line numbers
// (read from the hunk headers), long diffs collapsed to their start with a button for the
// rest. Used by the permission card, finished edit and write cards and the per-turn changes.
// Diffs hold the agent's file contents, so untrusted: every line is a text node, never HTML.

import { useState } from "preact/hooks"
import { html } from "./html.js"

/** Lines shown before a long diff is collapsed. */
export const COLLAPSE_AFTER = 200

/** A patch line's kind: hunk header, addition, deletion, file header or context. */
export function lineKind(line) {
  if (line.startsWith("@@")) return "hunk"
  if (line.startsWith("+++") || line.startsWith("---")) return "meta"
  if (line.startsWith("+")) return "add"
  if (line.startsWith("-")) return "del"
  if (/^(diff --git|index |old mode|new mode|new file|deleted file|similarity|Binary)/.test(line))
    return "meta"
  return "ctx"
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/

/** `[{kind, text, old, new}]`: each line with its numbers in the old and new file (or null). */
export function numberedLines(patch) {
  const lines = String(patch ?? "")
    .replace(/\n$/, "")
    .split("\n")
  let oldNo = null
  let newNo = null
  return lines.map((text) => {
    const kind = lineKind(text)
    const line = { kind, text, old: null, new: null }
    if (kind === "hunk") {
      const m = HUNK.exec(text)
      oldNo = m ? Number(m[1]) : null
      newNo = m ? Number(m[2]) : null
    } else if (kind === "add") {
      if (newNo !== null) line.new = newNo++
    } else if (kind === "del") {
      if (oldNo !== null) line.old = oldNo++
    } else if (kind === "ctx" && oldNo !== null && newNo !== null) {
      line.old = oldNo++
      line.new = newNo++
    }
    return line
  })
}

/** An edit's replacement as a patch (no file around it: no line numbers). */
export function editPatch(oldText, newText) {
  const minus = String(oldText ?? "")
    .split("\n")
    .map((l) => `-${l}`)
  const plus = String(newText ?? "")
    .split("\n")
    .map((l) => `+${l}`)
  return [...minus, ...plus].join("\n")
}

/** A written file as a patch of additions, numbered from line 1. */
export function writePatch(content) {
  const lines = String(content ?? "")
    .replace(/\n$/, "")
    .split("\n")
  return [`@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`)].join("\n")
}

const plain = (text) => text

/**
 * `patch`: unified diff text. `show(text)`: how a line's text is rendered (the permission card
 * reveals invisible characters); text nodes by default.
 */
export function UnifiedDiff({ patch, show = plain, className = "" }) {
  const [all, setAll] = useState(false)
  const lines = numberedLines(patch)
  const numbered = lines.some((l) => l.old !== null || l.new !== null)
  const shown = all || lines.length <= COLLAPSE_AFTER ? lines : lines.slice(0, COLLAPSE_AFTER)
  return html`<div
    class=${`unified-diff ${className}`}
    data-numbered=${numbered ? "true" : "false"}
  >
    <pre class="diff-patch">
${shown.map(
        (line, i) =>
          html`<span key=${i} class=${`diff-line diff-${line.kind}`} data-kind=${line.kind}
            >${numbered && html`<span class="diff-no" aria-hidden="true">${line.old ?? ""}</span><span class="diff-no" aria-hidden="true">${line.new ?? ""}</span>`}<span
              class="diff-text"
              >${line.text ? show(line.text) : " "}</span
            >${"\n"}</span
          >`,
      )}</pre>
    ${
      shown.length < lines.length &&
      html`<button type="button" class="link-button diff-more" onClick=${() => setAll(true)}>
        Show all ${lines.length} lines (${lines.length - shown.length} more)
      </button>`
    }
  </div>`
}
