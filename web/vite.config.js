import { defineConfig } from "vite"
import { VitePWA } from "vite-plugin-pwa"

// Workbox serialises these callbacks into dist/sw.js with Function.toString(), so each one must
// be self-contained: no references to anything declared in this file.
const assetRoute = {
  urlPattern: ({ url }) =>
    url.origin === self.location.origin &&
    (url.pathname.startsWith("/_assets/") || url.pathname.startsWith("/assets/")),
  handler: "CacheFirst",
  options: {
    cacheName: "desk-assets",
    plugins: [
      {
        // An HTML body under an asset URL is a server's SPA fallback for a missing chunk:
        // never serve it from the cache; try the old precache an older worker left behind.
        cachedResponseWillBeUsed: async ({ request, cachedResponse }) => {
          const isHtml = (response) =>
            /^(text\/html|application\/xhtml\+xml)\b/i.test(response.headers.get("content-type") ?? "")
          if (cachedResponse?.status === 200 && !isHtml(cachedResponse)) return cachedResponse
          const legacy = await caches.match(request, {
            cacheName: `workbox-precache-v2-${self.location.origin}/`,
          })
          return legacy?.status === 200 && !isHtml(legacy) ? legacy : null
        },
        // ...and never store one.
        cacheWillUpdate: async ({ response }) =>
          response.status === 200 &&
          !/^(text\/html|application\/xhtml\+xml)\b/i.test(response.headers.get("content-type") ?? "")
            ? response
            : null,
      },
    ],
    expiration: { maxEntries: 1000 },
  },
}

// Navigations always go to the network; the last good index.html is kept aside (under one key,
// whatever the path) and used only when the network fails, so the shell opens offline.
const shellRoute = {
  urlPattern: ({ request, url }) =>
    request.mode === "navigate" &&
    url.origin === self.location.origin &&
    !url.pathname.startsWith("/api/"),
  handler: "NetworkFirst",
  options: {
    cacheName: "desk-shell",
    plugins: [
      {
        cacheKeyWillBeUsed: async () => "/index.html",
        cacheWillUpdate: async ({ response }) =>
          response.status === 200 &&
          /^text\/html\b/i.test(response.headers.get("content-type") ?? "")
            ? response
            : null,
      },
    ],
  },
}

export default defineConfig({
  plugins: [
    VitePWA({
      strategies: "generateSW",
      filename: "sw.js",
      injectRegister: false, // src/service-worker.js registers it (CSP forbids inline scripts)
      manifest: false, // public/manifest.webmanifest is a plain file
      workbox: {
        skipWaiting: true, // activate at once; pages are never reloaded by the worker
        clientsClaim: true, // the first visit becomes controlled, so it can open offline later
        cleanupOutdatedCaches: false, // old tabs still load their chunks from the legacy precache
        inlineWorkboxRuntime: true,
        sourcemap: false,
        navigateFallback: null, // HTML comes from the network whenever it answers
        globPatterns: [], // no precache: a partial precache can strand a build without its chunks
        runtimeCaching: [assetRoute, shellRoute],
      },
    }),
  ],
  build: {
    assetsDir: "_assets",
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1024,
  },
})
