"""Fitting a model to a target ESS: the compiled model, chains here or on Dask, when to stop, progress, the fits and their cache."""
