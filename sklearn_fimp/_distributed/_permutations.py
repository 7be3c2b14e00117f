"""A global row permutation that each row computes for itself.

Permuting a column of a table spread over many machines usually means
sorting it by a random key, a shuffle per permutation. Here the permutation
is a function of the row's global index instead: ``targets(ids)`` says which
row each row's values go to, computed on the worker that holds the row, so
one exchange of rows (rows sent to their target's partition) serves every
repeat at once, and the in-memory computation can use the same permutation
(:meth:`GlobalPermutation.sources`).

The function is a keyed pseudorandom permutation of ``[0, n)``: a balanced
Feistel network on ``2 h`` bits (``4 ** h >= n``) with ``ROUNDS`` rounds,
each round's function a SplitMix64 finaliser of the half-block and a round
key, and values that land outside ``[0, n)`` sent through the network again
until they land inside (cycle walking, fewer than four passes on average,
since ``4 ** h < 4 n``). A Feistel network is a bijection of its domain for
any round functions, and cycle walking restricts a bijection of a larger set
to one of ``[0, n)``; with four or more rounds of a well-mixing function it
behaves as a random permutation (Luby and Rackoff, 1988). It is not drawn
uniformly from all ``n!`` permutations, which no seeded generator is either;
``tests/test_distributed_permutations.py`` checks that it is a bijection and
that fixed points, positions and pairs behave as a uniform permutation's.
"""

import numpy as np

#: Feistel rounds
ROUNDS = 6

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def splitmix64(values):
    """SplitMix64's finaliser of uint64 ``values`` (wrapping arithmetic)."""
    z = np.asarray(values, dtype=np.uint64) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


class GlobalPermutation:
    """The permutations of ``n_rows`` rows of repeats ``0, 1, ...`` drawn
    from ``seed``: row ``i``'s values go to row ``targets(i, r)``.

    Parameters
    ----------
    seed : int
        The call's seed (``draw_seed``); the same seed gives the same
        permutations on any engine and in memory.
    n_rows : int
        The number of rows, numbered ``0 .. n_rows - 1`` in the data's order.
    """

    def __init__(self, seed, n_rows):
        self.seed = int(seed)
        self.n_rows = int(n_rows)
        bits = max(2, int(np.ceil(np.log2(max(self.n_rows, 2)))))
        self.half_bits = (bits + 1) // 2
        self.mask = np.uint64((1 << self.half_bits) - 1)

    def _round_keys(self, repeat):
        base = np.uint64(self.seed % (1 << 63)) * np.uint64(1_000_003) + np.uint64(
            repeat
        )
        return splitmix64(
            splitmix64(np.full(ROUNDS, base, dtype=np.uint64))
            + np.arange(1, ROUNDS + 1, dtype=np.uint64)
        )

    def _network(self, values, keys):
        shift = np.uint64(self.half_bits)
        left, right = values >> shift, values & self.mask
        for key in keys:
            left, right = right, left ^ (splitmix64(right ^ key) & self.mask)
        return (left << shift) | right

    def targets(self, ids, repeat):
        """Where rows ``ids`` send their values in repeat ``repeat``: int64,
        the same shape as ``ids``."""
        keys = self._round_keys(repeat)
        with np.errstate(over="ignore"):
            values = self._network(np.asarray(ids, dtype=np.uint64), keys)
            outside = np.flatnonzero(values >= self.n_rows)
            while len(outside):
                values[outside] = self._network(values[outside], keys)
                outside = outside[values[outside] >= self.n_rows]
        return values.astype(np.int64)

    def sources(self, repeat):
        """The permutation in memory: row ``i`` receives the values of row
        ``sources(r)[i]``, as :class:`~sklearn_fimp._engine.Permutation` and
        ``X[source]`` read it (all ``n_rows`` at once: for tests and small
        data)."""
        source = np.empty(self.n_rows, dtype=np.int64)
        source[self.targets(np.arange(self.n_rows), repeat)] = np.arange(self.n_rows)
        return source
