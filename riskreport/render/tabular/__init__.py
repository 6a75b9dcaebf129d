"""Tables as a reader sees them: the report's wide tables in HTML, LaTeX and CSV, at a campaign's scale too."""
