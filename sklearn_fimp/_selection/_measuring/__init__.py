"""How the selector measures: the rounds of a fresh model on the features
and probes held fixed, the round models of each family, what one measure
spends, and the probe columns."""
