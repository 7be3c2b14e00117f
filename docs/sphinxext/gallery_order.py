"""The order of the gallery: from reading one importance to selecting."""

ORDER = [
    "plot_random_column.py",
    "plot_duplicated_columns.py",
    "plot_grouped_permutation.py",
    "plot_dependence.py",
    "plot_selector_pipeline.py",
    "plot_column_transformer.py",
    "plot_boosted_model.py",
    "plot_imbalanced_target.py",
    "plot_wide_data.py",
    "plot_report_in_python.py",
    "plot_dask.py",
]


class ExampleOrder:
    """Sort key of sphinx-gallery's ``within_subsection_order``: examples
    in ``ORDER`` first, in that order, then any other by file name."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        if filename in ORDER:
            return (0, ORDER.index(filename), filename)
        return (1, 0, filename)

    def __repr__(self):
        return "ExampleOrder"
