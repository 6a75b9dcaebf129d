"""Effectiveness: per-topic scores of runs through ir_measures and the native gdeval-exact ERR/nDCG, RBP and
judged-fraction evaluators, and the report parameters resolved against a collection."""
