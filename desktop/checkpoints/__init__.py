"""Checkpoints: the session directory's files recorded around every step in a shadow git
repository, diffs of what each turn changed, revert, unrevert and fork.

Other packages import from here: `Checkpoints` (the engine's part), `TurnTracker`,
`forked_from`.
"""

from desktop.checkpoints.service import Checkpoints, TurnTracker, forked_from

__all__ = ["Checkpoints", "TurnTracker", "forked_from"]
