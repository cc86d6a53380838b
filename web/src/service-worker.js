// Registers /sw.js and warms the asset cache so the shell can open offline after one visit.

let offlineReady = false
// Whether the worker served this page's own navigation (it was registered on an earlier visit),
// as opposed to taking control later through clientsClaim.
const controlledAtLoad = Boolean(navigator.serviceWorker?.controller)
// Shared with the worker's navigation route in vite.config.js.
const SHELL_CACHE = "desk-shell"
const SHELL_KEY = "/index.html"

// The page requires Trusted Types for script URLs (CSP `require-trusted-types-for 'script'`):
// this policy, named in the CSP's `trusted-types`, lets exactly one URL through.
const WORKER_URL = "/sw.js"
let workerPolicy = null

function workerScriptUrl() {
  if (!window.trustedTypes?.createPolicy) return WORKER_URL
  workerPolicy ??= window.trustedTypes.createPolicy("desk-sw", {
    createScriptURL: (url) => {
      if (url !== WORKER_URL) throw new TypeError(`desk-sw policy: refusing script URL ${url}`)
      return url
    },
  })
  return workerPolicy.createScriptURL(WORKER_URL)
}

export function isOfflineReady() {
  return offlineReady
}

export function wasControlledAtLoad() {
  return controlledAtLoad
}

function assetUrls() {
  const urls = new Set()
  for (const entry of performance.getEntriesByType("resource")) urls.add(entry.name)
  for (const node of document.querySelectorAll("script[src], link[href]"))
    urls.add(node.src || node.href)
  return [...urls].filter((raw) => {
    const url = new URL(raw, location.href)
    return url.origin === location.origin && url.pathname.startsWith("/_assets/")
  })
}

function controlled() {
  if (navigator.serviceWorker.controller) return Promise.resolve()
  return new Promise((resolve) =>
    navigator.serviceWorker.addEventListener("controllerchange", () => resolve(), { once: true }),
  )
}

export async function registerServiceWorker() {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return false
  try {
    await navigator.serviceWorker.register(workerScriptUrl(), { scope: "/" })
    await navigator.serviceWorker.ready
    await controlled()
    // Assets fetched before the worker took control are not in its cache yet: fetch them
    // again through the worker (cache-first, so this costs nothing on later visits).
    await Promise.all(assetUrls().map((url) => fetch(url).catch(() => null)))
    // This page's own navigation happened before the worker was in control, so the worker has
    // no copy of the shell yet: store the one it would have stored.
    const shell = await fetch("/", { cache: "no-store", credentials: "same-origin" })
    if (shell.ok && /^text\/html\b/i.test(shell.headers.get("content-type") ?? "")) {
      await (await caches.open(SHELL_CACHE)).put(SHELL_KEY, shell)
    }
    offlineReady = true
    return true
  } catch (error) {
    console.warn("Desk: service worker unavailable:", error)
    return false
  }
}
