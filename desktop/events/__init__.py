"""The event-sourcing core: the durable bus, its fan-out, event shapes, the projector, ids
and history reads."""
