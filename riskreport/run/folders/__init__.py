"""What lies in a reports folder: summary.json, saved tables, what changed, the risk gate, the index, locks, the atomic move."""
