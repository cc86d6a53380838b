"""Flow control as data: every threshold of the output and input paths, from the ring size."""

from __future__ import annotations

from dataclasses import dataclass

# Input the PTY has not taken yet, above which the controller's connection is not read.
INPUT_BACKLOG = 1024 * 1024


@dataclass(frozen=True)
class FlowLimits:
    """Flow-control thresholds derived from the ring size."""

    window_high: int  # stop sending to an attachment with this many unacknowledged bytes
    window_low: int  # resume below this
    controller_pause: int  # stop reading the PTY when the controller is this far behind
    controller_resume: int
    read_budget: int  # bytes read from one PTY per wake-up
    chunk: int  # largest output frame
    input_backlog: int  # unwritten input above which the sender is paused (resumes at half)

    @classmethod
    def for_ring(cls, capacity: int) -> FlowLimits:
        high = max(4096, min(1024 * 1024, capacity // 4))
        pause = max(high, capacity // 2)
        budget = max(4096, min(256 * 1024, capacity // 4))
        return cls(
            window_high=high,
            window_low=high // 2,
            controller_pause=pause,
            controller_resume=pause // 2,
            read_budget=budget,
            chunk=min(256 * 1024, budget),
            input_backlog=INPUT_BACKLOG,
        )
