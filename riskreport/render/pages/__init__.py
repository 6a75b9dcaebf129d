"""Report pages: the template's `Page`, its prose, the Bayesian and non-deterministic pages, the HTML export."""
