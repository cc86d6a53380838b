// How each durable event changes a message: the client's mirror of desktop/events/projector.py,
// so the view follows the live stream without re-reading the message. Reducers edit a draft
// (a deep copy) and return true when they changed it; an event for a message the client has not
// loaded is ignored (its page, read later, carries the result).

const STEP_RESULT = ["finish", "error", "tokens", "cost"]

function toolPart(message, data, created, create) {
  const found = message.content.find((part) => part.type === "tool" && part.id === data.call_id)
  if (found || !create) return found ?? null
  const part = {
    type: "tool",
    id: data.call_id,
    name: data.name,
    state: { status: "streaming", input: "" },
    time: { created },
  }
  message.content.push(part)
  return part
}

function settle(message, data, created, state) {
  const part = toolPart(message, data, created, false)
  if (!part) return false
  state.input = part.state?.input ?? ""
  if (data.metadata !== undefined) state.metadata = data.metadata
  part.state = state
  part.time = { ...part.time, completed: created }
  return true
}

// The message's partial part of this kind that a block's event completes, if any.
function partialBlock(message, kind) {
  const last = message.content[message.content.length - 1]
  if (!last || last.type !== kind || !last.partial) return null
  delete last.partial
  return last
}

/** Events that create a message: (event) -> the new message. */
export const CREATE = {
  "session.prompted": ({ data, created }) => ({
    id: data.message_id,
    type: "user",
    text: data.text,
    time: { created },
    // A subagent's task: the parent session whose agent wrote it.
    ...(data.from_session ? { from_session: data.from_session } : {}),
    // Steered into a running turn (read at its next step); a queued prompt carries no mode.
    ...(data.mode === "steer" ? { mode: "steer" } : {}),
  }),
  "session.synthetic": ({ data, created }) => ({
    id: data.message_id,
    type: "synthetic",
    text: data.text,
    description: data.description ?? "",
    metadata: data.metadata ?? {},
    time: { created },
  }),
  // A compaction shows as a synthetic message at the point it happened; what it hides from
  // the model is in its metadata.
  "session.compacted": ({ data, created }) => ({
    id: data.message_id,
    type: "synthetic",
    text: data.summary,
    description: "compaction",
    metadata: {
      compaction: {
        through: data.through ?? null,
        pruned: data.pruned ?? [],
        reason: data.reason,
        tokens: data.tokens,
      },
    },
    time: { created },
  }),
  "session.step.started": ({ data, created }) => ({
    id: data.message_id,
    type: "assistant",
    agent: data.agent,
    model: data.model,
    content: [],
    time: { created },
  }),
}

/** Events that change an existing assistant message: (draft, event) -> changed? */
export const UPDATE = {
  "session.step.started": (m, { data }) => {
    // A restarted step (retry, resume): the message is live again.
    m.agent = data.agent
    m.model = data.model
    for (const key of STEP_RESULT) delete m[key]
    delete m.time.streamed
    delete m.time.completed
    return true
  },
  "session.step.streamed": (m, { data, created }) => {
    m.time.streamed ??= created
    if (data.part && typeof data.text === "string") {
      // Text saved while its block still streams grows a partial part; the block's own
      // event replaces it (a crash leaves it, marked partial).
      let last = m.content[m.content.length - 1]
      if (!last || last.type !== data.part || !last.partial) {
        last = { type: data.part, text: "", partial: true }
        if (data.part === "reasoning") last.time = { created }
        m.content.push(last)
      }
      last.text += data.text
    }
    return true
  },
  "session.step.ended": (m, { data, created }) => {
    m.time.completed = created
    m.finish = data.finish
    if (data.tokens !== undefined) m.tokens = data.tokens
    if (data.cost !== undefined) m.cost = data.cost
    if (data.checkpoint !== undefined) m.checkpoint = data.checkpoint
    return true
  },
  "session.step.failed": (m, { data, created }) => (
    (m.time.completed = created),
    (m.error = data.error),
    true
  ),
  "session.text": (m, { data }) => {
    const part = partialBlock(m, "text")
    if (part) part.text = data.text
    else m.content.push({ type: "text", text: data.text })
    return true
  },
  "session.reasoning": (m, { data, created }) => {
    const part = partialBlock(m, "reasoning")
    if (part) part.text = data.text
    else m.content.push({ type: "reasoning", text: data.text, time: { created } })
    return true
  },
  "session.tool.input.started": (m, { data, created }) => (toolPart(m, data, created, true), true),
  "session.tool.called": (m, { data, created }) => {
    const part = toolPart(m, data, created, true)
    part.name = data.name
    part.state = { status: "running", input: data.input }
    part.time = { ...part.time, ran: created }
    if (data.executed !== undefined) part.executed = data.executed
    return true
  },
  "session.tool.success": (m, { data, created }) =>
    settle(m, data, created, { status: "completed", content: data.content }),
  "session.tool.failed": (m, { data, created }) =>
    settle(m, data, created, { status: "error", error: data.error }),
  "session.message.content.updated": (m, { data, created }) => {
    m.content = structuredClone(data.content)
    m.time.edited = created
    return true
  },
}

/** Events that remove a message (a prompt cancelled before delivery). */
export const REMOVE = new Set(["session.input.cancelled"])

/** Session status as the projection sets it: event type -> status. */
export const STATUS = {
  "session.step.started": "idle",
  "session.step.ended": "idle",
  "session.step.failed": "error",
  "session.resume.exhausted": "error",
}

/** Event types after which a session's `time.updated` moves (the projection's touch). */
export const TOUCH = new Set([
  "session.updated",
  "session.prompted",
  "session.synthetic",
  "session.step.started",
  "session.compacted",
  "session.step.ended",
  "session.step.failed",
  "session.message.content.updated",
  "session.input.cancelled",
  "session.execution.interrupted",
  "session.resume.exhausted",
])

/** The assistant message may be edited: completed, and no tool part still streaming/running. */
export function editable(message) {
  if (message?.type !== "assistant" || !message.time?.completed) return false
  return !message.content.some(
    (p) => p.type === "tool" && (p.state?.status === "streaming" || p.state?.status === "running"),
  )
}
