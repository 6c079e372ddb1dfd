"""tools/coverage.py's merge: results, build info and a recorded device run make the cells."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from coverage import cell_key, merge, passing_cells  # noqa: E402

DECLARED = {"ops": [{
    "name": "exp", "family": "pointwise", "doc": "", "kind": "pointwise", "differentiable": True,
    "backends": {"cpu": {"declared": ["float32", "float64"], "compiled": ["float32", "float64"]},
                 "cuda": {"declared": ["float32", "float64"], "compiled": ["float32", "float64"]}},
}]}
BUILD = {"cuda_built": True, "cuda_architectures": "90"}


def result(backend, dtype, check, status):
    return {"op": "exp", "backend": backend, "dtype": dtype, "check": check, "status": status}


class DeviceRun(unittest.TestCase):
    def setUp(self):
        self.results = {cell_key("exp", "cpu", d, "forward"): result("cpu", d, "forward", "pass")
                        for d in ("float32", "float64")}
        self.device_run = {"device": "NVIDIA H200", "date": "2026-11-26",
                           "passed": {cell_key("exp", "cuda", "float32", "forward"),
                                      cell_key("exp", "cuda", "float64", "backward")}}

    def test_cuda_cells_not_run_here_say_where_they_passed(self):
        _, ops = merge(DECLARED, self.results, BUILD, self.device_run)
        cuda = ops[0]["forward"]["cuda"]
        self.assertEqual(cuda["float32"]["status"], "not run")
        self.assertIn("compiled (sm_90), not run", cuda["float32"]["detail"])
        self.assertIn("passed on NVIDIA H200 on 2026-11-26", cuda["float32"]["detail"])
        self.assertNotIn("H200", cuda["float64"]["detail"])  # not in the device run
        self.assertIn("H200", ops[0]["backward"]["cuda"]["detail"])

    def test_a_device_run_never_counts_as_passing_here(self):
        _, ops = merge(DECLARED, self.results, BUILD, self.device_run)
        self.assertEqual(passing_cells(ops), sorted(self.results))

    def test_a_result_of_this_run_wins_over_the_record(self):
        results = dict(self.results)
        key = cell_key("exp", "cuda", "float32", "forward")
        results[key] = dict(result("cuda", "float32", "forward", "fail"), detail="wrong value")
        _, ops = merge(DECLARED, results, BUILD, self.device_run)
        self.assertEqual(ops[0]["forward"]["cuda"]["float32"], {"status": "fail", "detail": "wrong value"})

    def test_without_a_cuda_build_the_cells_are_only_declared(self):
        _, ops = merge(DECLARED, self.results, {"cuda_built": False}, self.device_run)
        self.assertEqual(ops[0]["forward"]["cuda"]["float32"]["status"], "declared")


if __name__ == "__main__":
    unittest.main()
