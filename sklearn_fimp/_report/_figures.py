"""The report's figures: matplotlib Figures made without pyplot (the
command opens no window and keeps no figure), drawn by the package's
Displays and embedded in the page as PNG."""

import base64
import html
import io

import numpy as np

from .._plot._common import heatmap_size
from .._plot.importance import KEPT_COLOR
from ._analysis import METHOD_TITLES


def new_figure(width, height):
    """A matplotlib Figure of that size (inches), laid out to fit its labels."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def figure_html(figure, alt):
    """The figure as an embedded PNG image, described by ``alt``."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (
        f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt, quote=True)}">'
    )


def rows_of(result, names):
    """``result`` restricted to the rows of the features ``names``, in that
    order (every per-feature field is cut to those rows)."""
    from sklearn.utils import Bunch

    index = {str(n): i for i, n in enumerate(result.feature_names)}
    rows = [index[n] for n in names]
    n_features = len(result.feature_names)
    trimmed = Bunch()
    for key, value in result.items():
        if isinstance(value, (list, np.ndarray)) and len(value) == n_features:
            value = (
                np.asarray(value)[rows]
                if isinstance(value, np.ndarray)
                else [value[i] for i in rows]
            )
        trimmed[key] = value
    return trimmed


def importance_figure(results, random_name, n_rows):
    """Bars of each method's importances side by side: the ``n_rows - 1``
    leading features of the first method, and the random column wherever
    it ranks."""
    from matplotlib.ticker import MaxNLocator

    from .._plot.importance import ImportanceDisplay

    first = next(iter(results.values()))
    leading = [
        str(first.feature_names[i])
        for i in np.argsort(-first.importances_mean, kind="stable")
        if str(first.feature_names[i]) != random_name
    ][: n_rows - 1]
    drawn = leading + [random_name]
    titled = {METHOD_TITLES[m]: rows_of(r, drawn) for m, r in results.items()}
    figure = new_figure(
        max(6.4, 4.2 * len(titled)), min(max(3, 0.3 * n_rows + 1.6), 12)
    )
    axes = figure.subplots(1, len(titled), sharey=True, squeeze=False)[0]
    ImportanceDisplay.from_result(titled, probes=[random_name], ax=list(axes))
    for ax in axes:
        # a few round ticks: labels such as "-0.06" do not overlap
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
    return figure_html(figure, "importances of the leading features by method")


def selector_figure(selector, names, shown, unit):
    """Bars of the ``shown`` leading features (kept in colour, dropped
    pale) and one grey band for every probe: from the lowest to the highest
    probe's mean importance, with their median as a line."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from .._plot.importance import ImportanceDisplay

    result = selector.importances_
    n_groups = len(selector.groups_)
    means = np.asarray(result.importances_mean, dtype=float)
    features, probes = means[:n_groups], means[n_groups:]
    figure = new_figure(7.5, min(max(3, 0.25 * shown + 1.6), 14))
    ax = figure.subplots()
    display = ImportanceDisplay(
        features[np.newaxis],
        None,
        [str(n) for n in names],
        method_names=[METHOD_TITLES.get(selector.method_, selector.method_)],
        units=[unit],
        selected=np.asarray(selector.support_, dtype=bool)[
            [int(group[0]) for group in selector.groups_]
        ],
    ).plot(ax=ax, errorbars=False, max_features=shown)
    band = None
    if len(probes):
        low, high = float(np.min(probes)), float(np.max(probes))
        # behind the bars: the probes are the scale, the features the subject
        band = ax.axvspan(
            low,
            high,
            facecolor="0.6",
            alpha=0.35,
            hatch="//",
            edgecolor="0.4",
            zorder=0,
        )
        ax.axvline(float(np.median(probes)), color="0.3", linewidth=1, zorder=0.5)
        left, right = ax.get_xlim()
        ax.set_xlim(min(left, low), max(right, high))
    ax.xaxis.label.set_wrap(True)
    support = np.asarray(selector.support_, dtype=bool)
    handles = [
        Patch(color=KEPT_COLOR, alpha=alpha, label=label)
        for alpha, label, drawn in ((1.0, "kept", support), (0.35, "dropped", ~support))
        if drawn.any()
    ]
    if band is not None:
        handles.append(
            Patch(
                facecolor="0.6",
                alpha=0.35,
                hatch="//",
                edgecolor="0.4",
                label=f"the {len(probes)} probes: lowest to highest",
            )
        )
        handles.append(Line2D([], [], color="0.3", label="the probes' median"))
    ax.legend(handles=handles, loc="lower right", fontsize="small")
    return figure_html(
        display.figure_, "ImportanceSelector: features, and the probes as a band"
    )


def clustered_order(matrix):
    """Features ordered so that those that explain each other sit together
    (average-linkage clustering of the symmetrised matrix)."""
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    n = len(matrix)
    if n < 3:
        return np.arange(n)
    similarity = np.nan_to_num(np.asarray(matrix, dtype=float), nan=0.0)
    similarity = np.clip((similarity + similarity.T) / 2, 0, None)
    distance = similarity.max() - similarity if similarity.max() > 0 else similarity
    np.fill_diagonal(distance, 0)
    return leaves_list(linkage(squareform(distance, checks=False), "average"))


#: The colour bar's label, on two lines so that it fits the smallest heatmap.
COLORBAR_LABEL = "dependence, or its drop\nwhen a feature is shuffled"
#: Drops at most this large are not written in their cells.
WRITTEN_ABOVE = 0.05


def dependence_figure(analyzer):
    """``(html, matrix, names)``: the dependence heatmap of a fitted
    DependenceAnalyzer, clustered (features that explain each other side by
    side), on a colour scale that fits the values, its dependence column
    always written; and the matrix and names in the order drawn."""
    from .._plot.dependence import DependenceDisplay

    n = analyzer.n_features_in_
    order = clustered_order(analyzer.dependence_matrix_)
    names = np.asarray(analyzer.feature_names_in_, dtype=object)[order]
    dependence = np.asarray(analyzer.dependence_, dtype=float)[order]
    matrix = np.asarray(analyzer.dependence_matrix_, dtype=float)[np.ix_(order, order)]
    figure = new_figure(*heatmap_size(n + 1, n))
    display = DependenceDisplay(
        dependence,
        matrix,
        names,
        dropped=~np.asarray(analyzer.support_, dtype=bool)[order],
    ).plot(
        ax=figure.subplots(),
        sort=False,
        value_threshold=WRITTEN_ABOVE,
        text_kw={"fontsize": 9},
    )
    display.colorbar_.set_label(COLORBAR_LABEL)
    for row, value in enumerate(dependence):
        # the dependence is always written, however small (0 or below: the
        # others do not predict the feature)
        if np.isfinite(value) and value <= WRITTEN_ABOVE:
            display.ax_.text(
                0, row, f"{value:.2f}", ha="center", va="center", fontsize=9
            )
    return figure_html(figure, "dependence heatmap"), matrix, names
