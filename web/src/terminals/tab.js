// One terminal tab: its tab-strip element, its pane with an xterm.js instance, its attachment
// link, and the status derived from both.

import { signal } from "@preact/signals"
import { currentTheme } from "../theme.js"
import { PtyLink } from "./link.js"
import { PacedWriter } from "./paced-writer.js"
import { shortcutFor } from "./shortcuts.js"
import { renderStatusIcon, statusLabel, statusOf } from "./status.js"
import { attachRenderer, createTerminal, xtermTheme } from "./xterm.js"
import { attachmentIdFor, loadCursor, saveCursor } from "./storage.js"

const EMPTY = new Uint8Array(0)
const HIDE_CURSOR = new TextEncoder().encode("\x1b[?25l")
const RESIZE_QUIET_MS = 500
// Answers xterm.js gives to queries (DA, DSR/CPR, window reports, OSC colour queries, DCS).
const TERMINAL_REPORT =
  // eslint-disable-next-line no-control-regex -- escape sequences are what it matches
  /^\x1b(\[[?>=]?[\d;]*[cnRty]|\[\??[\d;]*\$y|\][^\x07\x1b]*(\x07|\x1b\\)|P[\s\S]*\x1b\\)$/

function basename(path) {
  if (!path) return ""
  const parts = String(path).split("/")
  return parts[parts.length - 1]
}

export class TerminalTab {
  /**
   * The tab reads the area's state from `store` (a TerminalStore: pane size, the tab in view,
   * typing) and says what only the area can act on through `actions`:
   * { gone(tab), resized(tab), viewOnlyInput(tab), exitAction(tab, "restart" | "rerun" | "close") }.
   */
  constructor(info, store, actions) {
    this.id = info.id
    this.info = info
    this.store = store
    this.actions = actions
    // Bumped whenever what the area shows of this tab may have changed (bars, window title).
    this.revision = signal(0)
    this.activity = false
    this.bell = false
    this.opened = false
    this.renderer = null
    this.disposed = false
    this.resizedAt = -Infinity
    // Where this browser tab had got to before a reload: output past it is news.
    this.seen = loadCursor(info.id)

    const size = store.paneSize.value ?? info.size ?? { cols: 80, rows: 24 }
    const { term, fit, search } = createTerminal({
      cols: size.cols,
      rows: size.rows,
      theme: currentTheme(),
    })
    this.term = term
    this.fit = fit
    this.search = search
    this.#buildElements()

    // Out of view while the page is in view: parsed in idle time (see paced-writer.js).
    this.writer = new PacedWriter(
      term,
      () => document.visibilityState === "visible" && !store.shown(this.id),
      {
        typingAgo: () => store.typingAgo(),
      },
    )
    this.link = new PtyLink({
      id: this.id,
      attachmentId: attachmentIdFor(this.id),
      observe: Boolean(info.job), // the agent's command: view-only until the user takes control
      sink: {
        write: (bytes, done) => this.writer.write(bytes, done),
        reset: (done) =>
          this.writer.write(EMPTY, () => {
            term.reset()
            this.cursorHidden = false
            done()
          }),
      },
      handlers: {
        changed: () => this.#linkChanged(),
        event: (message) => this.#onLinkEvent(message),
        gone: () => actions.gone(this),
        notice: (text) => this.#notice(text),
        liveOutput: () => this.#onLiveOutput(),
      },
    })

    if (info.status === "exited") {
      this.link.exited = true
      this.link.exitCode = info.exit_code ?? null
    }

    term.onData((data) => this.#input(data))
    term.onBinary((data) => this.#input(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff)))
    // Bells come from the service's `bell` event, sent for live output only: a BEL that
    // xterm.js parses in replayed history (a reload, a second window) is not news.
    // The area's shortcuts are the page's: xterm.js leaves them alone.
    term.attachCustomKeyEventHandler((event) => !shortcutFor(event))
    this.render()
  }

  #buildElements() {
    const tab = document.createElement("div")
    tab.className = "tab"
    tab.setAttribute("role", "tab")
    tab.id = `tab-${this.id}`
    tab.dataset.id = this.id
    tab.draggable = true
    tab.tabIndex = -1
    tab.setAttribute("aria-controls", `pane-${this.id}`)
    this.icon = document.createElement("span")
    this.icon.className = "status-icon"
    this.icon.setAttribute("role", "img")
    this.titleEl = document.createElement("span")
    this.titleEl.className = "tab-title"
    // Not a button: a control inside a tab is one assistive technology cannot reach apart
    // from the tab. The pointer clicks it; the keyboard closes the tab with Ctrl+Shift+W.
    this.closeButton = document.createElement("span")
    this.closeButton.className = "tab-close"
    this.closeButton.textContent = "×"
    this.closeButton.setAttribute("aria-hidden", "true")
    tab.append(this.icon, this.titleEl, this.closeButton)
    this.tabEl = tab

    const pane = document.createElement("div")
    pane.className = "pane"
    pane.id = `pane-${this.id}`
    pane.setAttribute("role", "tabpanel")
    pane.setAttribute("aria-labelledby", tab.id)
    pane.hidden = true
    // xterm.js opens in its own box so the exit line below it takes rows from the terminal
    // (the fit addon measures xterm's parent) instead of covering its last rows.
    this.hostEl = document.createElement("div")
    this.hostEl.className = "term-host"
    pane.append(this.hostEl, this.#buildExitLine())
    this.paneEl = pane
  }

  #buildExitLine() {
    const line = document.createElement("div")
    line.className = "pane-exit"
    line.setAttribute("role", "status")
    line.hidden = true
    this.exitText = document.createElement("span")
    this.exitText.className = "pane-exit-text"
    const button = (label, action) => {
      const el = document.createElement("button")
      el.type = "button"
      el.textContent = label
      el.addEventListener("click", () => this.actions.exitAction(this, action))
      return el
    }
    this.restartButton = button("Restart", "restart")
    // An agent's command is run again only when asked, after a question that shows it.
    this.rerunButton = button("Run again…", "rerun")
    this.rerunButton.hidden = true
    line.append(this.exitText, this.restartButton, this.rerunButton, button("Close", "close"))
    this.exitEl = line
    return line
  }

  get title() {
    return this.info.title || this.info.command || "Terminal"
  }

  /** The foreground program when it is not the terminal's own shell, e.g. "vim". */
  get foreground() {
    const fg = basename(this.info.foreground_process)
    if (!fg || fg === basename(this.info.command)) return ""
    return fg
  }

  /**
   * What closing this tab would end that the user may care about, or "" when nothing does.
   * The PTY host says (`busy`, desktop/ptyhost/shells.py): a program in the foreground, or a
   * terminal that is not a shell; a shell idle at its prompt and an unknown foreground, nothing.
   */
  get busyWith() {
    return this.running ? (this.info.busy ?? "") : ""
  }

  /** Revived from the autosave of a PTY host that crashed, until the user types in it. */
  get recovered() {
    return this.info.revived === "recovered" && !this.recoveryNoted
  }

  get status() {
    return statusOf(this)
  }

  get running() {
    return this.info.status !== "exited" && !this.link.exited
  }

  start() {
    this.link.start()
  }

  updateInfo(info) {
    this.info = { ...this.info, ...info }
    if (info.status === "exited" && !this.link.exited) {
      this.link.exited = true
      this.link.exitCode = info.exit_code ?? null
    }
    if (this.link.role === "observer" && info.size) this.#followSize(info.size)
    this.render()
  }

  markExited(exitCode) {
    this.info = { ...this.info, status: "exited", exit_code: exitCode }
    this.link.exited = true
    this.link.exitCode = exitCode ?? null
    this.render()
  }

  render() {
    this.paneEl.classList.toggle("follower", this.link.role === "observer")
    this.#renderExit()
    const status = this.status
    const label = statusLabel(status, this)
    renderStatusIcon(this.icon, status, label)
    this.tabEl.dataset.status = status
    const fg = this.foreground
    const text = fg ? `${this.title} · ${fg}` : this.title
    if (this.titleEl.textContent !== text) {
      this.titleEl.textContent = text
      this.#changed() // the window's title follows the tab in view
    }
    // An agent's command reads as one, and closing its tab while it runs only hides the tab.
    const job = Boolean(this.info.job)
    this.tabEl.classList.toggle("tab-job", job)
    const what = job ? `${label}, the agent's command` : label
    this.tabEl.title = `${text} (${what})`
    this.tabEl.setAttribute("aria-label", `${text}, ${what}`)
    const hides = job && this.running
    this.closeButton.title = hides
      ? "Hide this tab: the agent's command runs on, under Agent jobs (Ctrl+Shift+W)"
      : "Close terminal (Ctrl+Shift+W)"
    this.paneEl.setAttribute("aria-label", text)
  }

  #renderExit() {
    const exited = !this.running
    if (exited) {
      const code = this.link.exitCode ?? this.info.exit_code
      // An agent's command is the agent's to run again: its tab offers Close only (a restart
      // by hand would repeat it, `rm -f` included).
      const job = Boolean(this.info.job)
      const name = job ? "The agent's command" : basename(this.info.command) || "The program"
      const text =
        code === null || code === undefined
          ? `${name} ${job ? "finished" : "exited"}`
          : `${name} ${job ? "finished" : "exited"} with code ${code}`
      if (this.exitText.textContent !== text) this.exitText.textContent = text
      this.restartButton.hidden = job
      this.restartButton.setAttribute("aria-label", `Restart ${this.title}`)
      this.rerunButton.hidden = !job
      this.rerunButton.title = "Run the agent's command again, as your own terminal (asks first)"
      // Nothing will be typed here any more: no cursor. A local write after the replay (the
      // stream has ended); a reset by a later replay shows it again, so it is redone then.
      if (!this.cursorHidden && this.link.phase !== "replaying") {
        this.cursorHidden = true
        this.writer.write(HIDE_CURSOR, () => {})
      }
    }
    if (this.exitEl.hidden === exited) {
      this.exitEl.hidden = !exited
      // Refit now, not after the resize debounce: the line must never cover the last rows.
      this.fitExited()
    }
  }

  /** Called when the tab becomes the visible one. */
  show() {
    this.paneEl.hidden = false
    this.writer.flush()
    if (!this.opened) {
      this.opened = true
      this.term.open(this.hostEl)
      // The exit line comes and goes inside the pane: refit when xterm's box changes.
      this.resizeObserver = new ResizeObserver(() => this.actions.resized(this))
      this.resizeObserver.observe(this.hostEl)
      this.renderer = attachRenderer(this.term)
    }
    this.activity = false
    this.bell = false
    this.render()
  }

  /** The user sees this tab now: its marks are read. */
  markSeen() {
    if (!this.activity && !this.bell) return
    this.activity = false
    this.bell = false
    this.render()
  }

  hide() {
    this.paneEl.hidden = true
  }

  focus() {
    if (this.opened) this.term.focus()
  }

  /** Columns and rows that fit the pane (only while visible). */
  proposeSize() {
    if (!this.opened || this.paneEl.hidden) return null
    const dims = this.fit.proposeDimensions()
    if (!dims || !Number.isFinite(dims.cols) || !Number.isFinite(dims.rows)) return null
    return { cols: Math.max(2, dims.cols), rows: Math.max(1, dims.rows) }
  }

  /** An exited terminal has no PTY to tell: it fits its own box, the exit line included. */
  fitExited() {
    if (this.running || !this.opened || this.paneEl.hidden) return
    const size = this.proposeSize()
    if (size && (this.term.cols !== size.cols || this.term.rows !== size.rows)) {
      this.term.resize(size.cols, size.rows)
    }
  }

  /** The app's pane size changed: a controller adopts it and tells the service. */
  applySize(size) {
    if (!size || this.link.role === "observer" || !this.running) return
    if (this.term.cols !== size.cols || this.term.rows !== size.rows)
      this.term.resize(size.cols, size.rows)
    const current = this.info.size
    if (!current || current.cols !== size.cols || current.rows !== size.rows) {
      if (this.link.resize(size.cols, size.rows)) {
        this.info = { ...this.info, size: { ...size } }
        this.resizedAt = performance.now()
      }
    }
  }

  setTheme(theme) {
    this.term.options.theme = xtermTheme(theme)
  }

  /** The buffer's text, one entry per logical line (soft-wrapped rows joined). */
  bufferText() {
    const buffer = this.term.buffer.active
    const lines = []
    for (let i = 0; i < buffer.length; i++) {
      const line = buffer.getLine(i)
      const next = buffer.getLine(i + 1)
      const text = line?.translateToString(!next?.isWrapped) ?? ""
      if (line?.isWrapped && lines.length) lines[lines.length - 1] += text
      else lines.push(text)
    }
    while (lines.length && lines[lines.length - 1] === "") lines.pop()
    return lines.join("\n")
  }

  dispose() {
    this.disposed = true
    this.resizeObserver?.disconnect()
    this.link.close()
    this.writer.close()
    this.term.dispose()
    this.tabEl.remove()
    this.paneEl.remove()
  }

  #input(data) {
    if (this.link.replayParsing && typeof data === "string" && TERMINAL_REPORT.test(data)) return
    const result = this.link.input(data)
    if (result === "view-only") this.actions.viewOnlyInput(this)
    else if (result === "queued")
      this.#notice("Disconnected: your input is queued until the terminal reconnects.")
    if (this.bell || this.recovered) {
      this.bell = false
      this.recoveryNoted = true
      this.render()
    }
    this.store.typed()
  }

  #notice(text) {
    this.store.say(`${this.title}: ${text}`)
  }

  #changed() {
    this.revision.value++
  }

  #ring() {
    // The tab in view needs no mark: the user is looking at it.
    if (this.bell || this.store.shown(this.id)) return
    this.bell = true
    this.render()
    this.#changed()
  }

  #onLiveOutput() {
    saveCursor(this.id, this.link.epoch, this.link.cursor)
    if (this.activity || this.store.shown(this.id)) return
    // A shell redraws its prompt after a resize: that is not news for the user.
    if (performance.now() - this.resizedAt < RESIZE_QUIET_MS) return
    this.activity = true
    this.render()
    this.#changed()
  }

  #followSize(size) {
    if (size && (this.term.cols !== size.cols || this.term.rows !== size.rows))
      this.term.resize(size.cols, size.rows)
  }

  #linkChanged() {
    const link = this.link
    if (this.seen && link.phase === "live") {
      const seen = this.seen
      this.seen = null
      const newer = seen.epoch !== link.epoch || (link.cursor !== null && link.cursor > seen.cursor)
      if (newer && !this.store.shown(this.id)) this.activity = true
    }
    if (link.phase === "live" && link.cursor !== null) saveCursor(this.id, link.epoch, link.cursor)
    if (link.info) {
      this.info = { ...this.info, ...link.info }
      link.info = null
    }
    if (link.connected && link.role === "observer" && this.info.size)
      this.#followSize(this.info.size)
    if (link.connected && link.role === "controller") this.applySize(this.store.paneSize.value)
    this.render()
    this.#changed()
  }

  #onLinkEvent(message) {
    switch (message.type) {
      case "resized":
        this.info = { ...this.info, size: { cols: message.cols, rows: message.rows } }
        if (this.link.role === "observer") this.#followSize(this.info.size)
        break
      case "title_changed":
        this.info = { ...this.info, title: message.title }
        this.render()
        break
      case "foreground_process_changed":
        this.info = {
          ...this.info,
          foreground_process: message.process,
          busy: message.busy ?? null,
        }
        this.render()
        break
      case "bell":
        this.#ring()
        break
      case "error":
        // Deleted: the tab goes with it. Closed here, or an agent's command, that is no news;
        // a person's terminal closed elsewhere (another window, the CLI) is said plainly.
        if (message.error?.type === "pty.deleted") {
          if (!this.closing && !this.info.job)
            this.store.say(`“${this.title}” was closed elsewhere.`)
        } else if (message.message) this.#notice(message.message)
        break
      case "exited":
        this.info = { ...this.info, status: "exited", exit_code: message.exit_code }
        break
      default:
        break
    }
  }
}
