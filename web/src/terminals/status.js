// Tab status: one state per tab, drawn as an icon whose *shape* differs per state (colour only
// reinforces it) and whose accessible name says the state.

// Each shape as [tag, attributes] pairs, built with createElementNS: the page requires
// Trusted Types for HTML sinks.
const PATHS = {
  // ">_" prompt: a running shell with nothing new to see
  running: [
    ["path", { d: "M3 4.5l3.5 3.5L3 11.5" }],
    ["path", { d: "M8.5 12h4.5" }],
  ],
  // solid disc: unseen output
  activity: [["circle", { cx: "8", cy: "8", r: "4.5", fill: "currentColor", stroke: "none" }]],
  // bell
  bell: [
    ["path", { d: "M4 11V7.5a4 4 0 0 1 8 0V11l1.2 1.2H2.8z" }],
    ["path", { d: "M6.8 14h2.4" }],
  ],
  // check mark: exited with code 0
  "exited-ok": [["path", { d: "M3 8.5l3.2 3.2L13 4.8" }]],
  // warning triangle: exited with an error code (a cross read as a second close button)
  "exited-error": [
    ["path", { d: "M8 2.2L14.2 13.3H1.8z" }],
    ["path", { d: "M8 6.6v3" }],
    ["path", { d: "M8 11.6v.1" }],
  ],
  // open arc with an arrow head: reconnecting
  reconnecting: [
    ["path", { d: "M13 8a5 5 0 1 1-1.6-3.7" }],
    ["path", { d: "M11.8 1.8l-.3 2.8 2.8.2" }],
  ],
  // life ring: recovered after the PTY host crashed (screen and folder back, programs ended)
  recovered: [
    ["circle", { cx: "8", cy: "8", r: "5.8" }],
    ["circle", { cx: "8", cy: "8", r: "2.3" }],
    ["path", { d: "M3.9 3.9l2.5 2.5M12.1 3.9L9.6 6.4M3.9 12.1l2.5-2.5M12.1 12.1L9.6 9.6" }],
  ],
  // eye: view only, another window is in control
  "view-only": [
    ["path", { d: "M1.5 8S4 3.5 8 3.5 14.5 8 14.5 8 12 12.5 8 12.5 1.5 8 1.5 8z" }],
    ["circle", { cx: "8", cy: "8", r: "1.8" }],
  ],
}
const SVG_NS = "http://www.w3.org/2000/svg"

function iconSvg(status) {
  const svg = document.createElementNS(SVG_NS, "svg")
  svg.setAttribute("viewBox", "0 0 16 16")
  svg.setAttribute("aria-hidden", "true")
  svg.setAttribute("focusable", "false")
  for (const [tag, attributes] of PATHS[status] ?? []) {
    const shape = document.createElementNS(SVG_NS, tag)
    for (const [name, value] of Object.entries(attributes)) shape.setAttribute(name, value)
    svg.append(shape)
  }
  return svg
}

export function statusOf(tab) {
  const link = tab.link
  if (link.exited) return link.exitCode === 0 ? "exited-ok" : "exited-error"
  if (!link.connected) return "reconnecting"
  if (tab.recovered) return "recovered"
  if (tab.bell) return "bell"
  if (tab.activity) return "activity"
  if (link.role === "observer") return "view-only"
  return "running"
}

export function statusLabel(status, tab) {
  switch (status) {
    case "running":
      return "Running"
    case "activity":
      return "New output"
    case "bell":
      return "Bell"
    case "exited-ok":
      return "Exited with code 0"
    case "exited-error":
      return tab.link.exitCode === null || tab.link.exitCode === undefined
        ? "Exited with an error"
        : `Exited with code ${tab.link.exitCode}`
    case "reconnecting":
      return tab.link.everAttached || tab.restored ? "Reconnecting" : "Connecting"
    case "recovered":
      return "Recovered after a crash"
    case "view-only":
      return "View only"
    default:
      return status
  }
}

export function renderStatusIcon(element, status, label) {
  if (element.dataset.status !== status) {
    element.dataset.status = status
    element.replaceChildren(iconSvg(status))
  }
  element.setAttribute("aria-label", label)
  element.title = label
}
