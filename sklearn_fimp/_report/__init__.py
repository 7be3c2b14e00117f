"""The ``sklearn-fimp`` command: an HTML report on a CSV file."""
