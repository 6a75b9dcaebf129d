"""Input and output: LETOR learning-to-rank data (`letor`)."""
