"""Measures on the fitted models: system effects, dominance, model choice and diagnostics (`measures`), BRisk⁻, PPDRisk⁻."""
