"""Talking to chat-completions providers (OpenAI, Groq, any OpenAI-compatible server).

`sse` frames the byte stream, `stream` turns chunks into typed events, `errors` classifies
failures for the retry policy, `profiles` holds what differs per provider and builds the
body, `validate` is the preflight that refuses a request a strict provider would reject,
`client` does the HTTP, and `settings` stores the configuration (the key apart, 0600).
Nothing here imports the rest of Desk except `desktop.config`.
"""
