"""The service side of the agent's jobs: registry, markers, records, notices, cleanup,
restart recovery and the link to the PTY host."""
