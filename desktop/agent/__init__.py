"""The agent loop: the session service's verbs, the runner and its steps, lowering, prompts,
tool execution, permissions, settling, subagents, and the engine that builds them."""
