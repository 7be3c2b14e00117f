"""Progress messages on stderr: of long computations (``verbose > 0``) and of
the ``sklearn-fimp`` command."""

import sys
import time
from contextlib import contextmanager


class Progress:
    """Short progress lines prefixed by the name of the computation.

    With ``verbose=0`` nothing is printed. Lines go to stderr, where joblib
    writes the progress of the parallel jobs that ``verbose`` also turns on.

    Parameters
    ----------
    name : str
        What is running: a function or class name, or a program's name.
    verbose : int or bool
        Nothing is printed when it is false.
    command : bool, default=False
        False: lines read ``[name] message (elapsed 1.2s)``, with the time
        since the Progress was made. True: they read ``name: message``, as a
        command-line program writes them.
    """

    def __init__(self, name, verbose, *, command=False):
        self.name = name
        self.verbose = verbose
        self.command = command
        self.start = time.perf_counter()

    def _line(self, message):
        if self.command:
            return f"{self.name}: {message}"
        return f"[{self.name}] {message}"

    def _elapsed(self):
        if self.command:
            return ""
        return f" (elapsed {time.perf_counter() - self.start:.1f}s)"

    def __call__(self, message):
        if self.verbose:
            print(self._line(message) + self._elapsed(), file=sys.stderr, flush=True)

    @contextmanager
    def stage(self, message):
        """Time the block: print ``message ...`` now and ``1.2 s`` after it.

        The two parts share one line, so use it for stages during which
        nothing else is printed. A block that raises ends the line without
        a time, so that the error starts on a line of its own.
        """
        started = time.perf_counter()
        if self.verbose:
            print(self._line(message) + " ...", end="", file=sys.stderr, flush=True)
        try:
            yield
        except BaseException:
            if self.verbose:
                print(file=sys.stderr, flush=True)
            raise
        if self.verbose:
            seconds = time.perf_counter() - started
            print(f" {seconds:.1f} s" + self._elapsed(), file=sys.stderr, flush=True)
