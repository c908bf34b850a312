"""Tests of karma-microbench-ratios on small hand-written Google Benchmark
JSON: the ratios and their spread, the threshold (one benchmark over it fails
the run), errors, static-extents speedups and malformed input."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from conftest import tool_path

SCRIPT = tool_path("karma-microbench-ratios")


def entry(run_name, time, unit="us", rep=0, reps=1, bytes_per_second=None, **extra):
    e = {"name": run_name + "/real_time", "run_name": run_name, "run_type": "iteration",
         "repetitions": reps, "repetition_index": rep, "threads": 1, "iterations": 100,
         "real_time": time, "cpu_time": time, "time_unit": unit}
    if bytes_per_second is not None:
        e["bytes_per_second"] = bytes_per_second
    e.update(extra)
    return e


def repeated(run_name, times, unit="us"):
    return [entry(run_name, t, unit, rep=i, reps=len(times)) for i, t in enumerate(times)]


def document(benchmarks):
    return {"context": {"karma_version": "0.1.0", "library_build_type": "release"},
            "benchmarks": benchmarks}


SUM = "Sum3D/serial/right/static/20x20x20/"
STENCIL = "Stencil3D/parallel/left/dynamic/80x80x80/"
TINY = "TinyMatrixSum/serial/right/{}/1000000x3x3/{}"


class RatioScript(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, content, name="mb.json"):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)

    def good_benchmarks(self):
        return (repeated(SUM + "karma", [10.0, 10.2, 9.9, 10.1, 10.0]) +
                repeated(SUM + "raw", [10.0, 10.1, 10.0, 9.8, 10.0]) +
                repeated(STENCIL + "karma", [200.0, 201.0, 199.0]) +
                repeated(STENCIL + "raw", [200.0, 200.0, 202.0]))

    # ---- ratios and the threshold

    def test_all_within_threshold_passes_and_prints_ratios(self):
        r = self.run_script(self.write(document(self.good_benchmarks())), "--threshold", 1.03)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = {line.split()[0]: line.split() for line in r.stdout.splitlines()
                 if line.startswith(("Sum3D", "Stencil3D"))}
        self.assertIn(SUM.rstrip("/"), lines)
        self.assertIn(STENCIL.rstrip("/"), lines)
        # medians 10.0 / 10.0 and 200 / 200
        self.assertEqual(lines[SUM.rstrip("/")][1], "karma")
        self.assertIn("1.000", lines[SUM.rstrip("/")])
        self.assertIn("5/5", lines[SUM.rstrip("/")])
        self.assertIn("PASSED: 2 ratios", r.stdout)

    def test_one_benchmark_over_the_threshold_fails(self):
        benchmarks = self.good_benchmarks()
        benchmarks += repeated("MatVec/serial/left/dynamic/100x10/karma", [1.10, 1.12, 1.11])
        benchmarks += repeated("MatVec/serial/left/dynamic/100x10/raw", [1.00, 1.01, 0.99])
        r = self.run_script(self.write(document(benchmarks)), "--threshold", 1.03)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("OVER", r.stdout)
        self.assertIn("FAILED (1)", r.stdout)
        self.assertIn("MatVec/serial/left/dynamic/100x10: karma / raw = 1.110 > 1.03", r.stdout)
        # A looser threshold lets the same data pass.
        self.assertEqual(self.run_script(self.write(document(benchmarks)), "--threshold", 1.2)
                         .returncode, 0)

    def test_ratio_uses_medians_and_reports_pairwise_spread(self):
        benchmarks = (repeated(SUM + "karma", [12.0, 11.0, 13.0]) +
                      repeated(SUM + "raw", [10.0, 10.0, 10.0]))
        r = self.run_script(self.write(document(benchmarks)), "--threshold", 2)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        row = [line for line in r.stdout.splitlines() if line.startswith("Sum3D")][0].split()
        self.assertIn("1.200", row)     # 12 / 10
        # the 9 ratios are 1.1, 1.2 and 1.3 three times each: quartiles 1.1 and 1.3
        self.assertIn("1.100-1.300", row)

    def test_time_units_are_converted(self):
        benchmarks = ([entry(SUM + "karma", 1.0, unit="ms")] +
                      [entry(SUM + "raw", 1000000.0, unit="ns")])
        r = self.run_script(self.write(document(benchmarks)))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1.000", r.stdout)

    def test_only_the_checked_impl_must_meet_the_threshold(self):
        benchmarks = self.good_benchmarks() + repeated(SUM + "karma_byref", [30.0, 31.0, 29.0])
        path = self.write(document(benchmarks))
        r = self.run_script(path)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"karma_byref .* 3\.000 .* info")
        r = self.run_script(path, "--check", "karma_byref")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        r = self.run_script(path, "--check", "karma_typo")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("no 'karma_typo' benchmark", r.stderr)

    def test_filter_limits_the_benchmarks(self):
        benchmarks = self.good_benchmarks()
        benchmarks += repeated(STENCIL.replace("80x80x80", "9x9x9") + "karma", [5.0])
        benchmarks += repeated(STENCIL.replace("80x80x80", "9x9x9") + "raw", [1.0])
        path = self.write(document(benchmarks))
        self.assertEqual(self.run_script(path).returncode, 1)
        self.assertEqual(self.run_script(path, "--filter", "/80x80x80/|^Sum3D").returncode, 0)
        r = self.run_script(path, "--filter", "NoSuchBenchmark")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no benchmark results match", r.stderr)

    def test_a_benchmark_error_fails_the_run(self):
        benchmarks = self.good_benchmarks()
        benchmarks.append(entry(SUM.replace("20x20x20", "8x8x8") + "karma", 0.0,
                                error_occurred=True,
                                error_message="wrong answer: sum 3, expected 4"))
        r = self.run_script(self.write(document(benchmarks)))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("wrong answer: sum 3, expected 4", r.stdout)

    def test_aggregates_only_use_the_median(self):
        def aggregate(run_name, name, value):
            return {"name": run_name + "/real_time_" + name, "run_name": run_name,
                    "run_type": "aggregate", "aggregate_name": name, "repetitions": 5,
                    "threads": 1, "iterations": 5, "real_time": value, "cpu_time": value,
                    "time_unit": "us"}
        benchmarks = [aggregate(SUM + "karma", "mean", 50.0),
                      aggregate(SUM + "karma", "median", 10.4),
                      aggregate(SUM + "karma", "stddev", 0.5),
                      aggregate(SUM + "raw", "mean", 10.0),
                      aggregate(SUM + "raw", "median", 10.0)]
        r = self.run_script(self.write(document(benchmarks)))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # 1.04 > 1.03, mean ignored
        self.assertIn("1.040", r.stdout)

    # ---- static extents

    def tiny(self, static_time, dynamic_time):
        benchmarks = []
        for extents, t in (("static", static_time), ("mixed", static_time),
                           ("dynamic", dynamic_time)):
            for impl in ("karma", "raw"):
                benchmarks += repeated(TINY.format(extents, impl), [t, t])
        return self.write(document(benchmarks))

    def test_static_speedup_reached(self):
        r = self.run_script(self.tiny(1.0, 2.0), "--min-static-speedup", 1.5)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"TinyMatrixSum/serial/right/static/1000000x3x3/karma +2\.00 "
                         r".* ok")
        self.assertRegex(r.stdout, r"TinyMatrixSum/serial/right/mixed/1000000x3x3/raw +2\.00 "
                         r".* info")

    def test_static_speedup_short_fails(self):
        r = self.run_script(self.tiny(1.0, 1.2), "--min-static-speedup", 1.5)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("SHORT", r.stdout)
        # Printed but not required without the option.
        self.assertEqual(self.run_script(self.tiny(1.0, 1.2)).returncode, 0)

    def test_static_speedup_filter_matching_nothing_fails(self):
        r = self.run_script(self.tiny(1.0, 2.0), "--min-static-speedup", 1.5,
                            "--static-filter", "^NoSuchFamily/")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("matches --static-filter", r.stdout)

    # ---- malformed input and usage

    def assert_input_error(self, content, message):
        r = self.run_script(self.write(content))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(message, r.stderr)

    def test_not_json(self):
        self.assert_input_error('{"benchmarks": [', "not JSON")

    def test_not_google_benchmark_json(self):
        self.assert_input_error({"results": []}, "no 'benchmarks' list")
        self.assert_input_error([1, 2, 3], "no 'benchmarks' list")

    def test_entry_without_a_name(self):
        self.assert_input_error(document([{"real_time": 1.0}]), "not an object with a 'name'")

    def test_time_that_is_not_a_number(self):
        bad = entry(SUM + "karma", "fast")
        self.assert_input_error(document([bad] + repeated(SUM + "raw", [1.0])),
                                "'real_time' is 'fast', not a finite number")

    def test_unknown_time_unit(self):
        bad = entry(SUM + "karma", 1.0, unit="fortnights")
        self.assert_input_error(document([bad] + repeated(SUM + "raw", [1.0])),
                                "unknown time_unit 'fortnights'")

    def test_nothing_to_pair(self):
        self.assert_input_error(document(repeated(SUM + "karma", [1.0])), "no benchmark has both")
        self.assert_input_error(document([]), "no benchmark results")

    def test_missing_file(self):
        r = self.run_script(os.path.join(self.dir.name, "absent.json"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot read", r.stderr)

    def test_usage(self):
        r = self.run_script("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("--threshold", r.stdout)
        path = self.write(document(self.good_benchmarks()))
        self.assertEqual(self.run_script(path, "--threshold", -1).returncode, 2)
        self.assertEqual(self.run_script(path, "--threshold", "nan").returncode, 2)
        self.assertEqual(self.run_script(path, "--filter", "(").returncode, 2)
        self.assertEqual(self.run_script().returncode, 2)

    def test_markdown(self):
        r = self.run_script(self.write(document(self.good_benchmarks())), "--markdown")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("| benchmark | impl | reps |", r.stdout)
        self.assertIn("| " + SUM.rstrip("/") + " | karma | 5/5 |", r.stdout)


if __name__ == "__main__":
    unittest.main()
