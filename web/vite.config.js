import { defineConfig } from "vite"
import { VitePWA } from "vite-plugin-pwa"
export default defineConfig({
  plugins: [VitePWA({
    strategies: "generateSW", injectRegister: false, manifest: false,
    workbox: { skipWaiting: true, clientsClaim: true, inlineWorkboxRuntime: true, navigateFallback: null, globPatterns: [],
      runtimeCaching: [{ urlPattern: ({url}) => url.pathname.startsWith("/_assets/"), handler: "CacheFirst", options: { cacheName: "desk-assets", expiration: { maxEntries: 1000 } } }] },
  })],
  build: { assetsDir: "_assets", target: "es2022" },
})
