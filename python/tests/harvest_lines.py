"""The figures of merit and RESULT words of a mini-app's output, read by
splitting lines: the oracle against which the harvesting tools' regular
expressions are tested (test_harvest.py, test_jube.py)."""

from conftest import ROOT

from karma_tools.core import miniapp_folders

# Every mini-app the build makes, karma-microbench with its Google Benchmark
# table included.
APPS = set(miniapp_folders(ROOT))


def oracle(text):
    """[(app, kernel, value, units)] of every FOM line, and [word] of every
    RESULT line."""
    foms, results = [], []
    for line in text.splitlines():
        words = line.split()
        if line.startswith("FOM: "):
            fields = dict(w.split("=", 1) for w in words[1:])
            foms.append((fields["app"], fields["kernel"], float(fields["value"]),
                         fields["units"]))
        elif line.startswith("RESULT: "):
            results.append(words[1].rstrip(":"))
    return foms, results
