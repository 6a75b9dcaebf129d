"""What a fit's draws are worth: R̂ and bulk/tail ESS (`convergence`), WAIC and PSIS-LOO (`psis`), for a fit (`diagnostics`)."""
