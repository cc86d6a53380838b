import { defineConfig } from "vitest/config"

// Unit tests of the UI's logic (data layer, markdown rendering); XSS claims are tested in
// Chromium by the Playwright suite, since jsdom's HTML parser is not the browser's.
export default defineConfig({
  test: {
    environment: "jsdom",
    include: ["test/**/*.test.js"],
  },
})
