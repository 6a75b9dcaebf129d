"""Input and output: TREC run, qrels and score files, LETOR learning-to-rank data (`letor`, and the synthetic
`letor_demo`), collections, report folders, the disk cache,
provenance (file hashes, package versions) and helper-process lifetimes; `inputs` reads what users have in other tools' shapes. Imports nothing else of riskreport
but `riskreport.errors`."""
