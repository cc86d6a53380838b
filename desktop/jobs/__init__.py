"""The service side of the agent's jobs: the job model and its rows, the registry, notices,
cleanup, restart recovery and the link to the PTY host."""
