"""The ``sklearn-fimp`` command: one self-contained HTML report per data set.

``sklearn-fimp report DATA.csv --target COLUMN`` fits a random forest to
predict ``COLUMN`` from the other columns and writes one HTML file (figures
embedded as PNG) with the model's score, its importances under several
methods next to a column of random numbers, the features
:class:`~sklearn_fimp.ImportanceSelector` keeps (with p-values) and the
dependence analysis of :class:`~sklearn_fimp.DependenceAnalyzer`.
``sklearn-fimp report --demo`` does the same on scikit-learn's diabetes
data, so it runs on a fresh machine with no input.

Exit status: 0 on success; 2 when the input cannot be used (missing file,
unknown target column, a target with one value, a bad option) or pandas or
matplotlib is missing, with a one-line message on stderr and no traceback.

The steps, one module each, in the order they run:

- ``_arguments``: the parser, the checks of the options, and ``main``;
- ``_run``: the report's steps in order (prepare, measure, decide, render)
  and writing the file;
- ``_data`` and ``_columns``: reading the CSV file (separator, decimal
  mark, repeated headers) or the demo table, the task, the features and
  target, and what each column holds (numbers, dates, identifiers, names,
  free text);
- ``_analysis``: the split and the one coding of string columns that every
  stage uses (``prepare_inputs``), the model, the importances,
  ImportanceSelector, DependenceAnalyzer and conditional permutation;
- ``_verdicts``: which features matter, are noise or are uncertain, and the
  next steps, with no HTML;
- ``_html`` and ``_figures``: the page, rendered from what was measured and
  decided (the text and tables; the figures, embedded as PNG).
"""

from ._arguments import main

__all__ = ["main"]
