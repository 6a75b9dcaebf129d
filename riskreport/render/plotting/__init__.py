"""Figures: the plot functions, their layout and colours, and the writer that draws them to PNG, SVG and PDF."""
