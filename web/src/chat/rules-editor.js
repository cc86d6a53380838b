// The permission rules in the settings dialog: the person's allow / ask / deny rules by tool and
// pattern (GET/PUT /api/config/permissions), and the built-in secret rules, each of which a
// rule with the same tool and pattern replaces ("Relax" adds one that allows).

import { useEffect, useState } from "preact/hooks"
import { api } from "../api.js"
import { html } from "./html.js"

export const RULE_TOOLS = ["shell", "read", "write", "edit", "grep", "glob", "*"]
export const RULE_ACTIONS = ["allow", "ask", "deny"]

/** The PUT body for the editor's rows: empty patterns are dropped, the rest trimmed. */
export function rulesBody(rows) {
  return {
    rules: rows
      .filter((r) => r.pattern.trim())
      .map((r) => ({ tool: r.tool, pattern: r.pattern.trim(), action: r.action })),
  }
}

function RuleRow({ rule, index, onChange, onRemove }) {
  const set = (field) => (e) => onChange(index, { ...rule, [field]: e.currentTarget.value })
  return html`<tr class="rule-row">
    <td>
      <select aria-label="Tool" name="tool" value=${rule.tool} onChange=${set("tool")}>
        ${RULE_TOOLS.map((t) => html`<option key=${t} value=${t}>${t}</option>`)}
      </select>
    </td>
    <td>
      <input
        aria-label="Pattern"
        name="pattern"
        autocomplete="off"
        spellcheck="false"
        placeholder=${rule.tool === "shell" ? "git *" : "src/**"}
        value=${rule.pattern}
        onInput=${set("pattern")}
      />
    </td>
    <td>
      <select aria-label="Action" name="action" value=${rule.action} onChange=${set("action")}>
        ${RULE_ACTIONS.map((a) => html`<option key=${a} value=${a}>${a}</option>`)}
      </select>
    </td>
    <td>
      <button type="button" class="link-button" onClick=${() => onRemove(index)}>Remove</button>
    </td>
  </tr>`
}

export function RulesEditor() {
  const [rows, setRows] = useState(null)
  const [defaults, setDefaults] = useState([])
  const [error, setError] = useState(null)
  const [state, setState] = useState("")
  useEffect(() => {
    api("GET", "/api/config/permissions").then(
      (data) => {
        setRows(data?.rules ?? [])
        setDefaults(data?.defaults ?? [])
      },
      (e) => setError(e.message),
    )
  }, [])
  if (!rows) return error ? html`<p class="form-error" role="alert">${error}</p>` : null
  const change = (i, rule) => (setRows(rows.map((r, j) => (j === i ? rule : r))), setState(""))
  const remove = (i) => (setRows(rows.filter((_, j) => j !== i)), setState(""))
  const add = (rule) => (setRows([...rows, rule]), setState(""))
  const save = async () => {
    setError(null)
    setState("saving")
    try {
      const data = await api("PUT", "/api/config/permissions", { body: rulesBody(rows) })
      setRows(data?.rules ?? [])
      setState("saved")
    } catch (e) {
      setError(e.message)
      setState("")
    }
  }
  return html`<section class="rules-editor" aria-label="Permission rules">
    <h2>Permission rules</h2>
    <p class="hint">
      Deny beats ask, ask beats allow, in both modes. A shell pattern is a glob over the command
      (<code>git *</code>); a file pattern over the path in the session's folder
      (<code>src/**</code>).
    </p>
    <table>
      <tbody>
        ${rows.map(
          (rule, i) =>
            html`<${RuleRow}
              key=${i}
              rule=${rule}
              index=${i}
              onChange=${change}
              onRemove=${remove}
            />`,
        )}
      </tbody>
    </table>
    ${error && html`<p class="form-error" role="alert">${error}</p>`}
    <div class="dialog-buttons">
      <button
        type="button"
        class="rules-add"
        onClick=${() => add({ tool: "shell", pattern: "", action: "ask" })}
      >
        Add rule
      </button>
      <button
        type="button"
        class="primary rules-save"
        disabled=${state === "saving"}
        onClick=${save}
      >
        ${state === "saved" ? "Applied" : "Apply rules"}
      </button>
    </div>
    <details class="rules-defaults">
      <summary>Built-in rules (${defaults.length})</summary>
      <ul>
        ${defaults.map(
          (d) =>
            html`<li key=${`${d.tool} ${d.pattern}`}>
              <code>${d.tool}</code> <code>${d.pattern}</code>: ${d.action}
              ${d.except?.length ? ` (except ${d.except.join(", ")})` : ""}
              <button
                type="button"
                class="link-button"
                onClick=${() => add({ tool: d.tool, pattern: d.pattern, action: "allow" })}
              >
                Relax
              </button>
            </li>`,
        )}
      </ul>
    </details>
  </section>`
}
