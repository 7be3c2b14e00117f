"""The command line: the parser, the checks of the options, and ``main``."""

import argparse
import sys
from pathlib import Path

from .._plot._common import check_matplotlib
from ._analysis import DEFAULT_METHODS, IMPORTANCE_METHODS
from ._common import EXIT_USAGE, PROG, ReportError
from ._data import MAX_CLASSES_OF_NUMERIC_TARGET
from ._run import run_report

DESCRIPTION = (
    "Feature importances you can trust. 'report' writes one HTML file "
    "on what a random forest learns from a CSV file."
)
REPORT_DESCRIPTION = (
    "Fit a random forest that predicts TARGET from the other columns and "
    "write one self-contained HTML file: the model's held-out score; "
    "its importances (MDI, permutation, drop-column ...) with a column "
    "of random numbers for reference; the features ImportanceSelector "
    "keeps and their p-values; the dependence heatmap and the features "
    "DependenceAnalyzer would drop. The target is predicted by a "
    "classifier when it is not numeric, or holds at most "
    f"{MAX_CLASSES_OF_NUMERIC_TARGET} distinct whole numbers, and by a "
    "regressor otherwise (--task overrides). String columns are encoded "
    "as ordered category codes inside the model's Pipeline; every column "
    "is used."
)
REPORT_EPILOG = (
    "Exit status: 0 when the report is written; 2 with a message when the "
    "input cannot be used (missing file, unknown target column, a target "
    "with one value, a bad option, pandas or matplotlib not installed)."
)


def main(argv=None):
    """Run ``sklearn-fimp`` with the arguments ``argv`` (default: sys.argv).

    Parameters
    ----------
    argv : list of str or None, default=None
        The arguments after the program name.

    Returns
    -------
    status : int
        0 on success, 2 when the input cannot be used (a message is written
        on stderr). Invalid options make argparse exit with status 2.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        methods = check_arguments(args)
        return run_report(args, methods)
    except ReportError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def build_parser():
    """The ``sklearn-fimp`` parser, with its ``report`` command."""
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    report = commands.add_parser(
        "report",
        help="write an HTML report of feature importances for a CSV file",
        description=REPORT_DESCRIPTION,
        epilog=REPORT_EPILOG,
    )
    _add_report_arguments(report)
    return parser


def _add_report_arguments(report):
    report.add_argument(
        "data", nargs="?", metavar="DATA.csv", help="the CSV file (with a header)"
    )
    report.add_argument("--target", help="the column to predict")
    report.add_argument(
        "--demo",
        action="store_true",
        help="use scikit-learn's diabetes data instead of a file",
    )
    report.add_argument(
        "--method",
        action="append",
        metavar="METHOD",
        help=(
            "importance methods to compare, repeated or comma-separated, among "
            f"{', '.join(IMPORTANCE_METHODS)} (default: "
            f"{','.join(DEFAULT_METHODS)})"
        ),
    )
    report.add_argument(
        "--out",
        default="report.html",
        metavar="PATH",
        help="the HTML file to write (default: report.html)",
    )
    report.add_argument(
        "--task",
        choices=("auto", "classification", "regression"),
        default="auto",
        help="how to predict the target (default: auto, see above)",
    )
    report.add_argument(
        "--sep", default=",", help="the CSV file's column separator (default: ,)"
    )
    report.add_argument(
        "--n-estimators",
        type=_positive_int,
        default=100,
        help="trees of each forest: the model's and the dependence models' "
        "(default: 100)",
    )
    report.add_argument(
        "--max-rows",
        type=_positive_int,
        default=10000,
        help="use a random sample of at most this many rows (default: 10000)",
    )
    report.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="parallel jobs (default: 1; -1 uses every core)",
    )
    report.add_argument(
        "--random-state",
        type=int,
        default=0,
        help="seed of the split, the forests and the permutations (default: 0)",
    )
    report.add_argument(
        "--quiet", action="store_true", help="no progress messages on stderr"
    )


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not positive")
    return value


def check_arguments(args):
    """The importance methods chosen, once the options are known to fit
    together and matplotlib is installed; a ReportError otherwise."""
    methods = _methods(args.method)
    if args.demo and (args.data is not None or args.target is not None):
        raise ReportError(
            "--demo uses scikit-learn's diabetes data; pass either --demo or "
            "DATA.csv --target COLUMN, not both."
        )
    if not args.demo and args.data is None:
        raise ReportError(
            "pass a CSV file and its target (report DATA.csv --target COLUMN), "
            "or --demo."
        )
    try:
        check_matplotlib("Drawing the report's figures")
    except ImportError as exc:
        raise ReportError(str(exc)) from None
    out = Path(args.out)
    if out.is_dir():
        raise ReportError(f"--out {str(out)!r} is a directory; name a file.")
    if not out.parent.exists():
        raise ReportError(
            f"--out {str(out)!r}: the directory {str(out.parent)!r} does not exist."
        )
    return methods


def _methods(values):
    """The importance methods of repeated / comma-separated --method options."""
    if not values:
        return list(DEFAULT_METHODS)
    chosen = []
    for value in values:
        for name in value.split(","):
            name = name.strip().replace("-", "_")
            if not name:
                continue
            if name not in IMPORTANCE_METHODS:
                raise ReportError(
                    f"--method {name!r} is not a method; choose among "
                    f"{', '.join(IMPORTANCE_METHODS)}."
                )
            if name not in chosen:
                chosen.append(name)
    if not chosen:
        raise ReportError(
            f"--method is empty; choose among {', '.join(IMPORTANCE_METHODS)}."
        )
    return chosen
