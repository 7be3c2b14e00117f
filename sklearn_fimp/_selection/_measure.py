"""The measure step of ImportanceSelector.fit: fit the model where the
method needs it and call the method's core on the right rows."""

import numbers

import numpy as np
from sklearn.base import clone

from .._methods import HELD_OUT_ROWS, REFITS
from .._utils._frames import take_rows
from .._utils._random import MAX_SEED
from .._utils._result import importance_result
from .._utils._splits import held_out_splits, split_params


def rows_limit(max_samples, n_rows):
    """``max_samples`` for ``n_rows`` evaluation rows: at most all of them."""
    if isinstance(max_samples, numbers.Integral):
        return min(max_samples, n_rows)
    return max_samples


def measure_importances(
    estimator, method, X, y, *, fit_kwargs, options, prefit, cv, max_samples, progress
):
    """The result of registry entry ``method`` on X, and the model it
    measured (None when it fitted several).

    ``options`` holds the core's keyword arguments (labels, groups, seed,
    weights, scoring, ...). A method that refits gets the unfitted
    estimator; one that scores held-out rows gets a model fitted on each
    training split (unless ``prefit``); the others a model fitted on X.
    """
    if method.rows == REFITS:
        extra = set(fit_kwargs) - {"sample_weight"}
        if extra:
            raise ValueError(
                f"method={method.name!r} passes only sample_weight to the "
                f"estimator's fit; got {sorted(extra)}. Use another method "
                "or drop those parameters."
            )
        return method.measure(estimator, X, y, **options), None
    if method.rows == HELD_OUT_ROWS and not prefit:
        return _measure_held_out(
            estimator, method, X, y, fit_kwargs, options, cv, max_samples, progress
        )
    if not prefit:
        progress(f"fitting {type(estimator).__name__}")
        estimator = clone(estimator).fit(X, y, **fit_kwargs)
    options = dict(options, max_samples=rows_limit(max_samples, X.shape[0]))
    return method.measure(estimator, X, y, **options), estimator


def _measure_held_out(
    estimator, method, X, y, fit_kwargs, options, cv, max_samples, progress
):
    """Importance on held-out rows: one split of 20%, or each split of
    ``cv``, the model fitted on the rest (results of several splits are put
    side by side as repeats)."""
    n = X.shape[0]
    split_seeds = np.random.RandomState(options["seed"]).randint(MAX_SEED + 1, size=2)
    splits = held_out_splits(estimator, cv, y, int(split_seeds[0]))
    repeat_seeds = np.random.RandomState(split_seeds[1]).randint(
        MAX_SEED + 1, size=len(splits)
    )
    weight = options["sample_weight"]
    results, model = [], None
    for k, ((train, test), repeat_seed) in enumerate(zip(splits, repeat_seeds)):
        progress(
            f"split {k + 1} of {len(splits)}: fitting on {len(train)} rows, "
            f"scoring on {len(test)}"
        )
        model = clone(estimator).fit(
            take_rows(X, train), y[train], **split_params(fit_kwargs, train, n)
        )
        split_options = dict(
            options,
            seed=int(repeat_seed),
            sample_weight=None if weight is None else weight[test],
            max_samples=rows_limit(max_samples, len(test)),
        )
        results.append(
            method.measure(model, take_rows(X, test), y[test], **split_options)
        )
    if len(results) == 1:
        return results[0], model
    baselines = np.array([r.baseline_score for r in results])
    combined = importance_result(
        np.hstack([r.importances for r in results]),
        results[0].feature_names,
        groups=results[0].groups,
        baseline_score=float(baselines.mean()),
        baseline_scores=baselines,
        method=method.name,
        scoring=options["scoring"],
        n_repeats=options["n_repeats"],
        random_state=int(options["seed"]),
    )
    return combined, None
