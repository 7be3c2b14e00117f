"""Progress messages of long computations, on stderr (``verbose > 0``)."""

import sys
import time


class Progress:
    """Short progress lines prefixed by the name of the computation.

    With ``verbose=0`` nothing is printed. Lines go to stderr, where joblib
    writes the progress of the parallel jobs that ``verbose`` also turns on.
    """

    def __init__(self, name, verbose):
        self.name = name
        self.verbose = verbose
        self.start = time.perf_counter()

    def __call__(self, message):
        if self.verbose:
            elapsed = time.perf_counter() - self.start
            print(
                f"[{self.name}] {message} (elapsed {elapsed:.1f}s)",
                file=sys.stderr,
                flush=True,
            )
