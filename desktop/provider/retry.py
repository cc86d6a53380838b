"""The back-off between retries of a retryable ProviderError, as a pure function: the numbers
only."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from desktop.provider.errors import ProviderError

BASE_DELAY = 2.0
MAX_DELAY = 60.0  # the back-off's own cap; a server's retry-after may ask for more
MAX_RETRIES = 4


def retry_delay(
    attempt: int, error: ProviderError, *, rand: Callable[[], float] = random.random
) -> float | None:
    """Seconds to wait before retry number `attempt` (1-based), or None: do not retry.

    None when the error is not retryable, when the attempts are used up, or when output
    had started (resending would repeat it: the runner continues instead).
    """
    if not error.retryable or error.output_started or attempt > MAX_RETRIES or attempt < 1:
        return None
    backoff = min(math.ldexp(BASE_DELAY, attempt - 1), MAX_DELAY)  # 2, 4, 8, 16 s
    delay = backoff * (0.5 + 0.5 * rand())
    if error.retry_after is not None:
        delay = max(delay, error.retry_after)
    return math.ceil(delay * 1000) / 1000  # whole milliseconds, as shown in a countdown
