// The model provider's settings: a modal <dialog> over GET/PUT /api/config/provider. The key
// is write-only: the service never returns it (only `api_key_set`), so the field starts empty
// and says whether one is stored; typing replaces it, "Remove key" sends null, leaving it
// empty keeps the stored key (the route's `api_key` absent).

import { signal } from "@preact/signals"
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks"
import { html } from "./html.js"
import { RulesEditor } from "./rules-editor.js"
import { EFFORTS, ModelOptions, loadModels } from "./session-settings.js"

/** Open while true; any part of the UI may open it (the header button, the no-provider notice). */
export const settingsOpen = signal(false)
export const openSettings = () => (settingsOpen.value = true)

export const PROVIDERS = [
  { id: "openai", label: "OpenAI", baseUrl: "https://api.openai.com/v1" },
  { id: "groq", label: "Groq", baseUrl: "https://api.groq.com/openai/v1" },
  {
    id: "openai-compatible",
    label: "OpenAI-compatible (vLLM, llama.cpp, Ollama, LM Studio, OpenRouter…)",
    baseUrl: "",
  },
]

/** The PUT body for the form's values: only what the route takes, the key only when changed. */
export function providerBody({
  provider,
  baseUrl,
  model,
  apiKey,
  removeKey,
  contextWindow,
  reasoningEffort,
  includeReasoning,
}) {
  const body = { provider, model: model.trim() }
  if (reasoningEffort) body.reasoning_effort = reasoningEffort
  if (provider === "groq" && typeof includeReasoning === "boolean")
    body.include_reasoning = includeReasoning
  const url = baseUrl.trim()
  if (url) body.base_url = url
  const window = String(contextWindow ?? "").trim()
  if (window) body.context_window = /^\d+$/.test(window) ? Number(window) : window
  if (removeKey) body.api_key = null
  else if (apiKey) body.api_key = apiKey
  return body
}

function SettingsForm({ store, onClose }) {
  const saved = store.provider.value
  const [provider, setProvider] = useState(saved?.provider ?? "openai-compatible")
  const [baseUrl, setBaseUrl] = useState(saved?.base_url ?? "")
  const [model, setModel] = useState(saved?.model ?? "")
  const [contextWindow, setContextWindow] = useState(String(saved?.context_window ?? ""))
  const [reasoningEffort, setReasoningEffort] = useState(saved?.reasoning_effort ?? "")
  const [includeReasoning, setIncludeReasoning] = useState(saved?.include_reasoning ?? null)
  const [models, setModels] = useState(null)
  const [listError, setListError] = useState(null)
  useEffect(() => {
    if (saved?.configured) loadModels().then(setModels, (e) => setListError(e.message))
  }, [])
  const [apiKey, setApiKey] = useState("")
  const [removeKey, setRemoveKey] = useState(false)
  const [error, setError] = useState(null)
  const [saving, setSaving] = useState(false)
  const profile = PROVIDERS.find((p) => p.id === provider)
  const keyStored = Boolean(saved?.api_key_set) && !removeKey

  const submit = async (event) => {
    event.preventDefault()
    setSaving(true)
    setError(null)
    try {
      await store.saveProvider(
        providerBody({
          provider,
          baseUrl,
          model,
          apiKey,
          removeKey,
          contextWindow,
          reasoningEffort,
          includeReasoning,
        }),
      )
      onClose()
    } catch (e) {
      setError(e.message) // the route's 400 message, shown where the user can fix it
      setSaving(false)
    }
  }
  return html`<form class="provider-form" onSubmit=${submit}>
    <h2>Model provider</h2>
    ${
      saved?.source === "environment" &&
      html`<p class="hint">
        These settings come from the DESK_* environment; saving here stores them in the settings
        file.
      </p>`
    }
    <label for="provider-kind">Provider</label>
    <select
      id="provider-kind"
      name="provider"
      value=${provider}
      onChange=${(e) => setProvider(e.currentTarget.value)}
    >
      ${PROVIDERS.map((p) => html`<option key=${p.id} value=${p.id}>${p.label}</option>`)}
    </select>
    <label for="provider-base-url"
      >Base URL
      ${profile?.baseUrl && html`<span class="optional">(default ${profile.baseUrl})</span>`}</label
    >
    <input
      id="provider-base-url"
      name="base_url"
      type="url"
      inputmode="url"
      autocomplete="off"
      spellcheck="false"
      value=${baseUrl}
      placeholder=${profile?.baseUrl || "http://127.0.0.1:8000/v1"}
      required=${provider === "openai-compatible"}
      onInput=${(e) => setBaseUrl(e.currentTarget.value)}
    />
    <label for="provider-model">Model</label>
    <input
      id="provider-model"
      name="model"
      list="provider-model-list"
      autocomplete="off"
      spellcheck="false"
      value=${model}
      required
      onInput=${(e) => setModel(e.currentTarget.value)}
    />
    <${ModelOptions} id="provider-model-list" models=${models} error=${listError} />
    <label for="provider-effort">Reasoning effort</label>
    <select
      id="provider-effort"
      name="reasoning_effort"
      value=${reasoningEffort}
      onChange=${(e) => setReasoningEffort(e.currentTarget.value)}
    >
      <option value="">The server's default (not sent)</option>
      ${EFFORTS.map((v) => html`<option key=${v} value=${v}>${v}</option>`)}
    </select>
    ${
      provider === "groq" &&
      html`<label class="checkbox-label" for="provider-include-reasoning">
        <input
          id="provider-include-reasoning"
          name="include_reasoning"
          type="checkbox"
          checked=${includeReasoning !== false}
          onChange=${(e) => setIncludeReasoning(e.currentTarget.checked)}
        />
        Show the reasoning of gpt-oss models (include_reasoning)
      </label>`
    }
    <label for="provider-context-window"
      >Context window <span class="optional">(tokens; empty: ask the provider)</span></label
    >
    <input
      id="provider-context-window"
      name="context_window"
      inputmode="numeric"
      autocomplete="off"
      value=${contextWindow}
      placeholder="e.g. 128000"
      onInput=${(e) => setContextWindow(e.currentTarget.value)}
    />
    <label for="provider-key">API key</label>
    <input
      id="provider-key"
      name="api_key"
      type="password"
      autocomplete="off"
      spellcheck="false"
      value=${apiKey}
      placeholder=${keyStored ? "Type a new key to replace the stored one" : "No key (local servers need none)"}
      aria-describedby="provider-key-state"
      onInput=${(e) => setApiKey(e.currentTarget.value)}
    />
    <p class="hint" id="provider-key-state">
      ${keyStored ? "A key is stored. It is never shown; leave the field empty to keep it." : removeKey ? "The stored key will be removed." : "No key is stored."}
      ${
        saved?.api_key_set &&
        html` <button
          type="button"
          class="link-button provider-key-remove"
          onClick=${() => (setRemoveKey(!removeKey), setApiKey(""))}
        >
          ${removeKey ? "Keep the key" : "Remove key"}
        </button>`
      }
    </p>
    ${error && html`<p class="form-error" role="alert">${error}</p>`}
    <div class="dialog-buttons">
      <button type="button" onClick=${onClose}>Cancel</button>
      <button type="submit" class="primary" disabled=${saving}>Save</button>
    </div>
  </form>`
}

/** Mounted once; shows the form (freshly read settings) while `settingsOpen` is true. */
export function SettingsDialog({ store }) {
  const ref = useRef(null)
  const open = settingsOpen.value
  const [loaded, setLoaded] = useState(false)
  const [error, setError] = useState(null)
  const [version, setVersion] = useState(null)
  // Shown and closed as the render that changes `open` lands, not a frame later: until a
  // modal <dialog> closes the page behind it is inert, and what the person typed there in
  // that frame (the prompt box, right after Escape) went nowhere.
  useLayoutEffect(() => {
    const dialog = ref.current
    if (open && !dialog.open) dialog.showModal()
    else if (!open && dialog.open) dialog.close()
  }, [open])
  useEffect(() => {
    if (!open) {
      setLoaded(false)
      return
    }
    setError(null)
    store.loadProvider().then(
      () => setLoaded(true),
      (e) => setError(e.message),
    )
    // The installed version, for bug reports and after an upgrade (`desk --version` says the same).
    fetch("/api/health", { cache: "no-store", credentials: "same-origin" })
      .then((response) => response.json())
      .then((body) => setVersion(body?.data?.version ?? null))
      .catch(() => setVersion(null))
  }, [open])
  const close = () => (settingsOpen.value = false)
  return html`<dialog
    ref=${ref}
    class="chat-dialog settings-dialog"
    aria-label="Model provider settings"
    onCancel=${(e) => (e.preventDefault(), close())}
  >
    ${
      open &&
      error &&
      html`<p class="form-error" role="alert">Could not read the settings: ${error}</p>
        <div class="dialog-buttons"><button type="button" onClick=${close}>Close</button></div>`
    }
    ${open && !error && !loaded && html`<p class="placeholder">Loading…</p>`}
    ${open && loaded && html`<${SettingsForm} store=${store} onClose=${close} />`}
    ${open && loaded && html`<${RulesEditor} />`}
    ${open && version && html`<p class="hint settings-version">Desk ${version}</p>`}
  </dialog>`
}

/** A header button that opens the dialog. */
export function SettingsButton() {
  return html`<button
    type="button"
    class="icon-button settings-button"
    aria-label="Model provider settings"
    title="Model provider settings"
    onClick=${openSettings}
  >
    ⚙
  </button>`
}

export const NOT_CONFIGURED = "provider.not_configured"

/** The thread's last message is a step that failed because no provider is configured. */
function lastStepNotConfigured(thread) {
  const ids = thread.ids.value
  const last = ids.length ? thread.messages.get(ids[ids.length - 1])?.value : null
  return last?.type === "assistant" && last.error?.type === NOT_CONFIGURED
}

/**
 * Above the prompt box while no provider is configured (GET /api/config/provider says so, or
 * the last step failed for that reason and no settings were saved since), with the way out.
 */
export function ProviderNotice({ store, thread }) {
  const config = store.provider.value
  const missing = config ? !config.configured : lastStepNotConfigured(thread)
  if (!missing) return null
  return html`<div class="provider-notice" role="alert">
    <span>No model provider is configured: the agent cannot answer until one is set.</span>
    <button type="button" class="primary provider-configure" onClick=${openSettings}>
      Configure provider
    </button>
  </div>`
}
