"""Input and output: TREC run, qrels and score files, LETOR learning-to-rank data (`letor`, and the synthetic
`letor_demo`), collections, report folders, the disk cache,
provenance (file hashes, package versions) and helper-process lifetimes. Imports nothing else of riskreport
but `riskreport.errors`."""
