"""What a reader sees: report pages (tables, verdict matrices, prose), figures, LaTeX tables and the
standalone HTML export."""
