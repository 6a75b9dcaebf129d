"""The models: scores coded for them, their PyMC definitions and priors, their log-densities in numba, their likelihoods."""
