"""One line per CI environment: the versions that matter and pytest's counts.

Usage: python .ci/summary.py LABEL JUNIT_XML SECONDS

Run with the environment's own interpreter, after its pytest run wrote
JUNIT_XML (``--junitxml``); SECONDS is the wall time of that run. The line
starts with "== matrix" so that it can be found in CI's log.
"""

import platform
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import PackageNotFoundError, version

PACKAGES = ("scikit-learn", "numpy", "scipy", "pandas", "polars", "pyspark")


def installed(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return "absent"


def counts(path):
    """passed, failed, errors and skipped (xfail included) of a junit file."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        return f"no pytest report ({exc})"
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        for key in total:
            total[key] += int(suite.get(key, 0))
    passed = total["tests"] - total["failures"] - total["errors"] - total["skipped"]
    return (
        f"passed {passed}, failed {total['failures']}, errors {total['errors']}, "
        f"skipped {total['skipped']}"
    )


def main(label, junit, seconds):
    fields = [f"Python {platform.python_version()}"]
    fields += [f"{name} {installed(name)}" for name in PACKAGES]
    print(
        f"== matrix | {label} | {' | '.join(fields)} | {counts(junit)} "
        f"| pytest {float(seconds):.0f} s"
    )


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
