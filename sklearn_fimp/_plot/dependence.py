"""DependenceDisplay: heatmap of feature dependence and what explains it."""

import numbers
from collections.abc import Mapping

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._common import (
    check_matplotlib,
    check_square_labels,
    heatmap_size,
    plain_text,
    single_axes,
    write_cell_values,
)

DEPENDENCE_KEYS = ("dependence", "matrix", "feature_names")


class DependenceDisplay:
    """Heatmap of the dependence of each feature on the others.

    Row ``i`` is a feature. Its first cell is the feature's dependence (how
    well all the other features predict it: out-of-bag R², or
    chance-corrected accuracy for categorical features); cell ``k`` of the
    following columns is how much that dependence drops when feature ``k``
    is permuted, i.e. how much feature ``k`` explains it (see
    :func:`~sklearn_fimp.feature_dependence`). Rows and the input columns
    are sorted by dependence, most dependent first, so the redundant
    features and the ones that explain them come first.

    Use :meth:`from_data`, :meth:`from_result` or :meth:`from_analyzer` to
    create one. All parameters are stored as attributes.

    Parameters
    ----------
    dependence : ndarray of shape (n_features,)
        Dependence of each feature.
    matrix : ndarray of shape (n_features, n_features)
        ``matrix[i, k]``: drop of the dependence of ``i`` when ``k`` is
        permuted (NaN on the diagonal and where not measured).
    feature_names : array-like of shape (n_features,)
        Feature names, in the order of ``dependence``.
    dropped : array-like of bool of shape (n_features,) or None, \
            default=None
        Features a :class:`~sklearn_fimp.DependenceAnalyzer` eliminated;
        their labels are marked "(dropped)".

    Attributes
    ----------
    im_ : matplotlib AxesImage
        The heatmap; its columns are the dependence followed by the
        features in ``feature_order_``.
    text_ : ndarray of shape (n_features, n_features + 1) of object
        The matplotlib Text written in each cell, None where the value is
        not above ``value_threshold``, and everywhere when the cells are too
        small for a legible value (the values shrink to fit their cells
        unless ``text_kw`` sets a font size); rows and columns as drawn.
    colorbar_ : matplotlib Colorbar or None
    feature_order_ : ndarray of int
        Rows drawn, top to bottom, as positions in ``feature_names``.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    sklearn_fimp.feature_dependence : The numbers drawn.
    sklearn_fimp.DependenceAnalyzer : Sequential elimination of redundant
        features.
    CorrelationDisplay : Spearman rank correlations.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_fimp import DependenceDisplay
    >>> rng = np.random.RandomState(0)
    >>> a, b = rng.normal(size=(2, 200))
    >>> X = np.column_stack([a, b, a + 0.05 * rng.normal(size=200)])
    >>> display = DependenceDisplay.from_data(X, random_state=0)
    >>> display.feature_names[display.feature_order_].tolist()[-1]
    'x1'
    """

    def __init__(self, dependence, matrix, feature_names, *, dropped=None):
        self.dependence = dependence
        self.matrix = matrix
        self.feature_names = feature_names
        self.dropped = dropped

    @classmethod
    def from_data(
        cls,
        X,
        *,
        estimator=None,
        max_samples=5000,
        categorical_threshold=10,
        n_repeats=1,
        n_jobs=None,
        random_state=None,
        ax=None,
        **kw,
    ):
        """Measure the dependences of the columns of X and draw them.

        The numbers come from :func:`~sklearn_fimp.feature_dependence`,
        which receives every parameter but ``ax`` and ``**kw``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The features (strings and categorical columns are encoded
            internally).
        estimator : estimator, dict or None, default=None
            The models that predict each feature.
        max_samples : int, float or None, default=5000
            Rows the models are trained and scored on.
        categorical_threshold : int, default=10
            Numeric features with at most this many distinct values are
            predicted by a classifier.
        n_repeats : int, default=1
            Permutations per input feature in the dependence matrix.
        n_jobs : int or None, default=None
            Features measured in parallel (joblib semantics).
        random_state : int, RandomState instance or None, default=None
            Seeds the row sample, the forests and the permutations.
        ax : matplotlib Axes or None, default=None
            Passed to :meth:`plot`.
        **kw
            Other keyword arguments of :meth:`plot`.

        Returns
        -------
        display : DependenceDisplay
        """
        from .. import feature_dependence

        check_matplotlib(f"{cls.__name__}.from_data")
        result = feature_dependence(
            X,
            estimator=estimator,
            max_samples=max_samples,
            categorical_threshold=categorical_threshold,
            n_repeats=n_repeats,
            n_jobs=n_jobs,
            random_state=random_state,
        )
        return cls.from_result(result, ax=ax, **kw)

    @classmethod
    def from_result(cls, result, *, ax=None, **kw):
        """Draw what :func:`~sklearn_fimp.feature_dependence` returned.

        Parameters
        ----------
        result : Bunch
            The result of :func:`~sklearn_fimp.feature_dependence`.
        ax : matplotlib Axes or None, default=None
            Passed to :meth:`plot`.
        **kw
            Other keyword arguments of :meth:`plot`.

        Returns
        -------
        display : DependenceDisplay
        """
        check_matplotlib(f"{cls.__name__}.from_result")
        if not isinstance(result, Mapping) or not all(
            k in result for k in DEPENDENCE_KEYS
        ):
            hint = ""
            if isinstance(result, Mapping) and "importances_mean" in result:
                hint = (
                    " It looks like an importance result: draw it with "
                    "ImportanceDisplay.from_result."
                )
            raise TypeError(
                "result must be the Bunch sklearn_fimp.feature_dependence "
                "returns (with dependence, matrix and feature_names); got "
                f"{type(result).__name__}.{hint} For a fitted DependenceAnalyzer "
                "use DependenceDisplay.from_analyzer."
            )
        display = cls(
            np.asarray(result["dependence"], dtype=float),
            np.asarray(result["matrix"], dtype=float),
            np.asarray(result["feature_names"], dtype=object),
        )
        return display.plot(ax=ax, **kw)

    @classmethod
    def from_analyzer(cls, analyzer, *, ax=None, **kw):
        """Draw a fitted analyzer's dependences, marking what it dropped.

        The analyzer is a fitted :class:`~sklearn_fimp.DependenceAnalyzer`;
        the heatmap shows its first pass (``dependence_`` and
        ``dependence_matrix_``, before any feature was dropped).

        Parameters
        ----------
        analyzer : DependenceAnalyzer
            A fitted analyzer.
        ax : matplotlib Axes or None, default=None
            Passed to :meth:`plot`.
        **kw
            Other keyword arguments of :meth:`plot`.

        Returns
        -------
        display : DependenceDisplay
        """
        from .._selection._dependence_analyzer import DependenceAnalyzer

        check_matplotlib(f"{cls.__name__}.from_analyzer")
        if not isinstance(analyzer, DependenceAnalyzer):
            raise TypeError(
                "analyzer must be a fitted sklearn_fimp.DependenceAnalyzer; got "
                f"{type(analyzer).__name__}. For feature_dependence results use "
                "DependenceDisplay.from_result."
            )
        check_is_fitted(analyzer)
        n_features = analyzer.n_features_in_
        names = getattr(
            analyzer,
            "feature_names_in_",
            np.asarray([f"x{j}" for j in range(n_features)], dtype=object),
        )
        display = cls(
            analyzer.dependence_,
            analyzer.dependence_matrix_,
            np.asarray(names, dtype=object),
            dropped=~np.asarray(analyzer.support_, dtype=bool),
        )
        return display.plot(ax=ax, **kw)

    def plot(
        self,
        *,
        ax=None,
        sort=True,
        value_threshold=0.05,
        values_format=".2f",
        cmap="Blues",
        colorbar=True,
        max_features=None,
        im_kw=None,
        text_kw=None,
    ):
        """Draw the heatmap.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None: a new figure.
        sort : bool, default=True
            Order features by dependence, largest first; False keeps the
            order of ``feature_names``.
        value_threshold : float or None, default=0.05
            Write a cell's value only when it is above this (NaN cells are
            never written); None writes every value.
        values_format : str, default=".2f"
            Format of the written values.
        cmap : str or matplotlib Colormap, default="Blues"
            Colours of the values from 0 to 1, or to the largest value when
            one is above 1 (a drop in R² can exceed 1 when shuffling a
            feature makes the prediction worse than the mean); negative
            values are drawn in the end colour. ``im_kw={"vmax": ...}``
            sets another range.
        colorbar : bool, default=True
            Add a colour bar.
        max_features : int or None, default=None
            Draw only this many features, rows and columns: the most
            dependent ones with ``sort=True``, the first ones of
            ``feature_names`` otherwise (a 30 x 30 matrix is hard to read
            at a page's width). None draws every feature.
        im_kw, text_kw : dict or None, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.imshow` and
            :meth:`matplotlib.axes.Axes.text`.

        Returns
        -------
        display : DependenceDisplay
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        dependence = np.asarray(self.dependence, dtype=float).ravel()
        matrix = np.asarray(self.matrix, dtype=float)
        n = len(dependence)
        if matrix.shape != (n, n):
            raise ValueError(
                f"matrix has shape {matrix.shape} but dependence has {n} "
                f"features; pass a ({n}, {n}) matrix."
            )
        names = check_square_labels(dependence, self.feature_names, "dependence")
        if value_threshold is not None and not isinstance(
            value_threshold, numbers.Real
        ):
            raise TypeError(
                f"value_threshold must be a number or None; got {value_threshold!r}."
            )
        if max_features is not None and not (
            isinstance(max_features, numbers.Integral) and max_features >= 1
        ):
            raise ValueError(
                f"max_features must be a positive integer or None; got "
                f"{max_features!r}."
            )
        order = (
            np.argsort(-np.nan_to_num(dependence, nan=-np.inf), kind="stable")
            if sort
            else np.arange(n)
        )[:max_features]
        ax, figure = single_axes(
            ax,
            f"{type(self).__name__}.plot",
            heatmap_size(len(order) + 1, len(order)),
        )
        cells = np.column_stack([dependence[order], matrix[np.ix_(order, order)]])
        im_kw = {} if im_kw is None else dict(im_kw)
        largest = np.nanmax(cells, initial=1.0, where=np.isfinite(cells))
        defaults = {"cmap": cmap, "vmin": 0.0, "vmax": largest, "aspect": "auto"}
        self.im_ = ax.imshow(
            np.ma.masked_invalid(cells),
            interpolation="nearest",
            **{**defaults, **im_kw},
        )
        dropped = (
            np.zeros(n, dtype=bool)
            if self.dropped is None
            else np.asarray(self.dropped, dtype=bool)
        )
        row_labels = [
            plain_text(names[i]) + (" (dropped)" if dropped[i] else "") for i in order
        ]
        ax.set_xticks(np.arange(len(order) + 1))
        ax.set_xticklabels(
            ["dependence"] + [plain_text(names[i]) for i in order],
            rotation=45,
            ha="right",
            rotation_mode="anchor",
        )
        ax.set_yticks(np.arange(len(order)))
        ax.set_yticklabels(row_labels)
        ax.get_xticklabels()[0].set_fontweight("bold")
        ax.axvline(0.5, color="black", linewidth=1.5)
        ax.set_xlabel("dependence, then the drop in it when a feature is permuted")
        ax.set_ylabel("feature predicted")
        self.colorbar_ = (
            figure.colorbar(self.im_, ax=ax, extend="both") if colorbar else None
        )
        # last: the values shrink to the cells as finally laid out
        written = np.isfinite(cells)
        if value_threshold is not None:
            written &= np.nan_to_num(cells, nan=-np.inf) > value_threshold
        self.text_ = write_cell_values(
            ax, self.im_, cells, written, values_format, text_kw
        )
        self.feature_order_ = order
        self.ax_ = ax
        self.figure_ = figure
        return self
