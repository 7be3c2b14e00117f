"""The package's size limits: no function body over 80 lines (issue 71; 100
since issue 42) and no module over 900 lines in ``sklearn_fimp/``, so that a
long piece is split where it is written rather than found later; and
ImportanceSelector's docstring at most 250 lines, its measured figures on
the docs' pages."""

import ast
from pathlib import Path

import sklearn_fimp

PACKAGE = Path(sklearn_fimp.__file__).resolve().parent
MAX_BODY_LINES = 80
MAX_MODULE_LINES = 900


def _modules():
    return sorted(PACKAGE.rglob("*.py"))


def _where(path):
    return path.relative_to(PACKAGE.parent).as_posix()


def _body_lines(function):
    """Lines of ``function``'s body: from its first statement after the
    docstring to its last line, comments, blank lines and nested functions
    included; 0 for a body that is only a docstring."""
    body = function.body
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        body = body[1:]
    if not body:
        return 0
    return function.end_lineno - body[0].lineno + 1


def test_structure_no_function_body_over_80_lines():
    too_long = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n_lines = _body_lines(node)
                if n_lines > MAX_BODY_LINES:
                    too_long.append(
                        f"{_where(path)}:{node.lineno} {node.name} ({n_lines})"
                    )
    assert not too_long, (
        f"function bodies over {MAX_BODY_LINES} lines (counted from the first "
        f"statement after the docstring); split them: {too_long}"
    )


def test_structure_no_module_over_900_lines():
    too_long = []
    for path in _modules():
        n_lines = len(path.read_text(encoding="utf-8").splitlines())
        if n_lines > MAX_MODULE_LINES:
            too_long.append(f"{_where(path)} ({n_lines})")
    assert not too_long, (
        f"modules over {MAX_MODULE_LINES} lines; split them by topic into "
        f"another private module: {too_long}"
    )


MAX_SELECTOR_DOCSTRING_LINES = 250


def test_structure_selector_docstring_at_most_250_lines():
    # as scikit-learn's RFECV (about 205 lines): each parameter what it
    # does, its values and its default, in a few lines
    path = PACKAGE / "_selection" / "_selector.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    (node,) = [
        node
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name == "ImportanceSelector"
    ]
    n_lines = len(ast.get_docstring(node).splitlines())
    assert n_lines <= MAX_SELECTOR_DOCSTRING_LINES, (
        f"ImportanceSelector's docstring has {n_lines} lines, over "
        f"{MAX_SELECTOR_DOCSTRING_LINES}: keep one headline figure and a link "
        "per claim, and move measured figures, benchmark narrative and history "
        "to the docs/bench_*.rst page that holds the tallies (or "
        "docs/probe_test.rst)"
    )
