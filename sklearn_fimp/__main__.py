"""``python -m sklearn_fimp``: the ``sklearn-fimp`` command line."""

from ._report import main

if __name__ == "__main__":
    raise SystemExit(main())
