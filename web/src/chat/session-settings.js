// The chat header's session settings: the model picker (this session's own model and reasoning
// effort, PATCH /api/session/{id}; the provider's model list offered, free text always works)
// and the instruction files in effect (GET /api/session/{id}/instructions).

import { useEffect, useState } from "preact/hooks"
import { api } from "../api.js"
import { html } from "./html.js"
import "./session-settings.css"

export const EFFORTS = ["low", "medium", "high"]

/** The PATCH body for the picker: an empty model or effort goes back to the settings'. */
export function modelBody({ model, effort }) {
  return { model: model.trim() || null, reasoning_effort: effort || null }
}

/** The provider's models ({id, context_window?}); rejects with the route's message (502). */
export function loadModels() {
  return api("GET", "/api/config/provider/models").then((data) => (Array.isArray(data) ? data : []))
}

/** A <datalist> of the listed models, or a hint that the provider lists none. */
export function ModelOptions({ id, models, error }) {
  return html`<datalist id=${id}>
      ${(models ?? []).map((m) => html`<option key=${m.id} value=${m.id}></option>`)}
    </datalist>
    ${
      error &&
      html`<p class="hint model-list-missing">
        The provider lists no models (${error}); type the model's id.
      </p>`
    }`
}

function PickerForm({ session, store, onClose }) {
  const own = session.model ?? {}
  const [model, setModel] = useState(own.id ?? "")
  const [effort, setEffort] = useState(own.reasoning_effort ?? "")
  const [models, setModels] = useState(null)
  const [listError, setListError] = useState(null)
  const [error, setError] = useState(null)
  const [saving, setSaving] = useState(false)
  useEffect(() => {
    loadModels().then(setModels, (e) => setListError(e.message))
  }, [])
  const submit = async (event) => {
    event.preventDefault()
    setSaving(true)
    setError(null)
    try {
      await store.patchSession(session.id, modelBody({ model, effort }))
      onClose()
    } catch (e) {
      setError(e.message)
      setSaving(false)
    }
  }
  const fallback = store.provider.value?.model ?? ""
  return html`<form class="model-picker-form" onSubmit=${submit} aria-label="This session's model">
    <label for="session-model">Model <span class="optional">(empty: the settings')</span></label>
    <input
      id="session-model"
      name="model"
      list="session-model-list"
      autocomplete="off"
      spellcheck="false"
      value=${model}
      placeholder=${fallback}
      onInput=${(e) => setModel(e.currentTarget.value)}
    />
    <${ModelOptions} id="session-model-list" models=${models} error=${listError} />
    <label for="session-effort">Reasoning effort</label>
    <select
      id="session-effort"
      name="reasoning_effort"
      value=${effort}
      onChange=${(e) => setEffort(e.currentTarget.value)}
    >
      <option value="">The settings' default</option>
      ${EFFORTS.map((v) => html`<option key=${v} value=${v}>${v}</option>`)}
    </select>
    ${error && html`<p class="form-error" role="alert">${error}</p>`}
    <div class="dialog-buttons">
      <button type="button" onClick=${onClose}>Cancel</button>
      <button type="submit" class="primary" disabled=${saving}>Apply</button>
    </div>
  </form>`
}

/** The header's button naming the session's model; it opens the picker. */
export function ModelPicker({ session, store }) {
  const [open, setOpen] = useState(false)
  const id = session.model?.id || store.provider.value?.model || "model"
  const effort = session.model?.reasoning_effort
  return html`<div class="model-picker">
    <button
      type="button"
      class="model-picker-button"
      aria-expanded=${open ? "true" : "false"}
      title="This session's model and reasoning effort"
      onClick=${() => setOpen(!open)}
    >
      <span class="model-picker-id">${id}</span>${effort && html` · ${effort}`}
    </button>
    ${
      open &&
      html`<${PickerForm}
        key=${session.id}
        session=${session}
        store=${store}
        onClose=${() => setOpen(false)}
      />`
    }
  </div>`
}

/** The instruction files the system prompt carries for the session (read again as it moves). */
export function InstructionFiles({ session }) {
  const [files, setFiles] = useState(null)
  const updated = session.time?.updated
  useEffect(() => {
    let live = true
    api("GET", `/api/session/${encodeURIComponent(session.id)}/instructions`).then(
      (data) => live && setFiles(Array.isArray(data?.files) ? data.files : []),
      () => live && setFiles(null),
    )
    return () => (live = false)
  }, [session.id, updated])
  if (!files || files.length === 0) return null
  return html`<details class="instruction-files">
    <summary title="Standing instructions the agent reads at every step">
      ${files.length} instruction file${files.length === 1 ? "" : "s"}
    </summary>
    <ol>
      ${files.map(
        (f) =>
          html`<li key=${f.path}>
            <details class="instruction-file">
              <summary title=${f.path}>
                <bdi>${f.path}</bdi>${f.cut && html` <span class="hint">(cut at 32 KiB)</span>`}
              </summary>
              <pre class="instruction-text">${f.text ?? ""}</pre>
            </details>
          </li>`,
      )}
    </ol>
  </details>`
}
