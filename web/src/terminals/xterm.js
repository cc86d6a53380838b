// xterm.js set-up: addons, WebGL renderer with a canvas fallback, and the app's themes.

import { Terminal } from "@xterm/xterm"
import { CanvasAddon } from "@xterm/addon-canvas"
import { FitAddon } from "@xterm/addon-fit"
import { SearchAddon } from "@xterm/addon-search"
import { Unicode11Addon } from "@xterm/addon-unicode11"
import { WebLinksAddon } from "@xterm/addon-web-links"
import { WebglAddon } from "@xterm/addon-webgl"
import "@xterm/xterm/css/xterm.css"

// ANSI palettes picked for each background: every colour reads as text on the theme's
// background, and minimumContrastRatio (below) lifts any pair a program chooses (black on
// green, grey on white) to WCAG AA at render time.
const THEMES = {
  light: {
    background: "#ffffff",
    foreground: "#1d2330",
    cursor: "#1d2330",
    cursorAccent: "#ffffff",
    selectionBackground: "#b6cdf5",
    black: "#1d2330",
    red: "#b42420",
    green: "#1a6b2f",
    yellow: "#7a5500",
    blue: "#2452b2",
    magenta: "#8a2f96",
    cyan: "#0e6672",
    white: "#c5cad3",
    brightBlack: "#4b5466",
    brightRed: "#c8332d",
    brightGreen: "#217a39",
    brightYellow: "#8a6200",
    brightBlue: "#2f62c8",
    brightMagenta: "#9c3aa8",
    brightCyan: "#107583",
    brightWhite: "#e8ebf0",
  },
  dark: {
    background: "#101318",
    foreground: "#dfe3ea",
    cursor: "#dfe3ea",
    cursorAccent: "#101318",
    selectionBackground: "#2f4a78",
    black: "#3b4252",
    red: "#ff6b66",
    green: "#5fd38a",
    yellow: "#e5c15c",
    blue: "#6ea8ff",
    magenta: "#d58cf0",
    cyan: "#4fd1d9",
    white: "#c9d1dc",
    brightBlack: "#687184",
    brightRed: "#ff8a85",
    brightGreen: "#7ee2a2",
    brightYellow: "#f4d67a",
    brightBlue: "#93bfff",
    brightMagenta: "#e3a9f7",
    brightCyan: "#7ee3ea",
    brightWhite: "#f2f5f9",
  },
}

// Text no worse than WCAG AA (4.5:1) against its cell's background, whatever the colours.
const MINIMUM_CONTRAST = 4.5

export function xtermTheme(theme) {
  return THEMES[theme] ?? THEMES.light
}

export function createTerminal({ cols, rows, theme }) {
  const term = new Terminal({
    cols,
    rows,
    allowProposedApi: true, // the unicode11 addon needs it
    scrollback: 10000,
    // Fallbacks for scripts and emoji the monospace fonts lack (fonts-noto-cjk and
    // fonts-noto-color-emoji come with `make run`'s system packages).
    fontFamily:
      '"DejaVu Sans Mono", "Cascadia Mono", Menlo, Consolas, ui-monospace, monospace, "Noto Sans Mono CJK SC", "Noto Sans CJK SC", "Noto Color Emoji"',
    minimumContrastRatio: MINIMUM_CONTRAST,
    fontSize: 13,
    theme: xtermTheme(theme),
    macOptionIsMeta: true,
    rightClickSelectsWord: true,
  })
  const fit = new FitAddon()
  const search = new SearchAddon({ highlightLimit: 2000 })
  term.loadAddon(fit)
  term.loadAddon(search)
  term.loadAddon(new Unicode11Addon())
  term.unicode.activeVersion = "11"
  return { term, fit, search }
}

function preferredRenderer() {
  try {
    const choice = localStorage.getItem("desk.renderer")
    if (choice === "webgl" || choice === "canvas" || choice === "dom") return choice
  } catch {
    // storage disabled: automatic choice
  }
  return "auto"
}

/** After term.open(): links, then WebGL, falling back to the canvas renderer. */
export function attachRenderer(term) {
  term.loadAddon(
    // Ctrl+click (Cmd+click on a Mac) opens a link, as in other terminals: a plain click
    // selects or focuses, and reaches programs that use the mouse.
    new WebLinksAddon((event, uri) => {
      if (!(event.ctrlKey || event.metaKey)) return
      event.preventDefault()
      window.open(uri, "_blank", "noopener,noreferrer")
    }),
  )
  const state = { name: "dom" }
  const choice = preferredRenderer()
  const useCanvas = () => {
    try {
      term.loadAddon(new CanvasAddon())
      state.name = "canvas"
    } catch {
      state.name = "dom"
    }
  }
  if (choice === "dom") return state
  if (choice === "canvas") {
    useCanvas()
    return state
  }
  try {
    const webgl = new WebglAddon()
    webgl.onContextLoss(() => {
      // Browsers cap live WebGL contexts; a lost one falls back to the canvas renderer.
      webgl.dispose()
      useCanvas()
    })
    term.loadAddon(webgl)
    state.name = "webgl"
  } catch {
    useCanvas()
  }
  return state
}
