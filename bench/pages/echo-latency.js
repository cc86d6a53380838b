// The keystroke-to-paint probe of bench/ui_terminal.py's peer pages (the bare xterm.js page and
// ttyd's page), with the semantics of web/src/test-hooks.js's echoLatency: milliseconds from the
// next keydown (of `key`, or any) to the first render of `term` after `text` appeared on the
// cursor's line or up to `above` lines over it.
"use strict"

window.benchEchoLatency = (term, text, { key = null, above = 0, timeoutMs = 10000 } = {}) =>
  new Promise((resolve, reject) => {
    let start = null
    let parsed = false
    const cleanup = []
    const finish = (value, error) => {
      for (const dispose of cleanup) dispose()
      if (error) reject(error)
      else resolve(value)
    }
    const onKey = (event) => {
      if (start === null && (key === null || event.key === key)) start = performance.now()
    }
    document.addEventListener("keydown", onKey, true)
    cleanup.push(() => document.removeEventListener("keydown", onKey, true))
    const hasText = () => {
      const buffer = term.buffer.active
      const bottom = buffer.baseY + buffer.cursorY
      for (let y = Math.max(0, bottom - above); y <= bottom; y++) {
        if ((buffer.getLine(y)?.translateToString(true) ?? "").includes(text)) return true
      }
      return false
    }
    const parsedSub = term.onWriteParsed(() => {
      if (start === null || parsed || !hasText()) return
      parsed = true
    })
    cleanup.push(() => parsedSub.dispose())
    const renderSub = term.onRender(() => {
      if (parsed) finish(performance.now() - start)
    })
    cleanup.push(() => renderSub.dispose())
    const timer = setTimeout(() => finish(null, new Error(`"${text}" not shown within ${timeoutMs} ms`)), timeoutMs)
    cleanup.push(() => clearTimeout(timer))
  })
