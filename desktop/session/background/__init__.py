"""Background work: the job registry, its durable markers, notices and recovery."""
