// Same-origin JSON calls to the service. Auth rides on the HttpOnly cookie set by /?token=.

export class ApiError extends Error {
  /** status 0 means the service could not be reached at all. */
  constructor(status, type, message) {
    super(message)
    this.name = "ApiError"
    this.status = status
    this.type = type
  }
}

/** The whole response payload (`{data, cursor, ...}`), for routes that say more than `data`. */
export async function apiPayload(method, path, { body, headers } = {}) {
  const init = { method, headers: { ...headers }, credentials: "same-origin", cache: "no-store" }
  if (body !== undefined) {
    init.headers["content-type"] = "application/json"
    init.body = JSON.stringify(body)
  }
  let response
  try {
    response = await fetch(path, init)
  } catch (error) {
    throw new ApiError(
      0,
      "network.unreachable",
      `The Desk service is unreachable (${error.message})`,
    )
  }
  if (response.status === 204) return null
  let payload
  try {
    payload = await response.json()
  } catch {
    payload = null
  }
  if (!response.ok) {
    const detail = payload?.error ?? {}
    throw new ApiError(
      response.status,
      detail.type ?? "http.error",
      detail.message ?? `HTTP ${response.status}`,
    )
  }
  return payload
}

export async function api(method, path, options) {
  return (await apiPayload(method, path, options))?.data ?? null
}
