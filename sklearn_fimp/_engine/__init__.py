"""The tree engine: exact permutation importance for tree ensembles that
re-routes only the rows whose paths split on a permuted column."""
