"""The report's steps in order: prepare (split and encode once), measure
(every stage on the one coding), decide (the verdicts, ``_verdicts``), then
render (``_html``), and write the file."""

import warnings
from contextlib import contextmanager
from pathlib import Path

from sklearn.utils import Bunch

from .._utils._progress import Progress
from ._analysis import (
    analyse_dependence,
    fit_model,
    incomplete_columns,
    measure_conditional,
    measure_importances,
    plan_conditional,
    plan_methods,
    prepare_inputs,
    select_features,
    top_features,
)
from ._common import PROG, ReportError
from ._common import names_text as _names
from ._data import load_table, prepare_data
from ._html import (
    conditional_html,
    dependence_html,
    importance_html,
    overview_html,
    render_html,
    score_html,
    skipped_html,
    summary_html,
    warnings_html,
)
from ._selector_html import selector_html
from ._verdicts import clearly_above, decide


def run_report(args, methods):
    """Compute everything and write the HTML file; returns the exit status.

    ``args`` are the parsed options, checked, and ``methods`` the importance
    methods to compare. Warnings raised along the way are listed on the page,
    under the step that raised them, instead of the terminal.
    """
    progress = Progress(PROG, not args.quiet, command=True)
    table = load_table(
        args.data,
        args.target,
        args.demo,
        sep=args.sep,
        encoding=args.encoding,
        decimal=args.decimal,
    )
    target, source, sep = table.target, table.source, table.sep
    data = prepare_data(
        table.frame,
        target,
        args.task,
        args.max_rows,
        args.random_state,
        decimal=table.decimal,
        log_target=args.log_target,
        read_notes=table.notes,
    )
    progress(
        f"{len(data.y)} rows, {data.X.shape[1]} features, target {target!r} "
        f"({data.task})"
        + (f"; {len(data.excluded)} column(s) left out" if data.excluded else "")
    )
    for note in table.notes:
        progress(note)
    caught = []
    facts = _analysis(data, methods, args, progress, caught)
    decided = decide(data, facts, args)
    sections = [
        summary_html(data, facts, decided, args),
        overview_html(source, target, data, facts.methods, sep),
        *_sections(data, facts, decided, args),
    ]
    if caught:
        progress(f"{len(caught)} distinct warning(s), listed in the report")
        sections.append(warnings_html(caught))

    name = "diabetes" if args.demo else Path(source).name
    title = f"Feature importances: {target} from {name}"
    out = Path(args.out)
    try:
        out.write_text(render_html(sections, title), encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"--out {str(out)!r} could not be written: {exc}.") from None
    progress(f"wrote {out}")
    return 0


@contextmanager
def _step(name, caught):
    """Record the warnings of a step, with the step's name, including those
    of its parallel workers (run as threads, so that their warnings reach
    this process)."""
    from joblib import parallel_config

    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        with parallel_config(backend="threading"):
            yield
    for message in dict.fromkeys(str(w.message) for w in records):
        if (name, message) not in caught:
            caught.append((name, message))


def _analysis(data, methods, options, progress, caught):
    """Split and encode once, then measure every stage not skipped: the
    facts the page is made of (nothing rendered here)."""
    verbose = progress.verbose
    facts = Bunch(
        methods=list(methods),
        results=None,
        selector=None,
        selector_notes=[],
        analyzer=None,
        conditional=None,
        comparison=None,
        top=[],
        method_notes=[],
    )
    inputs = prepare_inputs(data, options)
    with _step("model", caught):
        facts.fitted = fit_model(inputs, options, progress)
    features = [str(c) for c in data.X.columns]
    if "importances" in options.skip:
        facts.top = features[: options.top]
    else:
        planned, notes, short = plan_methods(
            methods,
            inputs.fit_seconds,
            data.X.shape[1],
            options.time_budget,
            len(inputs.test),
        )
        if short:
            progress(short)
        facts.methods, facts.method_notes = planned, notes
        with _step("importances", caught):
            facts.results = measure_importances(inputs, planned, options, progress)
        facts.top = top_features(facts.results, inputs.random_name, options.top)

    if "selector" not in options.skip:
        with (
            _step("ImportanceSelector", caught),
            progress.stage("ImportanceSelector (probes and p-values)", inner=True),
        ):
            facts.selector, facts.selector_notes = select_features(
                inputs, options, verbose
            )

    if "dependence" not in options.skip:
        chosen = facts.top[: options.top]
        with (
            _step("dependence", caught),
            progress.stage(
                f"DependenceAnalyzer ({len(chosen)} features, one forest each)",
                inner=True,
            ),
        ):
            facts.analyzer = analyse_dependence(inputs, chosen, options, verbose)

    if "conditional" not in options.skip:
        facts.comparison = _conditional(facts, options, progress, caught)
    return facts


def _sections(data, facts, decided, options):
    """The page's sections after the summary and the data, rendered from
    the facts and what was decided from them."""
    fitted = facts.fitted
    sections = [
        score_html(
            fitted.score,
            fitted.chance,
            data.task,
            len(fitted.train),
            len(fitted.test),
            options.scoring,
            fitted.model[-1],
        )
    ]
    if facts.results is None:
        sections.append(skipped_html("Importances", "importances"))
    else:
        sections.append(
            importance_html(
                facts.results,
                fitted.random_name,
                data.task,
                options.top,
                facts.method_notes,
                findings=decided.findings,
            )
        )
    if facts.selector is None:
        sections.append(skipped_html("ImportanceSelector", "selector"))
    else:
        sections.append(
            selector_html(
                facts.selector,
                data.X.columns,
                facts.selector_notes,
                options.top,
                task=data.task,
                target_unit=data.target_unit,
            )
        )
    if "dependence" in options.skip:
        sections.append(skipped_html("Dependence", "dependence"))
    else:
        sections.append(
            dependence_html(
                facts.analyzer,
                len(data.X.columns),
                options.dependence_rows,
                options.dependence_trees,
            )
        )
    if facts.comparison is None:
        sections.append(
            skipped_html("Ordinary and conditional permutation", "conditional")
        )
    else:
        sections.append(
            conditional_html(
                **facts.comparison,
                n_held_out=len(fitted.test),
                n_features=len(facts.top),
                analyzer=facts.analyzer,
                disagree=decided.shared,
                partners=decided.partners,
            )
        )
    return sections


def _conditional(facts, options, progress, caught):
    """What the comparison of ordinary and conditional permutation
    importance needs, for the leading features that ordinary permutation
    puts clearly above the random column (conditional permutation reused
    when it was one of the methods, else measured on a sample of the
    held-out rows): the keyword arguments of ``conditional_html`` but the
    page's counts."""
    fitted, results = facts.fitted, facts.results or {}
    ordinary = results.get("permutation")
    comparison = dict(
        ordinary=ordinary,
        conditional=None,
        random_name=fitted.random_name,
        candidates=[],
        n_rows=None,
        note=None,
        missing=ordinary is None,
    )
    if ordinary is None:
        return comparison
    above = clearly_above("permutation", ordinary, fitted.random_name)
    candidates = [f for f in facts.top[: options.top] if above.get(f)]
    conditional = results.get("conditional_permutation")
    n_rows, note = len(fitted.test), None
    incomplete = incomplete_columns(fitted) if conditional is None else []
    if incomplete and candidates:
        note = (
            "Left out: conditional permutation importance models each column "
            "from the others and needs complete columns; "
            f"{_names(incomplete)} {'has' if len(incomplete) == 1 else 'have'} "
            "missing values. Impute them before the report to compare the two."
        )
    elif conditional is None and candidates:
        n_rows, seconds, note = plan_conditional(
            len(candidates) + 1, fitted.X.shape[1], len(fitted.test), options
        )
        if note is None:
            with (
                _step("conditional permutation", caught),
                progress.stage(
                    f"conditional permutation importance ({len(candidates)} "
                    f"features, one forest each, {n_rows} held-out rows)",
                    inner=True,
                ),
            ):
                conditional = measure_conditional(
                    fitted, candidates, n_rows, options, progress.verbose
                )
        else:
            progress(f"conditional permutation over --time-budget ({seconds:.0f} s)")
    facts.conditional = conditional
    comparison.update(
        conditional=conditional, candidates=candidates, n_rows=n_rows, note=note
    )
    return comparison
