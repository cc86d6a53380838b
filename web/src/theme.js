// Light/dark theme: follows prefers-color-scheme until the user picks one (kept in localStorage).

const KEY = "desk.theme"
const media = window.matchMedia("(prefers-color-scheme: dark)")
const listeners = new Set()

function stored() {
  try {
    const value = localStorage.getItem(KEY)
    return value === "light" || value === "dark" ? value : null
  } catch {
    return null
  }
}

export function currentTheme() {
  return stored() ?? (media.matches ? "dark" : "light")
}

export function onThemeChange(listener) {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

function apply() {
  const choice = stored()
  if (choice) document.documentElement.dataset.theme = choice
  else delete document.documentElement.dataset.theme
  const theme = currentTheme()
  for (const listener of listeners) listener(theme)
}

// Built as DOM, not markup: the page requires Trusted Types for HTML sinks.
const SVG_NS = "http://www.w3.org/2000/svg"

function svg(attributes, children) {
  const node = document.createElementNS(SVG_NS, "svg")
  for (const [name, value] of Object.entries({
    viewBox: "0 0 16 16",
    fill: "none",
    stroke: "currentColor",
    "stroke-width": "1.6",
    "aria-hidden": "true",
    ...attributes,
  })) {
    node.setAttribute(name, value)
  }
  for (const [tag, attrs] of children) {
    const child = document.createElementNS(SVG_NS, tag)
    for (const [name, value] of Object.entries(attrs)) child.setAttribute(name, value)
    node.append(child)
  }
  return node
}

const SUN = () =>
  svg({ "stroke-linecap": "round" }, [
    ["circle", { cx: "8", cy: "8", r: "3" }],
    [
      "path",
      { d: "M8 1v2M8 13v2M1 8h2M13 8h2M3 3l1.4 1.4M11.6 11.6L13 13M3 13l1.4-1.4M11.6 4.4L13 3" },
    ],
  ])
const MOON = () =>
  svg({ "stroke-linejoin": "round" }, [
    ["path", { d: "M13.5 10.5A6 6 0 0 1 5.5 2.5a6 6 0 1 0 8 8z" }],
  ])

export function setupThemeToggle(button) {
  const render = () => {
    const next = currentTheme() === "dark" ? "light" : "dark"
    button.replaceChildren(next === "dark" ? MOON() : SUN())
    button.setAttribute("aria-label", `Switch to ${next} theme`)
    button.title = `Switch to ${next} theme`
  }
  button.addEventListener("click", () => {
    const next = currentTheme() === "dark" ? "light" : "dark"
    try {
      // Picking the system's own theme goes back to following the system.
      if (next === (media.matches ? "dark" : "light")) localStorage.removeItem(KEY)
      else localStorage.setItem(KEY, next)
    } catch {
      document.documentElement.dataset.theme = next
    }
    apply()
  })
  onThemeChange(render)
  media.addEventListener("change", apply)
  apply()
  render()
}
