"""The report's steps in order, from the input to the HTML file."""

import warnings
from pathlib import Path

from .._utils._progress import Progress
from ._analysis import (
    analyse_dependence,
    fit_model,
    measure_importances,
    select_features,
)
from ._common import PROG, ReportError
from ._data import load_table, prepare_data
from ._html import (
    dependence_html,
    importance_html,
    overview_html,
    render_html,
    score_html,
    selector_html,
    warnings_html,
)


def run_report(args, methods):
    """Compute everything and write the HTML file; returns the exit status.

    ``args`` are the parsed options, checked, and ``methods`` the importance
    methods to compare. Warnings raised along the way are listed on the page
    instead of the terminal.
    """
    progress = Progress(PROG, not args.quiet, command=True)
    frame, target, source = load_table(args.data, args.target, args.sep, args.demo)
    data = prepare_data(frame, target, args.task, args.max_rows, args.random_state)
    progress(
        f"{len(data.y)} rows, {data.X.shape[1]} features, target {target!r} "
        f"({data.task})"
    )
    sections = [overview_html(source, target, data, methods)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sections.extend(_analysis_sections(data, methods, args, progress))
    messages = list(dict.fromkeys(str(w.message) for w in caught))
    if messages:
        progress(f"{len(messages)} distinct warning(s), listed in the report")
        sections.append(warnings_html(messages))

    name = "diabetes" if args.demo else Path(source).name
    title = f"Feature importances: {target} from {name}"
    out = Path(args.out)
    try:
        out.write_text(render_html(sections, title), encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"--out {str(out)!r} could not be written: {exc}.") from None
    progress(f"wrote {out}")
    return 0


def _analysis_sections(data, methods, options, progress):
    """The sections after the overview: each step measures, then renders."""
    fitted = fit_model(data, options, progress)
    sections = [
        score_html(
            fitted.score, fitted.chance, data.task, len(fitted.train), len(fitted.test)
        )
    ]
    results = measure_importances(
        fitted.model,
        fitted.X,
        fitted.y,
        fitted.train,
        fitted.test,
        methods,
        options,
        progress,
    )
    sections.append(importance_html(results, fitted.random_name, data.task))

    with progress.stage("ImportanceSelector (probes and p-values)"):
        selector, notes = select_features(data, options)
        sections.append(selector_html(selector, data.X.columns, notes))

    with progress.stage("DependenceAnalyzer (one forest per feature)"):
        sections.append(dependence_html(analyse_dependence(data, options)))
    return sections
