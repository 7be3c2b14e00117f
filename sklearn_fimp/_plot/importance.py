"""ImportanceDisplay: horizontal bars of feature importances."""

import numbers
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from .._methods import METHODS, signature_defaults, warn_ignored_options
from ._common import check_matplotlib, is_axes, member_label, plain_text

#: ``min_upper_bound="auto"``: the x axis of a unit-scale method extends at
#: least this far, so that a model that relies on nothing much does not show
#: bars that fill the plot.
AUTO_MIN_UPPER_BOUND = 0.1
RESULT_KEYS = ("importances", "importances_mean", "importances_std", "feature_names")

SINGLE_HEIGHT = 0.5
GROUP_HEIGHT = 0.85
KEPT_COLOR = "C0"
PROBE_COLOR = "0.55"
THRESHOLD_COLOR = "C3"


def _check_result(result, param):
    """``result`` if it is an importance result Bunch, else a clear error."""
    if not isinstance(result, Mapping) or not all(k in result for k in RESULT_KEYS):
        hint = ""
        if isinstance(result, Mapping) and "dependence" in result:
            hint = (
                " It looks like a feature_dependence result: draw it with "
                "DependenceDisplay.from_result."
            )
        raise TypeError(
            f"{param} must be the Bunch an importance function of sklearn_fimp "
            "returns (with importances, importances_mean, importances_std and "
            "feature_names), or a dict {label: such Bunch}; got "
            f"{type(result).__name__}.{hint}"
        )
    return result


def _registered(result):
    """The registry entry of the method that computed ``result``, if any."""
    return METHODS.get(result.get("method"))


def _on_unit_scale(result):
    """Whether a result's importances are at most about 1 by construction:
    normalised MDI, or drops in a score such as accuracy or R²."""
    method = _registered(result)
    return method is not None and bool(method.on_unit_scale(result))


def _unit(result):
    """The axis label of ``result``'s values (a result of no known method is
    read as a score drop, as permutation functions of other packages give)."""
    method = _registered(result) or METHODS["permutation"]
    return method.unit(result)


def _labels_and_members(result, column_names, n_real=None):
    """Tick labels and group members of the rows of ``result``.

    Results store groups as column positions. With ``column_names``, members
    are named and rows a function labelled ``x0``, ``x1`` ... (X was an
    array) take the column's name. Without them, members are named ``x0``,
    ``x1`` ... when the result's labels say X was an array, and ``#j``
    (position ``j``) otherwise. A single feature lists no members.
    """
    labels = [str(n) for n in result["feature_names"]]
    n_rows = len(labels)
    n_real = n_rows if n_real is None else n_real
    groups = result.get("groups")
    groups = (
        [np.array([i]) for i in range(n_rows)]
        if groups is None
        else [np.asarray(g, dtype=np.intp) for g in groups]
    )
    largest = max((int(g.max()) for g in groups[:n_real] if len(g)), default=-1)
    if column_names is not None:
        names = [str(c) for c in column_names]
        if len(names) <= largest:
            raise ValueError(
                f"column_names has {len(names)} names but the result uses column "
                f"position {largest}; pass the names of every column of X."
            )
    else:
        from_array = all(
            labels[i] == f"x{groups[i][0]}"
            for i in range(n_real)
            if len(groups[i]) == 1
        )
        prefix = "x" if from_array else "#"
        names = [f"{prefix}{j}" for j in range(largest + 1)]
    shown, members = [], []
    for i, label in enumerate(labels):
        group = groups[i] if i < n_real else ()
        if len(group) == 1:
            name = names[group[0]]
            if column_names is not None and label == f"x{group[0]}":
                label = name
            members.append(None if label == name or column_names is None else [name])
        elif len(group) > 1:
            members.append([names[j] for j in group])
        else:
            members.append(None)
        shown.append(label)
    return np.asarray(shown, dtype=object), members


def _first_in_row(axis):
    """Whether ``axis`` is in the first column of its figure's grid (a grid
    of methods names the rows in each row of axes)."""
    spec = axis.get_subplotspec()
    return spec is not None and spec.is_first_col()


def _method_title(result, fallback):
    method = _registered(result)
    if method is not None:
        return method.title
    return fallback if fallback is not None else ""


class _Rows(NamedTuple):
    """The rows of an ImportanceDisplay, top to bottom: the features drawn
    (``order``) and how each row looks."""

    order: np.ndarray
    positions: np.ndarray
    heights: np.ndarray
    colors: np.ndarray
    alphas: np.ndarray
    is_probe: np.ndarray
    labels: list


def _draw_bars(axis, rows, values, spread, errorbars, bar_kw):
    """One method's bars on ``axis`` (probes hatched, features not kept
    faded) and their error bars; the error bars are None when not drawn or
    when there is no spread."""
    bars = axis.barh(
        rows.positions,
        values,
        **{"height": rows.heights, "color": list(rows.colors), **bar_kw},
    )
    for patch, alpha, probe in zip(bars.patches, rows.alphas, rows.is_probe):
        patch.set_alpha(alpha)
        if probe:
            patch.set_hatch("//")
            patch.set_edgecolor("0.3")
    errorbar = None
    if errorbars and np.any(spread > 0):
        errorbar = axis.errorbar(
            values,
            rows.positions,
            xerr=spread,
            fmt="none",
            ecolor="0.15",
            elinewidth=1,
            capsize=2,
        )
    return bars, errorbar


def _tick_rows(axis, rows, names_them, first_axis):
    """Name the rows on ``axis`` when ``names_them``; otherwise leave its row
    labels blank, or hidden on axes that share ``first_axis``'s rows.
    Returns whether it names them."""
    if names_them:
        axis.set_yticks(rows.positions)
        axis.set_yticklabels(rows.labels)
    elif not axis.get_shared_y_axes().joined(axis, first_axis):
        axis.set_yticks(rows.positions)
        axis.set_yticklabels([])
    else:
        axis.tick_params(axis="y", labelleft=False)
    return names_them


def _grey_probe_labels(axes, is_probe):
    """Probes' row labels in grey italics, on the axes that name the rows."""
    for axis in axes:
        for label, probe in zip(axis.get_yticklabels(), is_probe):
            if probe:
                label.set_color("0.35")
                label.set_fontstyle("italic")


class ImportanceDisplay:
    """Feature importances as horizontal bars, for one or several methods.

    Use :meth:`from_estimator`, :meth:`from_result` or :meth:`from_selector`
    to create one; they compute (or read) the importances, and :meth:`plot`
    draws them. All parameters are stored as attributes.

    Each method gets its own axes, side by side and sharing the feature
    order (rows sorted by the importance under one method, largest on top).
    Methods are not drawn as grouped bars on one axis because their units
    differ: MDI is a share of impurity decrease, permutation and
    drop-column importances are drops in a score, MDI-oob is in units of the
    target.

    Parameters
    ----------
    importances_mean : ndarray of shape (n_methods, n_features)
        Mean importance of each feature (or group, or probe) per method;
        a 1-D array is one method.
    importances_std : ndarray of shape (n_methods, n_features) or None
        Standard deviation over the repeats (permutations, trees or
        splits), drawn as error bars.
    feature_names : array-like of shape (n_features,)
        Feature or group labels.
    method_names : list of str or None, default=None
        Title of each method's axes.
    units : list of str or None, default=None
        Label of each method's x axis.
    members : list or None, default=None
        For each feature, None or the names of the columns of its group;
        groups are drawn as thicker bars labelled with their members.
    is_probe : array-like of bool of shape (n_features,) or None, \
            default=None
        Rows that are random probe columns (drawn grey and hatched).
    selected : array-like of bool of shape (n_features,) or None, \
            default=None
        Rows a selector kept; the others are drawn pale. None: no
        selection to show.
    threshold : float or None, default=None
        Selection threshold, drawn as a vertical line on the first
        method's axes.
    on_unit_scale : array-like of bool of shape (n_methods,) or None, \
            default=None
        Whether each method's importances are at most about 1 by
        construction (normalised MDI; drops in accuracy, R², ROC AUC ...):
        ``plot(min_upper_bound="auto")`` bounds these axes from below.

    Attributes
    ----------
    bars_ : list of matplotlib BarContainer
        The bars of each method, in the order drawn (top to bottom).
    errorbars_ : list of matplotlib ErrorbarContainer or None
        The error bars of each method (None when it has no spread).
    threshold_line_ : matplotlib Line2D or None
        The threshold line.
    feature_order_ : ndarray of int
        The rows drawn, top to bottom, as positions in ``feature_names``.
    axes_ : ndarray of matplotlib Axes
        One axes per method.
    ax_ : matplotlib Axes
        The first method's axes (the one labelled with the features).
    figure_ : matplotlib Figure

    See Also
    --------
    DependenceDisplay : How well each feature is predicted by the others.
    CorrelationDisplay : Spearman rank correlations.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn_fimp import ImportanceDisplay
    >>> X, y = load_diabetes(return_X_y=True)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> display = ImportanceDisplay.from_estimator(
    ...     forest, X, y, method=["mdi", "oob_permutation"], random_state=0
    ... )
    >>> len(display.axes_)
    2
    """

    def __init__(
        self,
        importances_mean,
        importances_std,
        feature_names,
        *,
        method_names=None,
        units=None,
        members=None,
        is_probe=None,
        selected=None,
        threshold=None,
        on_unit_scale=None,
    ):
        self.importances_mean = importances_mean
        self.importances_std = importances_std
        self.feature_names = feature_names
        self.method_names = method_names
        self.units = units
        self.members = members
        self.is_probe = is_probe
        self.selected = selected
        self.threshold = threshold
        self.on_unit_scale = on_unit_scale

    # ------------------------------------------------------------------
    # constructors

    @classmethod
    def from_result(cls, result, *, column_names=None, probes=None, ax=None, **kw):
        """Draw the result of an importance function, or several side by side.

        Parameters
        ----------
        result : Bunch or dict of Bunch
            What :func:`~sklearn_fimp.mdi_importance`,
            :func:`~sklearn_fimp.permutation_importance` (or another
            importance function of this package) returned; or a dict
            ``{label: result}`` of results over the same features (or
            groups), drawn side by side in that order.
        column_names : array-like of str or None, default=None
            Names of the columns of X. Results store group members as
            column positions: with the names, groups are labelled with
            their members' names, and features of a result computed on an
            array (labelled x0, x1, ...) take their column's name. None:
            members are named x0, x1, ... (or #0, #1, ... when the result
            was computed on a DataFrame).
        probes : array-like of str or None, default=None
            Features to draw as probes (grey, hatched), such as a column of
            random numbers added for reference. The probes of an
            :class:`~sklearn_fimp.ImportanceSelector`'s ``importances_``
            (marked by its ``is_probe``) are drawn as probes anyway.
        ax : matplotlib Axes, array-like of Axes or None, default=None
            Passed to :meth:`plot`.
        **kw
            Other keyword arguments of :meth:`plot`.

        Returns
        -------
        display : ImportanceDisplay
        """
        check_matplotlib(f"{cls.__name__}.from_result")
        if isinstance(result, Mapping) and not all(k in result for k in RESULT_KEYS):
            if not result:
                raise ValueError(
                    "result is an empty dict; pass an importance result or a "
                    "dict {label: result} with at least one entry."
                )
            if not all(isinstance(v, Mapping) for v in result.values()):
                _check_result(result, "result")
            results = {
                str(label): _check_result(r, f"result[{label!r}]")
                for label, r in result.items()
            }
        else:
            r = _check_result(result, "result")
            results = {_method_title(r, "importance"): r}
        labels = list(results)
        reference = results[labels[0]]
        names = [str(n) for n in reference["feature_names"]]
        means, stds = [], []
        for label, r in results.items():
            these = [str(n) for n in r["feature_names"]]
            if sorted(these) != sorted(names) or len(set(these)) != len(these):
                raise ValueError(
                    f"result[{label!r}] has features {these[:6]}"
                    f"{'...' if len(these) > 6 else ''}, but result"
                    f"[{labels[0]!r}] has {names[:6]}"
                    f"{'...' if len(names) > 6 else ''}; side-by-side methods "
                    "must measure the same features (or groups)."
                )
            position = {n: i for i, n in enumerate(these)}
            rows = [position[n] for n in names]
            means.append(np.asarray(r["importances_mean"], dtype=float)[rows])
            stds.append(np.asarray(r["importances_std"], dtype=float)[rows])
        # a selector's importances_ marks its probes (the last rows)
        is_probe = np.asarray(
            reference.get("is_probe", np.zeros(len(names), dtype=bool)), dtype=bool
        ).copy()
        n_real = len(names) - int(is_probe.sum())
        if probes is not None:
            probes = [str(p) for p in np.atleast_1d(np.asarray(probes, dtype=object))]
            unknown = sorted(set(probes) - set(names))
            if unknown:
                raise ValueError(
                    f"probes={unknown} are not features of the result; its "
                    f"features are {names[:10]}{'...' if len(names) > 10 else ''}."
                )
            is_probe |= np.isin(np.asarray(names, dtype=object), probes)
        shown, members = _labels_and_members(reference, column_names, n_real=n_real)
        display = cls(
            np.vstack(means),
            np.vstack(stds),
            shown,
            method_names=labels,
            units=[_unit(r) for r in results.values()],
            members=members,
            is_probe=is_probe,
            on_unit_scale=np.array([_on_unit_scale(r) for r in results.values()]),
        )
        return display.plot(ax=ax, **kw)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        method="permutation",
        scoring=None,
        n_repeats=5,
        groups=None,
        probes=None,
        sample_weight=None,
        n_jobs=None,
        random_state=None,
        ax=None,
        **kw,
    ):
        """Compute importances of a fitted estimator and draw them.

        Parameters
        ----------
        estimator : estimator
            A fitted model. "mdi" needs a tree model, "oob_mdi" and
            "oob_permutation" a bagged one with bootstrap (RandomForest*,
            ExtraTrees* with ``bootstrap=True``, Bagging*); "permutation"
            and "drop_column" take any model or Pipeline ("drop_column"
            refits clones, so a fitted estimator is not required for it).
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows importances are measured on: held-out rows for
            "permutation"; the estimator's training rows for "oob_mdi" and
            "oob_permutation"; the rows "drop_column" refits on (it scores
            out of bag or on its own held-out split). Unused by "mdi".
        y : array-like of shape (n_samples,)
            Targets of ``X``.
        method : str or list of str, default="permutation"
            One of "mdi", "oob_mdi", "permutation", "oob_permutation",
            "conditional_permutation", "drop_column", "shap", or a list of
            them, drawn side by side in that order (features sorted by the
            first).
        scoring : str, callable or None, default=None
            Scorer of the permutation and drop-column methods.
        n_repeats : int, default=5
            Permutations per feature ("permutation", "oob_permutation").
        groups : None, "auto", list or dict, default=None
            Groups of features permuted or dropped together (not for the MDI
            methods); see :func:`~sklearn_fimp.permutation_importance`.
        probes : array-like of str or None, default=None
            Features to draw as probes, e.g. a random column added to X.
        sample_weight : array-like of shape (n_samples,) or None, \
                default=None
            Row weights of the scores (and of drop-column's refits).
        n_jobs : int or None, default=None
            Parallel jobs (joblib semantics).
        random_state : int, RandomState instance or None, default=None
            Seed of the permutations and refits.
        ax : matplotlib Axes, array-like of Axes or None, default=None
            Passed to :meth:`plot`.
        **kw
            Other keyword arguments of :meth:`plot`.

        Returns
        -------
        display : ImportanceDisplay
        """
        check_matplotlib(f"{cls.__name__}.from_estimator")
        names = [method] if isinstance(method, str) else list(method)
        if not names or not all(isinstance(m, str) for m in names):
            raise ValueError(
                f"method={method!r}: pass one of {list(METHODS)} or a non-empty "
                "list of them."
            )
        unknown = [m for m in names if m not in METHODS]
        if unknown or len(set(names)) != len(names):
            raise ValueError(
                f"method={method!r}: "
                + (
                    f"unknown method(s) {unknown}"
                    if unknown
                    else "a method is listed twice"
                )
                + f"; use distinct methods among {list(METHODS)}."
            )
        single = [m for m in names if "groups" not in METHODS[m].parameters]
        if groups is not None and single:
            raise ValueError(
                f"groups={groups!r} cannot be used with method {single}, whose "
                "importance function measures single features; drop groups or "
                "use methods whose function takes groups: "
                + str([m for m in METHODS if "groups" in METHODS[m].parameters])
                + "."
            )
        warn_ignored_options(
            [METHODS[name] for name in names],
            {"scoring": scoring, "n_repeats": n_repeats},
            signature_defaults(cls.from_estimator, ("scoring", "n_repeats")),
            owner=f"{cls.__name__}.from_estimator",
        )
        results = {}
        for name in names:
            entry = METHODS[name]
            if entry.fits_model:
                check_is_fitted(estimator)
            results[entry.title] = entry.compute(
                estimator,
                X,
                y,
                scoring=scoring,
                n_repeats=n_repeats,
                groups=groups,
                sample_weight=sample_weight,
                n_jobs=n_jobs,
                random_state=random_state,
            )
        column_names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
        return cls.from_result(
            results, column_names=column_names, probes=probes, ax=ax, **kw
        )

    @classmethod
    def from_selector(cls, selector, *, ax=None, **kw):
        """Draw the features, probes and threshold of a fitted selector.

        The selector is a fitted :class:`~sklearn_fimp.ImportanceSelector`.
        Kept features are drawn in colour, rejected ones pale, probes grey
        and hatched; a numeric, "mean" or "median" threshold is a dashed
        vertical line (the probe test compares each feature with its own
        probes, which :class:`ProbeDisplay` draws).

        Parameters
        ----------
        selector : ImportanceSelector
            A fitted selector.
        ax : matplotlib Axes or None, default=None
            Passed to :meth:`plot`.
        **kw
            Other keyword arguments of :meth:`plot`.

        Returns
        -------
        display : ImportanceDisplay
        """
        from .._selection._selector import ImportanceSelector

        check_matplotlib(f"{cls.__name__}.from_selector")
        if not isinstance(selector, ImportanceSelector):
            raise TypeError(
                "selector must be a fitted sklearn_fimp.ImportanceSelector; got "
                f"{type(selector).__name__}. For other importances use "
                "ImportanceDisplay.from_result or from_estimator."
            )
        check_is_fitted(selector)
        result = selector.importances_
        n_groups = len(selector.groups_)
        n_rows = len(result["feature_names"])
        is_probe = np.asarray(
            result.get("is_probe", np.arange(n_rows) >= n_groups), dtype=bool
        )
        selected = np.zeros(n_rows, dtype=bool)
        for g, columns in enumerate(selector.groups_):
            selected[g] = bool(np.all(selector.support_[columns]))
        column_names = (
            selector.feature_names_in_
            if hasattr(selector, "feature_names_in_")
            else None
        )
        with_groups = Bunch(**result)
        with_groups.groups = list(selector.groups_) + [
            np.array([n_groups + k]) for k in range(n_rows - n_groups)
        ]
        shown, members = _labels_and_members(with_groups, column_names, n_real=n_groups)
        display = cls(
            np.asarray(result["importances_mean"], dtype=float)[np.newaxis],
            np.asarray(result["importances_std"], dtype=float)[np.newaxis],
            shown,
            method_names=[_method_title(result, selector.method_)],
            units=[_unit(result)],
            members=members,
            is_probe=is_probe,
            selected=selected,
            # with probes, the threshold is a score in units of each
            # feature's own probes, not one importance: ProbeDisplay draws it
            threshold=(
                None if selector.threshold == "probes" else float(selector.threshold_)
            ),
            on_unit_scale=np.array([_on_unit_scale(result)]),
        )
        return display.plot(ax=ax, **kw)

    # ------------------------------------------------------------------
    # drawing

    def _arrays(self):
        means = np.atleast_2d(np.asarray(self.importances_mean, dtype=float))
        n_methods, n_features = means.shape
        if self.importances_std is None:
            stds = np.zeros_like(means)
        else:
            stds = np.atleast_2d(np.asarray(self.importances_std, dtype=float))
            if stds.shape != means.shape:
                raise ValueError(
                    f"importances_std has shape {stds.shape} but importances_mean "
                    f"has {means.shape}; pass one spread per mean, or None."
                )
        names = np.asarray(self.feature_names, dtype=object)
        if names.shape != (n_features,):
            raise ValueError(
                f"feature_names has {names.size} entries but importances_mean "
                f"has {n_features} features; pass one name per feature."
            )
        return means, stds, names

    def _resolve_axes(self, ax, n_methods):
        caller = f"{type(self).__name__}.plot"
        if ax is None:
            import matplotlib.pyplot as plt

            n_rows = len(np.asarray(self.feature_names, dtype=object))
            height = min(max(2.5, 0.3 * n_rows + 1.2), 40)
            figure, axes = plt.subplots(
                1,
                n_methods,
                sharey=True,
                squeeze=False,
                figsize=(max(6.4, 4.2 * n_methods), height),
                layout="constrained",
            )
            return np.asarray(axes[0], dtype=object), figure
        if is_axes(ax):
            axes = np.array([ax], dtype=object)
        elif isinstance(ax, (list, tuple, np.ndarray)):
            axes = np.asarray(ax, dtype=object).ravel()
            if not all(is_axes(a) for a in axes):
                raise TypeError(
                    f"{caller}: every entry of ax must be a matplotlib Axes; got "
                    f"{sorted({type(a).__name__ for a in axes})}."
                )
        else:
            raise TypeError(
                f"{caller}: ax must be a matplotlib Axes, a sequence of Axes (one "
                f"per method) or None; got {type(ax).__name__}."
            )
        if len(axes) != n_methods:
            raise ValueError(
                f"{caller}: ax has {len(axes)} axes but there are {n_methods} "
                f"methods to draw; pass {n_methods} axes (one per method) or "
                "ax=None."
            )
        return axes, axes[0].figure

    def _upper_bounds(self, min_upper_bound, names):
        n_methods = len(names)
        if min_upper_bound is None:
            return [None] * n_methods
        if isinstance(min_upper_bound, str):
            if min_upper_bound != "auto":
                raise ValueError(
                    f"min_upper_bound={min_upper_bound!r} is not understood; pass "
                    "'auto', a positive number, a dict {method name: number} or "
                    "None."
                )
            unit = (
                np.zeros(n_methods, dtype=bool)
                if self.on_unit_scale is None
                else np.asarray(self.on_unit_scale, dtype=bool)
            )
            return [AUTO_MIN_UPPER_BOUND if u else None for u in unit]
        if isinstance(min_upper_bound, Mapping):
            unknown = sorted(set(map(str, min_upper_bound)) - set(names))
            if unknown:
                raise ValueError(
                    f"min_upper_bound names unknown method(s) {unknown}; the "
                    f"methods drawn are {names}."
                )
            bounds = [min_upper_bound.get(n) for n in names]
        else:
            bounds = [min_upper_bound] * n_methods
        for bound in bounds:
            if bound is not None and (
                not isinstance(bound, numbers.Real)
                or isinstance(bound, bool)
                or not bound > 0
            ):
                raise ValueError(
                    f"min_upper_bound must be positive; got {bound!r}. Pass a "
                    "positive number, 'auto' or None."
                )
        return [None if b is None else float(b) for b in bounds]

    def plot(
        self,
        *,
        ax=None,
        sort_by=None,
        max_features=None,
        min_upper_bound="auto",
        show_probes=True,
        errorbars=True,
        bar_kw=None,
    ):
        """Draw the bars.

        Parameters
        ----------
        ax : matplotlib Axes, array-like of Axes or None, default=None
            One axes per method. None: a new figure with one axes per
            method, side by side, sharing the feature axis. The axes in the
            first column of a grid name the rows (a 2 x 2 grid of four
            methods reads at a narrower width than four side by side).
        sort_by : str or None, default=None
            The method whose mean importances order the rows (largest on
            top); None: the first.
        max_features : int or None, default=None
            Draw only this many rows, the largest under ``sort_by`` (probes
            count as rows).
        min_upper_bound : "auto", float, dict or None, default="auto"
            The x axis extends to the right at least to this value, so that
            importances that are all tiny (a model that barely uses any
            feature) are drawn as the small bars they are instead of filling
            the plot. Scaling every plot to its largest bar makes a drop in
            accuracy of 0.005 look as large as one of 0.5; the authors of
            rfpimp (Parr, Turgutlu, Csiszar and Howard, "Beware Default
            Random Forest Importances", 2018) plot importances on a fixed
            range for this reason. "auto": 0.1 for methods on a unit scale
            (normalised MDI, drops in accuracy, R², ROC AUC ...), no bound
            for the others (MDI-oob, custom scorers), whose units depend on
            the data. A float applies to every method; a dict
            ``{method name: float}`` to the named ones; None never bounds.
        show_probes : bool, default=True
            Draw the probes' bars; False leaves them out (the threshold
            stays).
        errorbars : bool, default=True
            Draw the standard deviations as error bars. They show how much
            the importance varies between repeats (permutations, trees or
            splits), which for MDI and MDI-oob is much more than the
            uncertainty of the mean.
        bar_kw : dict or None, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.barh`.

        Returns
        -------
        display : ImportanceDisplay
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        means, stds, names = self._arrays()
        n_methods = means.shape[0]
        method_names = self._method_names(n_methods)
        sort_row = self._sort_row(sort_by, method_names)
        if max_features is not None and (
            not isinstance(max_features, numbers.Integral) or max_features < 1
        ):
            raise ValueError(
                f"max_features={max_features!r}: pass a positive integer or None."
            )
        bounds = self._upper_bounds(min_upper_bound, method_names)
        axes, figure = self._resolve_axes(ax, n_methods)
        rows = self._rows(names, means[sort_row], show_probes, max_features)
        order = rows.order

        self.bars_, self.errorbars_ = [], []
        labelled = []  # the axes that name the rows: the first of each row
        bar_kw = {} if bar_kw is None else dict(bar_kw)
        for m, axis in enumerate(axes):
            values = means[m, order]
            spread = stds[m, order] if errorbars else np.zeros(len(order))
            bars, errorbar = _draw_bars(axis, rows, values, spread, errorbars, bar_kw)
            self.bars_.append(bars)
            self.errorbars_.append(errorbar)
            axis.axvline(0, color="0.3", linewidth=0.8)
            axis.set_title(plain_text(method_names[m]))
            if self.units is not None:
                axis.set_xlabel(plain_text(self.units[m]))
            if _tick_rows(axis, rows, m == 0 or _first_in_row(axis), axes[0]):
                labelled.append(axis)
            axis.set_ylim(len(order) - 0.5, -0.5)  # largest on top
            self._set_xlim(axis, values, spread, bounds[m], m == 0)

        _grey_probe_labels(labelled, rows.is_probe)
        self.threshold_line_ = self._draw_threshold(axes[0])
        self._legend(axes[0], self.selected is not None, rows.is_probe.any())

        self.feature_order_ = order
        self.axes_ = axes
        self.ax_ = axes[0]
        self.figure_ = figure
        return self

    def _rows(self, names, sort_means, show_probes, max_features):
        """The rows to draw, largest first under ``sort_means``, and how each
        looks (height, colour, opacity, probe or not, label)."""
        n_features = len(names)
        is_probe = (
            np.zeros(n_features, dtype=bool)
            if self.is_probe is None
            else np.asarray(self.is_probe, dtype=bool)
        )
        rows = np.arange(n_features)
        if not show_probes:
            rows = rows[~is_probe]
        key = np.nan_to_num(sort_means[rows], nan=-np.inf)
        order = rows[np.argsort(-key, kind="stable")]
        if max_features is not None:
            order = order[:max_features]
        members = [None] * n_features if self.members is None else list(self.members)
        grouped = np.array(
            [members[i] is not None and len(members[i]) > 1 for i in order]
        )
        selected = None if self.selected is None else np.asarray(self.selected, bool)
        probe_rows = is_probe[order]
        colors = np.array([KEPT_COLOR] * len(order), dtype=object)
        alphas = np.ones(len(order))
        if selected is not None:
            alphas[~selected[order]] = 0.35
        colors[probe_rows] = PROBE_COLOR
        alphas[probe_rows] = 1.0
        return _Rows(
            order=order,
            positions=np.arange(len(order)),
            heights=np.where(grouped, GROUP_HEIGHT, SINGLE_HEIGHT),
            colors=colors,
            alphas=alphas,
            is_probe=probe_rows,
            labels=[plain_text(member_label(names[i], members[i])) for i in order],
        )

    def _draw_threshold(self, axis):
        """The threshold's dashed line on ``axis``, or None without one."""
        if self.threshold is None:
            return None
        return axis.axvline(
            self.threshold,
            color=THRESHOLD_COLOR,
            linestyle="--",
            linewidth=1.5,
            label=f"threshold ({self.threshold:.3g})",
        )

    def _method_names(self, n_methods):
        names = (
            [f"method {i}" for i in range(n_methods)]
            if self.method_names is None
            else [str(m) for m in self.method_names]
        )
        if len(names) != n_methods:
            raise ValueError(
                f"method_names has {len(names)} entries for {n_methods} "
                "methods; pass one name per row of importances_mean."
            )
        return names

    @staticmethod
    def _sort_row(sort_by, method_names):
        if sort_by is None:
            return 0
        if sort_by in method_names:
            return method_names.index(sort_by)
        raise ValueError(
            f"sort_by={sort_by!r} is not one of the methods drawn, {method_names}."
        )

    def _legend(self, axis, with_selection, with_probes):
        from matplotlib.patches import Patch

        handles = []
        if with_selection:
            handles.append(Patch(color=KEPT_COLOR, label="kept"))
            handles.append(Patch(color=KEPT_COLOR, alpha=0.35, label="not kept"))
        if with_probes:
            handles.append(
                Patch(facecolor=PROBE_COLOR, edgecolor="0.3", hatch="//", label="probe")
            )
        if self.threshold_line_ is not None:
            handles.append(self.threshold_line_)
        if handles:
            axis.legend(handles=handles, loc="best", fontsize="small")

    def _set_xlim(self, axis, values, spread, bound, with_threshold):
        finite = np.isfinite(values)
        low = np.min((values - spread)[finite], initial=0.0)
        high = np.max((values + spread)[finite], initial=0.0)
        if with_threshold and self.threshold is not None:
            low, high = min(low, self.threshold), max(high, self.threshold)
        if bound is not None:
            high = max(high, bound)
        span = high - low
        if span <= 0:
            span = 1.0
        axis.set_xlim(low - 0.03 * span if low < 0 else 0.0, high + 0.05 * span)
