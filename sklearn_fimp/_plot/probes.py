"""ProbeDisplay: each feature's importance over rounds against the probes'."""

import numpy as np
from sklearn.utils.fixes import parse_version
from sklearn.utils.validation import check_is_fitted

from ._common import check_matplotlib, plain_text, single_axes

#: Box colours per decision, as R's Boruta draws them.
DECISION_COLORS = {
    "confirmed": "tab:green",
    "tentative": "gold",
    "rejected": "tab:red",
    "probes": "tab:blue",
}


class ProbeDisplay:
    """Box plots of each feature's importance over rounds, against the probes.

    Each box is one feature's importance in each round of probes of a
    fitted :class:`~sklearn_fimp.ImportanceSelector` (its
    ``importance_history_``), coloured by the selector's decision: green
    confirmed, yellow tentative, red rejected. Three blue boxes summarise
    the probes in each round: their smallest, mean and largest importance
    (R's Boruta draws the same three). Boxes are sorted by median
    importance, smallest at the bottom.

    Use :meth:`from_estimator` to create one; :meth:`plot` draws it. All
    parameters are stored as attributes.

    Parameters
    ----------
    history : ndarray of shape (n_rounds, n_features)
        Importance of each feature (or group) in each round.
    probe_history : ndarray of shape (n_rounds, n_probes)
        Importance of each probe in each round.
    feature_names : array-like of shape (n_features,)
        Feature or group labels.
    decisions : array-like of str of shape (n_features,)
        "confirmed", "tentative" or "rejected" for each feature.
    unit : str or None, default=None
        Label of the importance axis.

    Attributes
    ----------
    boxes_ : dict
        The matplotlib ``boxplot`` result (boxes, whiskers, medians, ...).
    order_ : ndarray of int
        The features drawn, bottom to top, as positions in
        ``feature_names``.
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure

    See Also
    --------
    ImportanceDisplay : Mean importances as bars, with the selection
        threshold.

    Examples
    --------
    >>> from sklearn.datasets import make_friedman1
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn_fimp import ImportanceSelector, ProbeDisplay
    >>> X, y = make_friedman1(n_samples=300, n_features=8, random_state=0)
    >>> selector = ImportanceSelector(
    ...     RandomForestRegressor(n_estimators=20), n_rounds=5, random_state=0
    ... ).fit(X, y)
    >>> display = ProbeDisplay.from_estimator(selector)
    >>> len(display.order_)
    8
    """

    def __init__(self, history, probe_history, feature_names, decisions, *, unit=None):
        self.history = history
        self.probe_history = probe_history
        self.feature_names = feature_names
        self.decisions = decisions
        self.unit = unit

    @classmethod
    def from_estimator(cls, selector, *, ax=None, **kw):
        """Draw the importance history of a fitted ImportanceSelector.

        Parameters
        ----------
        selector : ImportanceSelector
            A selector fitted with ``threshold="probes"``.
        ax : matplotlib Axes or None, default=None
            Passed to :meth:`plot`.
        **kw
            Other keyword arguments of :meth:`plot`.

        Returns
        -------
        display : ProbeDisplay
        """
        from .._selection._selector import ImportanceSelector

        check_matplotlib(f"{cls.__name__}.from_estimator")
        if not isinstance(selector, ImportanceSelector):
            raise TypeError(
                "selector must be a fitted sklearn_fimp.ImportanceSelector; got "
                f"{type(selector).__name__}. For an importance result use "
                "ImportanceDisplay.from_result."
            )
        check_is_fitted(selector)
        if getattr(selector, "probe_history_", None) is None:
            stability = selector.selection_frequency_ is not None
            raise ValueError(
                f"{cls.__name__} draws the rounds of probes, and this selector "
                f"was fitted with threshold={selector.threshold!r}, which adds "
                "none. Fit it with threshold='probes'"
                + (
                    "; its selection_frequency_ says how often each feature "
                    "was selected."
                    if stability
                    else "."
                )
            )
        labels = np.asarray(selector.importances_.feature_names, dtype=object)
        display = cls(
            selector.importance_history_,
            selector.probe_history_,
            labels[: len(selector.groups_)],
            [selector.decisions_[columns[0]] for columns in selector.groups_],
            unit=f"{selector.method_} importance",
        )
        return display.plot(ax=ax, **kw)

    def plot(self, ax=None, *, max_features=None):
        """Draw the box plots.

        Parameters
        ----------
        ax : matplotlib Axes or None, default=None
            Axes to draw on; None makes a new figure.
        max_features : int or None, default=None
            Draw only this many features, those with the largest median
            importance. None: all of them.

        Returns
        -------
        display : ProbeDisplay
            ``self``, with the drawn artists as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        history = np.atleast_2d(np.asarray(self.history, dtype=float))
        probes = np.atleast_2d(np.asarray(self.probe_history, dtype=float))
        names = np.asarray(self.feature_names, dtype=object)
        decisions = np.asarray(self.decisions, dtype=object)
        n_features = history.shape[1]
        if names.shape != (n_features,) or decisions.shape != (n_features,):
            raise ValueError(
                f"history has {n_features} features, feature_names "
                f"{names.size} and decisions {decisions.size}; pass one name "
                "and one decision per column of history."
            )
        if probes.shape[0] != history.shape[0]:
            raise ValueError(
                f"probe_history has {probes.shape[0]} rounds and history "
                f"{history.shape[0]}; pass both from the same selector."
            )
        unknown = set(decisions) - {"confirmed", "tentative", "rejected"}
        if unknown:
            raise ValueError(
                f"decisions holds {sorted(map(str, unknown))}; each must be "
                "'confirmed', 'tentative' or 'rejected'."
            )
        if max_features is not None and not (
            isinstance(max_features, (int, np.integer)) and max_features >= 1
        ):
            raise ValueError(
                f"max_features={max_features!r} must be a positive int or None."
            )
        order = np.argsort(np.median(history, axis=0), kind="stable")
        if max_features is not None:
            order = order[-max_features:]
        summary = np.column_stack(
            [probes.min(axis=1), probes.mean(axis=1), probes.max(axis=1)]
        )
        columns = [summary[:, k] for k in range(3)] + [history[:, j] for j in order]
        labels = ["probes: min", "probes: mean", "probes: max"] + [
            plain_text(name) for name in names[order]
        ]
        colors = [DECISION_COLORS["probes"]] * 3 + [
            DECISION_COLORS[d] for d in decisions[order]
        ]
        height = min(max(4.8, 1.5 + 0.3 * len(columns)), 40)
        ax, figure = single_axes(ax, f"{type(self).__name__}.plot", (6.4, height))
        boxes = ax.boxplot(
            columns,
            patch_artist=True,
            medianprops={"color": "black"},
            **_horizontal_boxes(),
        )
        ax.set_yticks(np.arange(1, len(labels) + 1), labels=labels)
        for patch, color in zip(boxes["boxes"], colors):
            patch.set_facecolor(color)
        ax.set_xlabel(self.unit or "importance")
        ax.set_title(f"Importance over {history.shape[0]} rounds of probes")
        from matplotlib.patches import Patch

        shown = [d for d in ("confirmed", "tentative", "rejected") if d in decisions]
        ax.legend(
            handles=[
                Patch(facecolor=DECISION_COLORS[d], edgecolor="black", label=d)
                for d in shown + ["probes"]
            ],
            loc="lower right",
            fontsize="small",
        )
        self.boxes_ = boxes
        self.order_ = order
        self.ax_ = ax
        self.figure_ = figure
        return self


def _horizontal_boxes():
    """``Axes.boxplot``'s keyword for horizontal boxes: ``orientation`` from
    matplotlib 3.10 on, which deprecates the ``vert`` of earlier releases."""
    import matplotlib

    if parse_version(matplotlib.__version__) >= parse_version("3.10"):
        return {"orientation": "horizontal"}
    return {"vert": False}
