"""Batches of jobs: the jobs file, the batch and its executors, skipped and pruned reports, hooks and JUnit."""
