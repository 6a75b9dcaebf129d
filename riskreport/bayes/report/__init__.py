"""The Bayesian risk report: every fit, table and figure input in one call (`analysis`), and its words (`presentation`)."""
