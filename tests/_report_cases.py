"""Helpers the report's tests share."""

from sklearn_fimp._report import _run


def capture_facts(monkeypatch):
    """A dict whose ``"facts"`` will hold what the next report measured and
    decided (``_run._analysis``'s result), as the page was built from it."""
    captured = {}
    analysis = _run._analysis

    def capture(*args, **kwargs):
        captured["facts"] = facts = analysis(*args, **kwargs)
        return facts

    monkeypatch.setattr(_run, "_analysis", capture)
    return captured
