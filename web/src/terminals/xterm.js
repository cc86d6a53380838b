// xterm.js set-up: addons, WebGL renderer with a canvas fallback, and the app's themes.

import { Terminal } from "@xterm/xterm"
import { CanvasAddon } from "@xterm/addon-canvas"
import { FitAddon } from "@xterm/addon-fit"
import { SearchAddon } from "@xterm/addon-search"
import { Unicode11Addon } from "@xterm/addon-unicode11"
import { WebLinksAddon } from "@xterm/addon-web-links"
import { WebglAddon } from "@xterm/addon-webgl"
import "@xterm/xterm/css/xterm.css"

const THEMES = {
  light: {
    background: "#ffffff",
    foreground: "#1d2330",
    cursor: "#1d2330",
    cursorAccent: "#ffffff",
    selectionBackground: "#b6cdf5",
    // ANSI colours readable on white (xterm's defaults are tuned for a dark background).
    black: "#1d2330",
    red: "#c62f2f",
    green: "#1f7a35",
    yellow: "#8a6100",
    blue: "#2f5fc4",
    magenta: "#9c3aa8",
    cyan: "#137a87",
    white: "#8a93a3",
    brightBlack: "#5b6578",
    brightRed: "#e0443e",
    brightGreen: "#2a9a46",
    brightYellow: "#a87800",
    brightBlue: "#4479e0",
    brightMagenta: "#b34fc0",
    brightCyan: "#1a93a3",
    brightWhite: "#b9c0cc",
  },
  dark: {
    background: "#101318",
    foreground: "#dfe3ea",
    cursor: "#dfe3ea",
    cursorAccent: "#101318",
    selectionBackground: "#2f4a78",
  },
}

export function xtermTheme(theme) {
  return THEMES[theme] ?? THEMES.light
}

export function createTerminal({ cols, rows, theme }) {
  const term = new Terminal({
    cols,
    rows,
    allowProposedApi: true, // the unicode11 addon needs it
    scrollback: 10000,
    fontFamily: '"DejaVu Sans Mono", "Cascadia Mono", Menlo, Consolas, ui-monospace, monospace',
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
    new WebLinksAddon((event, uri) => {
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
