"""RecursiveSelectionDisplay: cross-validated score against the number of
features, with the chosen size marked."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._common import check_matplotlib, single_axes


class RecursiveSelectionDisplay:
    """Cross-validated score of each subset size of a recursive elimination.

    Draws the mean score over the splits against the number of features,
    a band of one standard deviation around it, each split's scores as thin
    lines, and a vertical line at the number of features selected. Build it
    with :meth:`from_estimator` (fits a
    :class:`~sklearn_fimp.RecursiveImportanceSelector`) or
    :meth:`from_selector` (reads a fitted one).

    Parameters
    ----------
    n_features : array-like of shape (n_sizes,)
        The subset sizes.
    mean_test_score, std_test_score : array-like of shape (n_sizes,)
        Mean and standard deviation of the scores over the splits.
    split_scores : array-like of shape (n_sizes, n_splits) or None, \
            default=None
        Each split's scores.
    n_features_selected : int or None, default=None
        The chosen size, marked with a vertical line.
    score_name : str or None, default=None
        Label of the score axis. None: "cross-validated score".

    Attributes
    ----------
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    line_ : matplotlib Line2D
        The mean score.

    See Also
    --------
    RecursiveImportanceSelector : The selector whose ``cv_results_`` this
        draws.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import make_friedman1
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn_fimp import RecursiveSelectionDisplay
    >>> X, y = make_friedman1(n_samples=200, n_features=6, random_state=0)
    >>> display = RecursiveSelectionDisplay.from_estimator(
    ...     RandomForestRegressor(n_estimators=20), X, y, cv=3, random_state=0
    ... )
    >>> display.n_features_selected
    5
    """

    def __init__(
        self,
        n_features,
        mean_test_score,
        std_test_score,
        *,
        split_scores=None,
        n_features_selected=None,
        score_name=None,
    ):
        self.n_features = np.asarray(n_features)
        self.mean_test_score = np.asarray(mean_test_score, dtype=float)
        self.std_test_score = np.asarray(std_test_score, dtype=float)
        self.split_scores = None if split_scores is None else np.asarray(split_scores)
        self.n_features_selected = n_features_selected
        self.score_name = score_name

    @classmethod
    def from_estimator(cls, estimator, X, y, *, ax=None, **selector_params):
        """Fit a :class:`~sklearn_fimp.RecursiveImportanceSelector` and draw
        its curve.

        Parameters
        ----------
        estimator : estimator
            The model to select features for (see the selector).
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        ax : matplotlib Axes or None, default=None
            Where to draw; None: a new figure.
        **selector_params : dict
            Parameters of the selector (``method``, ``step``, ``cv``,
            ``scoring``, ``selection_rule``, ``random_state`` ...).

        Returns
        -------
        display : RecursiveSelectionDisplay
            With the fitted selector as ``selector_``.
        """
        check_matplotlib(f"{cls.__name__}.from_estimator")
        from .._selection._recursive import RecursiveImportanceSelector

        selector = RecursiveImportanceSelector(estimator, **selector_params)
        return cls.from_selector(selector.fit(X, y), ax=ax)

    @classmethod
    def from_selector(cls, selector, *, ax=None):
        """Draw the curve of a fitted
        :class:`~sklearn_fimp.RecursiveImportanceSelector`.

        Parameters
        ----------
        selector : RecursiveImportanceSelector
            Fitted.
        ax : matplotlib Axes or None, default=None
            Where to draw; None: a new figure.

        Returns
        -------
        display : RecursiveSelectionDisplay
            With the selector as ``selector_``.
        """
        check_matplotlib(f"{cls.__name__}.from_selector")
        if not hasattr(selector, "cv_results_") or not hasattr(selector, "estimator"):
            raise TypeError(
                f"selector must be a fitted RecursiveImportanceSelector; got "
                f"{type(selector).__name__}. Fit it first, or use "
                f"{cls.__name__}.from_estimator."
            )
        check_is_fitted(selector)
        results = selector.cv_results_
        n_splits = sum(key.startswith("split") for key in results)
        splits = np.column_stack(
            [results[f"split{k}_test_score"] for k in range(n_splits)]
        )
        scoring = selector.scoring
        display = cls(
            results["n_features"],
            results["mean_test_score"],
            results["std_test_score"],
            split_scores=splits,
            n_features_selected=selector.n_features_,
            score_name=(
                f"cross-validated {scoring}" if isinstance(scoring, str) else None
            ),
        )
        display.selector_ = selector
        return display.plot(ax=ax)

    def plot(self, ax=None, *, show_splits=True):
        """Draw the curve.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Where to draw; None: a new figure.
        show_splits : bool, default=True
            Draw each split's scores as thin lines.

        Returns
        -------
        display : RecursiveSelectionDisplay
            ``self``, with ``ax_``, ``figure_`` and ``line_`` set.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        ax, figure = single_axes(ax, f"{type(self).__name__}.plot")
        order = np.argsort(self.n_features)
        sizes = self.n_features[order]
        mean = self.mean_test_score[order]
        std = self.std_test_score[order]
        if show_splits and self.split_scores is not None:
            ax.plot(
                sizes, self.split_scores[order], color="0.7", linewidth=0.8, zorder=1
            )
        ax.fill_between(sizes, mean - std, mean + std, alpha=0.2, zorder=2)
        (self.line_,) = ax.plot(
            sizes, mean, marker="o", markersize=3, label="mean over splits", zorder=3
        )
        if self.n_features_selected is not None:
            ax.axvline(
                self.n_features_selected,
                color="black",
                linestyle="--",
                linewidth=1,
                label=f"selected: {self.n_features_selected} features",
            )
        ax.set_xlabel("number of features")
        ax.set_ylabel(self.score_name or "cross-validated score")
        ax.legend(loc="lower right")
        self.ax_ = ax
        self.figure_ = figure
        return self
