"""CorrelationDisplay: Spearman rank correlations as an upper triangle."""

import numbers

import numpy as np
from scipy.cluster import hierarchy
from scipy.spatial.distance import squareform

from .._importance._groups import _rank_columns
from .._utils._frames import check_table, is_pandas, is_polars
from ._common import (
    check_matplotlib,
    check_square_labels,
    heatmap_size,
    plain_text,
    single_axes,
    write_cell_values,
)

ORDERS = ("data", "cluster")


def spearman_matrix(X):
    """Spearman rank correlations of the columns of a numeric table.

    A missing value takes its column's mean rank, as in
    :func:`~sklearn_fimp.feature_groups`. A constant column correlates with
    nothing (NaN).
    """
    ranks = _rank_columns(X)
    centered = ranks - np.nanmean(ranks, axis=0)
    centered = np.where(np.isnan(centered), 0.0, centered)
    scale = np.sqrt(np.sum(centered**2, axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (centered.T @ centered) / np.outer(scale, scale)
    rho[~np.isfinite(rho)] = np.nan
    np.fill_diagonal(rho, 1.0)
    return np.clip(rho, -1.0, 1.0)


def cluster_order(correlation):
    """Feature order that puts strongly correlated features next to each
    other: the leaves of an average-linkage tree on ``1 - |rho|``."""
    n = correlation.shape[0]
    if n < 3:
        return np.arange(n)
    distance = 1.0 - np.abs(np.nan_to_num(correlation, nan=0.0))
    np.fill_diagonal(distance, 0.0)
    distance = np.clip((distance + distance.T) / 2, 0.0, 1.0)
    tree = hierarchy.linkage(squareform(distance, checks=False), method="average")
    return hierarchy.leaves_list(tree)


class CorrelationDisplay:
    """Spearman rank correlations of the features, upper triangle.

    Each pair of features is drawn once: row ``i`` and column ``k`` of the
    triangle hold the correlation of the ``i``-th and ``k``-th features for
    ``k > i`` (the diagonal, always 1, is left out, so the rows are the
    first ``n - 1`` features and the columns the last ``n - 1``). Rank
    correlation measures monotone association; strongly correlated
    features share their importance (see
    :func:`~sklearn_fimp.feature_groups` to permute them together).

    Use :meth:`from_data` to create one. All parameters are stored as
    attributes.

    Parameters
    ----------
    correlation : ndarray of shape (n_features, n_features)
        Symmetric correlation matrix.
    feature_names : array-like of shape (n_features,)
        Feature names, in the order of ``correlation``.

    Attributes
    ----------
    im_ : matplotlib AxesImage
        The triangle, of shape (n_features - 1, n_features - 1).
    text_ : ndarray of shape (n_features - 1, n_features - 1) of object
        The matplotlib Text written in each cell; None below the diagonal,
        where ``|rho|`` is below ``value_threshold``, and everywhere when
        the cells are too small for a legible value (the values shrink to
        fit their cells unless ``text_kw`` sets a font size).
    colorbar_ : matplotlib Colorbar or None
    feature_order_ : ndarray of int
        The features in the order drawn, as positions in ``feature_names``.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    sklearn_fimp.feature_groups : Groups of correlated features.
    DependenceDisplay : How well each feature is predicted by all the others.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_fimp import CorrelationDisplay
    >>> rng = np.random.RandomState(0)
    >>> a, b = rng.normal(size=(2, 100))
    >>> display = CorrelationDisplay.from_data(np.column_stack([a, b, -a]))
    >>> float(display.correlation[0, 2])
    -1.0
    """

    def __init__(self, correlation, feature_names):
        self.correlation = correlation
        self.feature_names = feature_names

    @classmethod
    def from_data(cls, X, *, ax=None, **kw):
        """Compute the Spearman correlations of the columns of X and draw them.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric features (at least two). Missing values take their
            column's mean rank.
        ax : matplotlib Axes or None, default=None
            Passed to :meth:`plot`.
        **kw
            Other keyword arguments of :meth:`plot`.

        Returns
        -------
        display : CorrelationDisplay
        """
        check_matplotlib(f"{cls.__name__}.from_data")
        if is_pandas(X) or is_polars(X):
            names = np.asarray([str(c) for c in X.columns], dtype=object)
            check_table(X)
        else:
            X, names = check_table(X)
        if len(names) < 2:
            raise ValueError(
                f"X has {len(names)} column; a correlation needs at least 2 features."
            )
        display = cls(spearman_matrix(X), names)
        return display.plot(ax=ax, **kw)

    def plot(
        self,
        *,
        ax=None,
        order="data",
        value_threshold=0.5,
        values_format=".2f",
        cmap="RdBu_r",
        colorbar=True,
        im_kw=None,
        text_kw=None,
    ):
        """Draw the upper triangle.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None: a new figure.
        order : {"data", "cluster"}, default="data"
            "data" keeps the order of the columns; "cluster" puts strongly
            correlated features next to each other (hierarchical clustering
            of ``1 - |rho|``).
        value_threshold : float or None, default=0.5
            Write a cell's value only when ``|rho|`` is at least this; None
            writes every value.
        values_format : str, default=".2f"
            Format of the written values.
        cmap : str or matplotlib Colormap, default="RdBu_r"
            Colours from -1 to 1.
        colorbar : bool, default=True
            Add a colour bar.
        im_kw, text_kw : dict or None, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.imshow` and
            :meth:`matplotlib.axes.Axes.text`.

        Returns
        -------
        display : CorrelationDisplay
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        correlation = np.asarray(self.correlation, dtype=float)
        n = correlation.shape[0]
        if correlation.ndim != 2 or correlation.shape != (n, n) or n < 2:
            raise ValueError(
                "correlation must be a square matrix of at least 2 features; got "
                f"shape {correlation.shape}."
            )
        names = check_square_labels(correlation, self.feature_names, "correlation")
        if order not in ORDERS:
            raise ValueError(f"order={order!r} is not one of {list(ORDERS)}.")
        if value_threshold is not None and not isinstance(
            value_threshold, numbers.Real
        ):
            raise TypeError(
                f"value_threshold must be a number or None; got {value_threshold!r}."
            )
        ax, figure = single_axes(
            ax, f"{type(self).__name__}.plot", heatmap_size(n - 1, n - 1)
        )
        positions = np.arange(n) if order == "data" else cluster_order(correlation)
        shown = correlation[np.ix_(positions, positions)][:-1, 1:]
        upper = np.triu(np.ones_like(shown, dtype=bool))
        cells = np.where(upper, shown, np.nan)
        im_kw = {} if im_kw is None else dict(im_kw)
        defaults = {"cmap": cmap, "vmin": -1.0, "vmax": 1.0}
        self.im_ = ax.imshow(
            np.ma.masked_invalid(cells),
            interpolation="nearest",
            **{**defaults, **im_kw},
        )
        labels = [plain_text(names[p]) for p in positions]
        ax.set_xticks(np.arange(n - 1))
        ax.set_xticklabels(labels[1:], rotation=45, ha="left", rotation_mode="anchor")
        ax.xaxis.tick_top()
        ax.set_yticks(np.arange(n - 1))
        ax.set_yticklabels(labels[:-1])
        ax.spines[:].set_visible(False)
        self.colorbar_ = None
        if colorbar:
            self.colorbar_ = figure.colorbar(self.im_, ax=ax, shrink=0.8)
            self.colorbar_.set_label("Spearman rank correlation")
        # last: the values shrink to the cells as finally laid out
        written = np.isfinite(cells)
        if value_threshold is not None:
            written &= np.abs(np.nan_to_num(cells)) >= value_threshold
        self.text_ = write_cell_values(
            ax, self.im_, cells, written, values_format, text_kw
        )
        self.feature_order_ = positions
        self.ax_ = ax
        self.figure_ = figure
        return self
