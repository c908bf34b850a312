"""Tests of karma-instruction-ratios on hand-written
callgrind_annotate output: kernels paired by family, layout and extents,
serial kernels by their own functions, parallel ones by their OpenMP outlined
functions."""

import os
import subprocess
import sys
import tempfile
import unittest

from conftest import tool_path

SCRIPT = tool_path("karma-instruction-ratios")

ANNOTATED = """\
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
21,212,172,424 (100.0%)  PROGRAM TOTALS
  23,000,013 ( 0.11%)  ???:void karma::microbench::tiny_matrix_sum_karma<Kokkos::View<int* [3][3], Kokkos::LayoutRight, Kokkos::HostSpace>, Kokkos::View<int* [3][3], Kokkos::LayoutRight, Kokkos::HostSpace> >(Kokkos::View<int* [3][3], Kokkos::LayoutRight, Kokkos::HostSpace> const&, Kokkos::View<int* [3][3], Kokkos::LayoutRight, Kokkos::HostSpace> const&) [/b/karma-microbench]
  36,000,014 ( 0.17%)  ???:void karma::microbench::tiny_matrix_sum_karma_byref<Kokkos::View<int* [3][3], Kokkos::LayoutRight, Kokkos::HostSpace>, Kokkos::View<int* [3][3], Kokkos::LayoutRight, Kokkos::HostSpace> >(Kokkos::View<int* [3][3], Kokkos::LayoutRight, Kokkos::HostSpace> const&, Kokkos::View<int* [3][3], Kokkos::LayoutRight, Kokkos::HostSpace> const&) [/b/karma-microbench]
  10,000,029 ( 0.05%)  ???:void karma::microbench::tiny_matrix_sum_raw<Kokkos::LayoutRight, int, long, karma::microbench::Fixed<3l>, karma::microbench::Fixed<3l> >(int const*, int*, karma::microbench::Shape<long, karma::microbench::Fixed<3l>, karma::microbench::Fixed<3l> > const&) [/b/karma-microbench]
       8,107 ( 0.00%)  ???:int karma::microbench::sum3d_karma<Kokkos::View<int [20][20][20], Kokkos::LayoutLeft, Kokkos::HostSpace> >(Kokkos::View<int [20][20][20], Kokkos::LayoutLeft, Kokkos::HostSpace> const&) [/b/karma-microbench]
       8,105 ( 0.00%)  ???:int karma::microbench::sum3d_raw<Kokkos::LayoutLeft, int, karma::microbench::Fixed<20l>, karma::microbench::Fixed<20l>, karma::microbench::Fixed<20l> >(int const*, karma::microbench::Shape<karma::microbench::Fixed<20l>, karma::microbench::Fixed<20l>, karma::microbench::Fixed<20l> > const&) [/b/karma-microbench]
  9,235,134 ( 0.04%)  ???:Kokkos::Impl::ParallelReduce<Kokkos::Impl::CombinedFunctorReducer<karma::microbench::sum3d_karma_parallel<Kokkos::View<int***, Kokkos::LayoutRight, Kokkos::HostSpace> >(Kokkos::View<int***, Kokkos::LayoutRight, Kokkos::HostSpace> const&)::{lambda(long, long, long, int&)#1}, void>, Kokkos::MDRangePolicy<Kokkos::OpenMP>, Kokkos::OpenMP>::execute() const [clone ._omp_fn.0] [/b/karma-microbench]
  9,300,000 ( 0.04%)  ???:Kokkos::Impl::ParallelReduce<Kokkos::Impl::CombinedFunctorReducer<karma::microbench::sum3d_karma_parallel<Kokkos::View<int***, Kokkos::LayoutRight, Kokkos::HostSpace> >(Kokkos::View<int***, Kokkos::LayoutRight, Kokkos::HostSpace> const&)::{lambda(long, long, long, int&)#1}, void>, Kokkos::MDRangePolicy<Kokkos::OpenMP>, Kokkos::OpenMP>::execute() const [/b/karma-microbench]
  5,277,634 ( 0.02%)  ???:Kokkos::Impl::ParallelReduce<Kokkos::Impl::CombinedFunctorReducer<karma::microbench::sum3d_raw_parallel<Kokkos::LayoutRight, int, long, long, long>(int const*, karma::microbench::Shape<long, long, long> const&)::{lambda(long, long, long, int&)#1}, void>, Kokkos::MDRangePolicy<Kokkos::OpenMP>, Kokkos::OpenMP>::execute() const [clone ._omp_fn.0] [/b/karma-microbench]
      8,131 ( 0.00%)  ???:int karma::microbench::sum3d_karma<karma::Array<int* [20][20], Kokkos::LayoutRight, Kokkos::HostSpace> >(karma::Array<int* [20][20], Kokkos::LayoutRight, Kokkos::HostSpace> const&) [/b/karma-microbench]
       8,130 ( 0.00%)  ???:int karma::microbench::sum3d_raw<Kokkos::LayoutRight, int, long, karma::microbench::Fixed<20l>, karma::microbench::Fixed<20l> >(int const*, karma::microbench::Shape<long, karma::microbench::Fixed<20l>, karma::microbench::Fixed<20l> > const&) [/b/karma-microbench]
      9,000 ( 0.00%)  ???:void karma::microbench::matvec_karma<Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>, Kokkos::View<double*, Kokkos::LayoutLeft, Kokkos::HostSpace> >(Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> const&, Kokkos::View<double*, Kokkos::LayoutLeft, Kokkos::HostSpace> const&, Kokkos::View<double*, Kokkos::LayoutLeft, Kokkos::HostSpace> const&) [/b/karma-microbench]
"""  # noqa: E501 (callgrind_annotate output, verbatim)


class InstructionRatios(unittest.TestCase):
    def run_script(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        return subprocess.run([sys.executable, SCRIPT, "--annotated", f.name],
                              capture_output=True, text=True, timeout=60)

    def rows(self, stdout):
        return {line.split()[0]: line.split()[1:] for line in stdout.splitlines()[1:]}

    def test_pairs_and_ratios(self):
        r = self.run_script(ANNOTATED)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        rows = self.rows(r.stdout)
        self.assertEqual(rows["TinyMatrixSum/serial/right/mixed/?x3x3"],
                         ["23,000,013", "10,000,029", "2.300", "3.600"])
        self.assertEqual(rows["Sum3D/serial/left/static/20x20x20"],
                         ["8,107", "8,105", "1.000", "-"])
        # Kernels over karma::Array (a class derived from View) pair the same way.
        self.assertEqual(rows["Sum3D/serial/right/mixed/?x20x20"],
                         ["8,131", "8,130", "1.000", "-"])
        # Parallel: the outlined OpenMP function only, not execute() itself.
        self.assertEqual(rows["Sum3D/parallel/right/dynamic/?"],
                         ["9,235,134", "5,277,634", "1.750", "-"])
        # A kernel without its raw counterpart is not printed.
        self.assertNotIn("MatVec/serial/left/dynamic/?", rows)
        self.assertLess(list(rows).index("Sum3D/serial/left/static/20x20x20"),
                        list(rows).index("TinyMatrixSum/serial/right/mixed/?x3x3"))

    def test_nothing_to_pair(self):
        r = self.run_script("no kernels here\n")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no karma and raw kernel pairs", r.stderr)

    def test_missing_file(self):
        r = subprocess.run([sys.executable, SCRIPT, "--annotated", "/nonexistent/cg.txt"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot read", r.stderr)


if __name__ == "__main__":
    unittest.main()
