"""Running reports, in four floors that import only downward: `cli` (the command line and template authoring) ->
`schedule` (batches of jobs) | `api` (`rr.analyse`, `Analysis`) -> `report` (one template run into one report folder)
-> `folders` (what lies in reports/: summary.json, saved tables, what changed, the gate, the index, locks)."""
