"""How the selector decides from what the rounds measured: the probe test
and its corrections, the threshold strategies, the composed tests,
stability selection, the choice among tentative features, and the score
the selection costs with its guard."""
