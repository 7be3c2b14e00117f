"""The command line: the parser, the checks of the options, and ``main``."""

import argparse
import sys
from pathlib import Path

from .._plot._common import check_matplotlib
from .._utils._targets import MAX_CLASSES_OF_NUMERIC_TARGET
from ._analysis import (
    DEFAULT_METHODS,
    DEPENDENCE_ROWS,
    DEPENDENCE_TREES,
    IMPORTANCE_METHODS,
    PRECISE_HELD_OUT_ROWS,
    ROUND_TREES,
    SELECTOR_ROUNDS,
    STAGES,
    TIME_BUDGET,
    TOP,
    TREE_ROWS,
)
from ._common import EXIT_USAGE, PROG, ReportError
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
    "as ordered category codes inside the model's Pipeline, the same codes "
    "in every stage. Columns are "
    "recognised first: numbers with currency symbols, thousands separators "
    "or decimal commas (guessed under a ';', tab or '|' separator, see "
    "--decimal) are parsed, dates expanded into numeric parts, identifiers, "
    "names and free text left out, and repeated header names reported (the "
    "page lists them and states the rules). Every row is "
    "used: each tree is fitted on a sample of --tree-rows rows, regression "
    "forests choose each split among a third of the features, permutations "
    "are repeated fewer times on many rows, and drop-column gives way to "
    "out-of-bag permutation (or, with many held-out rows, to the held-out "
    "permutation alone) when it would exceed --time-budget."
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
    """The options of ``report``, in the order of its help."""
    _add_subject_arguments(report)
    _add_file_format_arguments(report)
    _add_measure_arguments(report)
    _add_size_arguments(report)
    _add_run_arguments(report)


def _add_subject_arguments(report):
    """The data and its target, the methods to compare, the page to write
    and the kind of model."""
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


def _add_file_format_arguments(report):
    """How the CSV file is read: its separator, encoding and decimal mark."""
    report.add_argument(
        "--sep",
        default=None,
        help="the CSV file's column separator (default: guessed among , ; tab |)",
    )
    report.add_argument(
        "--encoding",
        default="utf-8",
        help="the CSV file's text encoding, e.g. latin-1 (default: utf-8)",
    )
    report.add_argument(
        "--decimal",
        choices=(".", ","),
        default=None,
        help="the decimal mark of numbers in the file; with ',', '1.234,5' "
        "reads as 1234.5 (default: ',' when columns are not separated by "
        "commas and a column is written with decimal commas, else '.'; the "
        "page names the columns when it guesses ',')",
    )


def _add_measure_arguments(report):
    """What is measured: the scorer, the target's scale, the stages left
    out."""
    report.add_argument(
        "--scoring",
        default=None,
        help="the scikit-learn scorer of the model and of the score-based "
        "importances, e.g. balanced_accuracy, neg_mean_absolute_error "
        "(default: accuracy or R²)",
    )
    report.add_argument(
        "--log-target",
        action="store_true",
        help="model log(1 + target) instead of the target (regression; for "
        "skewed targets such as prices)",
    )
    report.add_argument(
        "--skip",
        action="append",
        metavar="STAGE",
        help="stages to leave out, repeated or comma-separated, among "
        f"{', '.join(STAGES)}",
    )


def _add_size_arguments(report):
    """How much is computed: trees, rows, the drop-column time budget and
    the features the charts and the dependence step take."""
    report.add_argument(
        "--n-estimators",
        type=_positive_int,
        default=100,
        help="trees of the model's forest, whose score and importances the "
        "report shows (default: 100); ImportanceSelector's forests are set "
        "by --selector-trees",
    )
    report.add_argument(
        "--selector-trees",
        type=_positive_int,
        default=ROUND_TREES,
        help="trees of the forest ImportanceSelector fits in each of its "
        f"{SELECTOR_ROUNDS} rounds of probes (default: {ROUND_TREES}, the "
        "setting whose error rates were measured; more trees find weak "
        "features more often and take longer)",
    )
    report.add_argument(
        "--max-rows",
        type=_positive_int,
        default=None,
        help="use a random sample of at most this many rows (default: every row)",
    )
    report.add_argument(
        "--tree-rows",
        type=_positive_int,
        default=TREE_ROWS,
        help="rows each tree of a forest is fitted on, drawn with replacement; "
        "every row is still used by some tree and in the held-out or "
        f"out-of-bag scores (default: {TREE_ROWS}; larger is slower)",
    )
    report.add_argument(
        "--time-budget",
        type=float,
        default=TIME_BUDGET,
        metavar="SECONDS",
        help="drop-column importance (one refit per feature) is measured only "
        "when it should take at most this long; otherwise out-of-bag "
        "permutation is measured instead, or nothing when permutation "
        f"importance has {PRECISE_HELD_OUT_ROWS} held-out rows or more "
        f"(default: {TIME_BUDGET:g})",
    )
    report.add_argument(
        "--top",
        type=_positive_int,
        default=TOP,
        help="features drawn in the charts and measured by the dependence step, "
        f"the most important first; every feature is in the tables (default: {TOP})",
    )
    report.add_argument(
        "--dependence-rows",
        type=_positive_int,
        default=DEPENDENCE_ROWS,
        help=f"rows sampled for the dependence step (default: {DEPENDENCE_ROWS})",
    )
    report.add_argument(
        "--dependence-trees",
        type=_positive_int,
        default=DEPENDENCE_TREES,
        help=f"trees of each dependence model (default: {DEPENDENCE_TREES})",
    )


def _add_run_arguments(report):
    """How the report runs: parallel jobs, the seed, progress messages."""
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
    args.skip = _stages(args.skip)
    if args.time_budget < 0:
        raise ReportError(
            f"--time-budget {args.time_budget:g} is negative; pass a number of "
            "seconds (0 never measures drop-column)."
        )
    if args.scoring is not None:
        from sklearn.metrics import get_scorer_names

        if args.scoring not in get_scorer_names():
            raise ReportError(
                f"--scoring {args.scoring!r} is not a scikit-learn scorer; use one "
                "of sklearn.metrics.get_scorer_names(), e.g. balanced_accuracy, "
                "f1_macro, r2, neg_mean_absolute_error."
            )
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


def _stages(values):
    """The stages of repeated / comma-separated --skip options."""
    skipped = []
    for value in values or []:
        for name in value.split(","):
            name = name.strip()
            if not name:
                continue
            if name not in STAGES:
                raise ReportError(
                    f"--skip {name!r} is not a stage; choose among {', '.join(STAGES)}."
                )
            skipped.append(name)
    return set(skipped)


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
