"""``python -m sklearn_fimp``: the ``sklearn-fimp`` command line."""

from ._report._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
