"""Which rows a method measures, in one place, and the measure step of the
selectors: fit the model where the method needs it and call the method's
core on the right rows.

A registry entry says what a method measures on (``rows``: the model alone,
its training rows out of bag, rows held out of its fit, or its own refits).
``held_out_rows`` and ``measured_rows`` turn that into rows: the only
switch on it. ``ImportanceSelector``, ``RecursiveImportanceSelector`` and
the report call them.

``measure_on_rows`` measures a fitted model (or, for a method that refits,
the unfitted estimator) on some rows of X: it takes the rows, the sample
weight and the fit parameters to them, caps ``max_samples`` and calls the
registry entry's core. ``ImportanceSelector`` reaches it through
``measure`` (once per split), ``RecursiveImportanceSelector``'s
``elimination_path`` at each step of its path.
"""

import numbers

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch

from ..._methods import HELD_OUT_ROWS, REFITS
from ..._utils._compat import model_importances
from ..._utils._frames import take_columns, take_rows
from ..._utils._random import MAX_SEED
from ..._utils._result import importance_result
from ..._utils._splits import (
    check_held_out_splits,
    cross_fit_splits,
    held_out_splits,
    split_params,
)


def held_out_rows(method, estimator, y, cv, seed):
    """The ``(train, test)`` row splits a model is fitted and measured on
    for ``method``: one held-out split of 20% (``cv=None``, drawn with
    ``seed``) or the splits of ``cv`` for a method that scores held-out
    rows; otherwise one split of every row and no held-out row,
    ``[(None, None)]``."""
    if method.rows == HELD_OUT_ROWS:
        return held_out_splits(estimator, cv, y, seed)
    return [(None, None)]


def cross_fitted_rows(method, estimator, y, seed):
    """Two fixed complementary halves of the rows, drawn with ``seed``, as
    ``(train, test)`` splits for a method that scores held-out rows (every
    row held out once: ``_splits.cross_fit_splits``); None for the others
    (``method`` None: the model's own importances)."""
    if method is None or method.rows != HELD_OUT_ROWS:
        return None
    return cross_fit_splits(estimator, y, seed)


def measured_rows(method, train, test):
    """``(rows, cv)`` for a model fitted on the rows ``train`` with the
    rows ``test`` held out of it (None: every row, no row): the rows the
    method is given (None: every row), and the splits a method that refits
    scores on (None: its own).

    A held-out method measures ``test`` (every row when none is held out:
    the rows given are validation rows); an out-of-bag or model-only method
    the training rows; a method that refits is given every row with the
    split as its ``cv``, or the training rows and its own splits.
    """
    if method.rows == REFITS:
        return (train, None) if test is None else (None, [(train, test)])
    if method.rows == HELD_OUT_ROWS:
        return test, None
    return train, None


def rows_limit(max_samples, n_rows):
    """``max_samples`` for ``n_rows`` evaluation rows: at most all of them."""
    if isinstance(max_samples, numbers.Integral):
        return min(max_samples, n_rows)
    return max_samples


def measure(
    estimator,
    method,
    X,
    y,
    *,
    fit_kwargs,
    options,
    prefit,
    cv,
    max_samples,
    progress,
    getter=None,
    cache=None,
    fits=None,
    fit_key=None,
    models=None,
    stop=None,
):
    """The result of registry entry ``method`` on X (with ``method=None``,
    the model's own importances read by ``getter``), and the model it
    measured (None when it fitted several).

    ``options`` holds the core's keyword arguments (labels, groups, seed,
    weights, scoring, ...). A method that refits gets the unfitted
    estimator, ``fit_kwargs`` and ``cv``; the others a model fitted on the
    training rows of each split of ``held_out_rows`` (unless ``prefit``,
    when X holds the rows to measure), measured on the rows of
    ``measured_rows``. The results of several splits are put side by side
    as repeats. A result must be one importance per feature: a scoring that
    gives several metrics is an error.

    ``cache`` (a dict, or None) keeps what the method prepares from X alone
    (``method.prepare``: conditional permutation's samplers) for the next
    call on the same X, so that rounds measuring the same columns with a
    fresh model each prepare it once. ``fits`` (a dict, or None) keeps each
    model fitted on X by ``fit_key`` (None: none is kept) and its training
    rows, for the next call on the same X with the same key: the caller
    gives one key to calls whose estimators fit the same model on the same
    rows (the rounds of a deterministic model on fixed halves, which reuse
    one seed: ``_round_models.py``), so that each is fitted once.
    ``models`` (a list, or None) gets every model fitted and measured
    appended, for the checks of a fitted model where the result is of
    several (``check_probes_reach_model``). ``stop`` (None: each model as
    fitted) gives the model measured on a split's held-out rows from the
    one fitted (``_round_models.RoundModel.stopping``), kept with the fit.
    """
    if method is None:
        return measure_model_importances(
            estimator,
            getter,
            X,
            y,
            fit_kwargs=fit_kwargs,
            labels=options["labels"],
            groups=options["groups"],
            prefit=prefit,
            progress=progress,
        )
    prepared = _prepared(method, X, options, cache, prefit, max_samples, progress)
    result, model = _measure_method(
        estimator,
        method,
        X,
        y,
        fit_kwargs,
        options,
        prefit,
        cv,
        max_samples,
        progress,
        prepared,
        None if fits is None or fit_key is None else _fits_of(fits, X, fit_key),
        models,
        stop,
    )
    if not isinstance(result, Bunch):  # a dict of them, one per metric
        raise ValueError(
            f"scoring={options['scoring']!r} returned several metrics "
            f"({sorted(result)}); a selector selects on one importance per "
            "feature, so it needs a scoring that returns one number. Pick one "
            "metric, or call the importance function directly to compare "
            "several."
        )
    return result, model


def measure_step(
    method,
    *,
    fit_kwargs,
    cv,
    max_samples,
    prefit,
    getter,
    progress,
    keep_fits=False,
    stop=None,
    fits=None,
):
    """``step(estimator, X, y, options, fit_kwargs=..., **kept)``: ``measure``
    with one selector fit's settings (the plan's ``measure``), keeping what
    a method prepares from X for the rounds after; ``kept``: ``models`` and
    ``fit_key``; ``keep_fits``: whether rounds fit the same estimator on
    the same rows again, so that each such fit is kept (in ``fits``, a
    dict another step may share: a composed test's arms measure the main
    step's fits, ``_composed.py``); ``fit_kwargs``: the rows' own, for a
    subset of the rows (a half)."""
    cache = {}
    if fits is None and keep_fits:
        fits = {}

    def step(estimator, X, y, options, fit_kwargs=fit_kwargs, **kept):
        return measure(
            estimator,
            method,
            X,
            y,
            fit_kwargs=fit_kwargs,
            options=options,
            prefit=prefit,
            cv=cv,
            max_samples=max_samples,
            getter=getter,
            progress=progress,
            cache=cache,
            fits=fits,
            stop=stop,
            **kept,
        )

    return step


def _prepared(method, X, options, cache, prefit, max_samples, progress):
    """What ``method`` prepares from X alone, from ``cache`` when it holds
    X's (None: nothing to prepare, or no cache).

    Prepared once, it covers every row of X, where each call would prepare
    only the rows it scores: where ``max_samples`` scores fewer rows than X
    has (a fraction, or an int below X's rows), every call prepares its own
    rows instead, so that time and memory stay bounded by ``max_samples``
    on large data."""
    if cache is None or method.prepare is None or prefit:
        return None
    subsampled = max_samples is not None and not (
        isinstance(max_samples, numbers.Integral) and max_samples >= X.shape[0]
    )
    if subsampled:
        return None
    cache = _cached(cache, X)
    if "prepared" not in cache:
        progress(f"preparing {method.name!r} on {X.shape[0]} rows, once")
        cache["prepared"] = method.prepare(X, options)
    return cache["prepared"]


def _cached(cache, X):
    """``cache``, emptied unless it holds what was kept for this X."""
    if cache.get("X") is not X:
        cache.clear()
        cache["X"] = X
    return cache


def _fits_of(fits, X, fit_key):
    """The models ``fits`` keeps for X and ``fit_key``, by training rows."""
    return _cached(fits, X).setdefault(("key", fit_key), {})


def _fitted_model(estimator, X, y, train, fit_params, fits):
    """A clone of ``estimator`` fitted on the rows ``train`` of X (None:
    all), or the one ``fits`` (a dict of one key's models, or None) keeps
    for those rows."""
    key = None if train is None else np.asarray(train).tobytes()
    if fits is not None and key in fits:
        return fits[key]
    model = clone(estimator).fit(take_rows(X, train), take_rows(y, train), **fit_params)
    if fits is not None:
        fits[key] = model
    return model


def _stopped_model(stop, model, X, y, split, options, fits):
    """``stop(model, ...)`` on the held-out rows of ``split`` scored as the
    method scores them, or the one ``fits`` keeps for this model and split;
    the model as fitted when the scoring gives several metrics (an error
    after)."""
    train, test = split
    key = ("stopped", np.asarray(train).tobytes())
    if fits is not None and key in fits and fits[key][0] is model:
        return fits[key][1]
    if isinstance(options["scoring"], (list, tuple, dict)):
        return model
    stopped = stop(
        model,
        take_rows(X, test),
        take_rows(y, test),
        options["scoring"],
        take_rows(options["sample_weight"], test),
    )
    if fits is not None:
        fits[key] = (model, stopped)
    return stopped


def _measure_method(
    estimator,
    method,
    X,
    y,
    fit_kwargs,
    options,
    prefit,
    cv,
    max_samples,
    progress,
    prepared=None,
    fits=None,
    models=None,
    stop=None,
):
    """``measure`` for a registry entry (``prepared``: see ``_prepared``;
    ``fits``, ``models`` and ``stop``: see ``measure``)."""
    if not method.fits_model:
        if cv is not None:  # split once, to check the held-out weights
            cv = held_out_splits(estimator, cv, y, options["seed"])
            check_held_out_splits(estimator, y, cv, options["sample_weight"])
        return measure_on_rows(
            method, estimator, X, y, dict(options, cv=cv), fit_params=fit_kwargs
        ), None
    n_rows, seed = X.shape[0], options["seed"]
    if prefit:
        splits, seeds = [(None, None)], [seed]
    else:
        split_seed, repeat_seed = np.random.RandomState(seed).randint(
            MAX_SEED + 1, size=2
        )
        splits = held_out_rows(method, estimator, y, cv, int(split_seed))
        check_held_out_splits(estimator, y, splits, options["sample_weight"])
        seeds = [seed]
        if splits[0][1] is not None:  # each held-out split its own seed
            seeds = np.random.RandomState(repeat_seed).randint(
                MAX_SEED + 1, size=len(splits)
            )
    results, model = [], estimator
    for k, ((train, test), split_seed) in enumerate(zip(splits, seeds)):
        if not prefit:
            progress(
                f"fitting {type(estimator).__name__}"
                if test is None
                else f"split {k + 1} of {len(splits)}: fitting on {len(train)} "
                f"rows, scoring on {len(test)}"
            )
            fit_params = (
                fit_kwargs
                if train is None
                else (split_params(fit_kwargs, train, n_rows))
            )
            model = _fitted_model(estimator, X, y, train, fit_params, fits)
            if models is not None:
                models.append(model)
            if stop is not None and test is not None:
                model = _stopped_model(stop, model, X, y, (train, test), options, fits)
        rows, _ = measured_rows(method, train, test)
        results.append(
            measure_on_rows(
                method,
                model,
                X,
                y,
                options,
                rows=rows,
                seed=int(split_seed),
                max_samples=max_samples,
                prepared=prepared,
            )
        )
    if len(results) == 1 or not isinstance(results[0], Bunch):  # (several
        return results[0], model  # metrics: an error in measure)
    # a score's baseline per split; a measure of outputs (SHAP) has none
    scored = all("baseline_score" in r for r in results)
    baselines = np.array([r.baseline_score for r in results]) if scored else None
    combined = importance_result(
        np.hstack([r.importances for r in results]),
        results[0].feature_names,
        **({"groups": results[0].groups} if "groups" in results[0] else {}),
        **(
            {"baseline_score": float(baselines.mean()), "baseline_scores": baselines}
            if scored
            else {}
        ),
        method=method.name,
        scoring=options["scoring"],
        n_repeats=options["n_repeats"],
        random_state=int(seed),
    )
    return combined, None


def measure_on_rows(
    method,
    model,
    X,
    y,
    options,
    *,
    rows=None,
    seed=None,
    max_samples=None,
    columns=None,
    fit_params=None,
    prepared=None,
):
    """The result of registry entry ``method`` measured on the rows ``rows``
    of X (None: every row), of its columns ``columns`` (None: all): the one
    call of a method's core by the selectors.

    ``model`` is the model fitted, or for a method that refits
    (``method.fits_model`` false) the unfitted estimator, given
    ``fit_params`` (of X's rows) taken to ``rows``. ``options`` are the
    core's options for X's rows: the sample weight is taken to ``rows``,
    ``prepared`` (``_prepared``, None: nothing) likewise; the core's seed is
    ``seed`` (None: the one in ``options``), and ``max_samples`` (None: all
    rows) is capped at the rows measured (``rows_limit``).
    """
    n_measured = X.shape[0] if rows is None else len(rows)
    options = dict(
        options,
        **({} if prepared is None else method.take(prepared, rows)),
        seed=options["seed"] if seed is None else seed,
        sample_weight=take_rows(options["sample_weight"], rows),
        max_samples=rows_limit(max_samples, n_measured),
    )
    if not method.fits_model:
        options["fit_params"] = (
            fit_params if rows is None else split_params(fit_params, rows, X.shape[0])
        )
    X_measured = take_rows(X, rows)
    if columns is not None:
        X_measured = take_columns(X_measured, columns)
    return method.measure(model, X_measured, take_rows(y, rows), **options)


def real_features_only(result, labels, groups):
    """``result`` of the real features (or groups) alone, as the selector
    keeps it when no probe was added: their labels and columns, and no
    probe."""
    result.feature_names = np.asarray(labels, dtype=object)
    result.groups = list(groups)
    result.is_probe = np.zeros(len(groups), dtype=bool)
    result.n_probes = 0
    return result


def check_importance_getter(getter, method):
    """``importance_getter`` reads the model's own importances, which a
    method would measure another way: one of them must go (the parameters
    a getter ignores are warned of by the selector's
    ``_warn_ignored_parameters``)."""
    if method != "auto":
        raise ValueError(
            f"importance_getter={getter!r} reads the model's own importances, "
            f"and method={method!r} measures them another way; pass one of "
            "them (method='auto' with importance_getter, or "
            "importance_getter=None)."
        )


def measure_model_importances(
    estimator, getter, X, y, *, fit_kwargs, labels, groups, prefit, progress
):
    """The model's own importances (``importance_getter``) of X's columns
    as a result of one repeat, and the model (fitted here unless
    ``prefit``)."""
    if not prefit:
        progress(f"fitting {type(estimator).__name__}")
        estimator = clone(estimator).fit(X, y, **fit_kwargs)
    values = model_importances(estimator, getter)
    if values.shape != (X.shape[1],):
        raise ValueError(
            f"importance_getter={getter!r} gave importances of shape "
            f"{values.shape} for X's {X.shape[1]} columns; it must give one "
            "per column of X (a Pipeline step that changes the columns "
            "cannot; use method= instead)."
        )
    importances = np.array([values[columns].sum() for columns in groups])
    return importance_result(
        importances[:, np.newaxis],
        labels,
        groups=groups,
        method="importance_getter",
        importance_getter=getter,
    ), estimator
