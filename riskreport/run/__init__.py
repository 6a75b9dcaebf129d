"""Running reports: the papermill runner, batches of jobs, locks, the reports index, template authoring and
the command line."""
