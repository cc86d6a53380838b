"""Talking to chat-completions providers (OpenAI, Groq, any OpenAI-compatible server); nothing
here imports the rest of Desk except `desktop.config`."""
