"""Analysis: agreement statistics, correlations with humans and question diagnostics."""
