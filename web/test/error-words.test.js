import { describe, expect, it } from "vitest"
import { hostOf, plainError } from "../src/chat/error-words.js"

const provider = { base_url: "https://api.example.com/v1" }

describe("errors in plain words", () => {
  it("names the status and the host, and offers the settings for a refused key", () => {
    const plain = plainError(
      { type: "provider.auth", message: "HTTP 401: Upstream error." },
      provider,
    )
    expect(plain.text).toBe(
      "The provider at api.example.com refused Desk's API key (HTTP 401). Check the key in the settings.",
    )
    expect(plain.status).toBe(401)
    expect(plain.settings).toBe(true)
    expect(plain.detail).toBe("HTTP 401: Upstream error.")
  })

  it("hides the exception's class name of a failed connection", () => {
    const error = {
      type: "provider.connection",
      message: "Connection to the provider failed: ClientConnectorError.",
    }
    const plain = plainError(error, provider)
    expect(plain.text).toContain("could not reach the provider at api.example.com")
    expect(plain.detail).toBe("")
    expect(plain.settings).toBe(true)
  })

  it("keeps other failures' own words, without the settings", () => {
    const plain = plainError({ type: "runner.max_steps", message: "Too many steps." }, null)
    expect(plain).toMatchObject({ text: "Too many steps.", settings: false, detail: "" })
    expect(hostOf("not a url")).toBe("")
  })
})
