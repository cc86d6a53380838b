// What a tool card shows beyond name and input (messages.js's ToolPart): the status as the
// person reads it (a cancelled call is an error part whose type says so), a shell call's
// command and exit code from its metadata, and the arguments while they still stream in.

import { html } from "./html.js"

/** streaming | running | completed | error | cancelled */
export function toolStatus(part) {
  const status = part.state?.status ?? "running"
  if (status === "error" && part.state?.error?.type === "cancelled") return "cancelled"
  return status
}

/** The shell command, from the settled input or (while streaming) nothing yet. */
export function shellCommand(part) {
  const input = part.state?.input
  return part.name === "shell" &&
    input &&
    typeof input === "object" &&
    typeof input.command === "string"
    ? input.command
    : null
}

/** "exit 0" / "exit 2" next to a settled shell call's name (metadata.exit_code). */
export function ToolBadge({ part }) {
  const code = part.state?.metadata?.exit_code
  if (part.name !== "shell" || typeof code !== "number") return null
  return html`<span class="tool-exit" data-code=${code} title=${`Exit code ${code}`}
    >exit ${code}</span
  >`
}

/** The arguments as they stream (session.tool.input.delta), until the call is made. */
export function ToolLiveInput({ thread, part }) {
  if (part.state?.status !== "streaming" || !thread) return null
  const text = thread.toolInputOf(part.id).value
  return text ? html`<pre class="plain tool-live-input" aria-live="off">${text}</pre>` : null
}
