"""Selectors: ImportanceSelector (with its probes and probe test) and
DependenceAnalyzer."""
