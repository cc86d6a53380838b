"""The PTY host: the daemon that owns every terminal and outlives the service, and the modules
the service uses to reach it. The service imports only its side (client, launcher,
handoff_client) and the shared protocol, validation and hostfiles; docs/ARCHITECTURE.md says
which module runs where.
"""
