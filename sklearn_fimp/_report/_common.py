"""What every step of the report shares: the program's name and its error."""

PROG = "sklearn-fimp"
EXIT_USAGE = 2


class ReportError(Exception):
    """An input the report cannot use; the message says what to do."""
