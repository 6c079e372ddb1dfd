"""tools/coverage.py's merge: results, build info and a recorded device run make the cells;
real (float64) and complex (complex128) gradient cells are kept, counted and ratcheted apart, and
so are reverse-mode (backward) and forward-mode (jvp) ones."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from coverage import DTYPES, GRAD_DTYPES, cell_key, check_ratchet, merge, passing_cells, totals  # noqa: E402
from coverage_render import render_html, render_markdown  # noqa: E402

DECLARED = {
    "ops": [
        {
            "name": "exp",
            "family": "pointwise",
            "doc": "",
            "kind": "pointwise",
            "differentiable": True,
            "backends": {
                "cpu": {"declared": ["float32", "float64"], "compiled": ["float32", "float64"]},
                "cuda": {"declared": ["float32", "float64"], "compiled": ["float32", "float64"]},
            },
        }
    ]
}
BUILD = {"cuda_built": True, "cuda_architectures": "90"}


def result(backend, dtype, check, status, op="exp"):
    return {"op": op, "backend": backend, "dtype": dtype, "check": check, "status": status}


class DeviceRun(unittest.TestCase):
    def setUp(self):
        self.results = {
            cell_key("exp", "cpu", d, "forward"): result("cpu", d, "forward", "pass") for d in ("float32", "float64")
        }
        self.device_run = {
            "device": "NVIDIA H200",
            "date": "2026-11-26",
            "passed": {cell_key("exp", "cuda", "float32", "forward"), cell_key("exp", "cuda", "float64", "backward")},
        }

    def test_cuda_cells_not_run_here_say_where_they_passed(self):
        _, ops = merge(DECLARED, self.results, BUILD, self.device_run)
        cuda = ops[0]["forward"]["cuda"]
        self.assertEqual(cuda["float32"]["status"], "not run")
        self.assertIn("compiled (sm_90), not run", cuda["float32"]["detail"])
        self.assertIn("passed on NVIDIA H200 on 2026-11-26", cuda["float32"]["detail"])
        self.assertNotIn("H200", cuda["float64"]["detail"])  # not in the device run
        self.assertIn("H200", ops[0]["backward"]["cuda"]["float64"]["detail"])

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


# mm declares complex128 on cpu only; relu declares no complex dtype; eq is not differentiable.
COMPLEX = {
    "ops": [
        {
            "name": "mm",
            "family": "linalg",
            "doc": "",
            "kind": "matmul",
            "differentiable": True,
            "backends": {
                "cpu": {
                    "declared": ["float32", "float64", "complex128"],
                    "compiled": ["float32", "float64", "complex128"],
                },
                "cuda": {"declared": ["float32", "float64"], "compiled": ["float32", "float64"]},
            },
        },
        {
            "name": "relu",
            "family": "activation",
            "doc": "",
            "kind": "pointwise",
            "differentiable": True,
            "backends": {"cpu": {"declared": ["float32", "float64"], "compiled": ["float32", "float64"]}},
        },
        {
            "name": "eq",
            "family": "comparison",
            "doc": "",
            "kind": "pointwise",
            "differentiable": False,
            "backends": {"cpu": {"declared": ["float64", "complex128"], "compiled": ["float64", "complex128"]}},
        },
    ]
}


def results_of(*rows):
    return {cell_key(r["op"], r["backend"], r["dtype"], r["check"]): r for r in rows}


def report_of(backends, ops):
    return {
        "results_file": "build/coverage_results.jsonl",
        "results_time": "2026-11-27 10:00",
        "backends": backends,
        "dtypes": DTYPES,
        "grad_dtypes": GRAD_DTYPES,
        "totals": totals(backends, ops),
        "ops": ops,
    }


def op_row(markdown, backend, name):
    """The cells of op `name` in the table of `backend`, with the table's header: {column: cell}."""
    section = markdown.split(f"\n## {backend}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == f"`{name}`":
            return dict(zip(header, cells))
    raise AssertionError(f"no row for {name} in the {backend} table")


class ComplexGradients(unittest.TestCase):
    def test_real_and_complex_gradient_cells_are_apart(self):
        results = results_of(
            result("cpu", "float64", "backward", "pass", "mm"), result("cpu", "complex128", "backward", "pass", "mm")
        )
        _, ops = merge(COMPLEX, results)
        mm, relu, eq = ops
        self.assertEqual(set(mm["backward"]["cpu"]), {"float64", "complex128"})
        self.assertEqual(mm["backward"]["cpu"]["complex128"]["status"], "pass")
        self.assertEqual(mm["backward"]["cpu"]["float64"]["status"], "pass")
        self.assertEqual(set(mm["backward"]["cuda"]), {"float64"})  # cuda declares no complex128
        self.assertEqual(set(relu["backward"]["cpu"]), {"float64"})
        self.assertEqual(eq["backward"], {})  # not differentiable: no gradient cell at all
        self.assertIn(cell_key("mm", "cpu", "complex128", "backward"), passing_cells(ops))

    def test_an_op_without_a_complex_dtype_gets_no_complex_cell(self):
        _, ops = merge(COMPLEX, {})
        relu = ops[1]
        self.assertNotIn("complex128", relu["backward"]["cpu"])
        self.assertNotIn(cell_key("relu", "cpu", "complex128", "backward"), passing_cells(ops))
        md = render_markdown(report_of(*merge(COMPLEX, {})))
        self.assertEqual(op_row(md, "cpu", "relu")["grad c128"], "")
        self.assertEqual(op_row(md, "cpu", "relu")["grad"], "–")  # compiled, not run

    def test_a_passing_complex_cell_shows_in_its_own_column(self):
        results = results_of(
            result("cpu", "float64", "backward", "fail", "mm"), result("cpu", "complex128", "backward", "pass", "mm")
        )
        backends, ops = merge(COMPLEX, results)
        md = render_markdown(report_of(backends, ops))
        row = op_row(md, "cpu", "mm")
        self.assertEqual((row["grad"], row["grad c128"]), ("✗", "✓"))
        self.assertEqual(op_row(md, "cuda", "mm")["grad c128"], "")
        self.assertIn("float64 gradcheck", md)
        self.assertIn("complex128 gradcheck", md)
        self.assertIn("conjugate-Wirtinger", md)
        page = render_html(report_of(backends, ops))
        self.assertIn(">grad c128</th>", page)

    def test_a_failing_complex_cell_is_listed_and_counted(self):
        results = results_of(
            result("cpu", "float64", "backward", "pass", "mm"),
            dict(result("cpu", "complex128", "backward", "fail", "mm"), detail="Jacobian differs"),
        )
        backends, ops = merge(COMPLEX, results)
        counts = totals(backends, ops)
        self.assertEqual(counts["cpu backward complex128"]["fail"], 1)
        self.assertEqual(counts["cpu backward complex128"]["declared"], 1)  # only mm declares it
        self.assertEqual(counts["cpu backward float64"]["pass"], 1)
        self.assertEqual(counts["cpu backward float64"]["fail"], 0)
        self.assertEqual(counts["cpu backward float64"]["declared"], 2)  # mm and relu
        md = render_markdown(report_of(backends, ops))
        failing = md.split("## Failing cells", 1)[1]
        self.assertIn("- `mm` cpu complex128 backward: Jacobian differs", failing)
        self.assertNotIn("float64 backward", failing)
        linalg = next(line for line in md.splitlines() if line.startswith("| linalg |"))
        # family, ops, then per backend: forward, grad (real), grad (complex)
        self.assertEqual([c.strip() for c in linalg.strip("|").split("|")][2:5], ["0/3", "1/1", "0/1"])
        self.assertIn("cpu grad (complex)", md)

    def test_the_ratchet_catches_a_complex_cell_that_stopped_passing(self):
        passing = results_of(
            result("cpu", "float64", "backward", "pass", "mm"), result("cpu", "complex128", "backward", "pass", "mm")
        )
        with tempfile.TemporaryDirectory() as tmp:
            baseline = os.path.join(tmp, "baseline.json")
            with open(baseline, "w", encoding="utf-8") as f:
                json.dump({"cells": passing_cells(merge(COMPLEX, passing)[1])}, f)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(check_ratchet(merge(COMPLEX, passing)[1], baseline), 0)
            now = dict(passing)
            key = cell_key("mm", "cpu", "complex128", "backward")
            now[key] = dict(now[key], status="fail", detail="Jacobian differs")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(check_ratchet(merge(COMPLEX, now)[1], baseline), 1)
            self.assertIn(f"{key}: passed in the baseline, now fail (Jacobian differs)", out.getvalue())
            self.assertNotIn("float64 backward", out.getvalue())

    def test_a_float64_baseline_keeps_working_and_unrun_complex_cells_do_not_fail_it(self):
        results = results_of(result("cpu", "float64", "backward", "pass", "mm"))
        with tempfile.TemporaryDirectory() as tmp:
            baseline = os.path.join(tmp, "baseline.json")
            with open(baseline, "w", encoding="utf-8") as f:
                json.dump({"cells": [cell_key("mm", "cpu", "float64", "backward")]}, f)
            _, ops = merge(COMPLEX, results)
            self.assertEqual(ops[0]["backward"]["cpu"]["complex128"]["status"], "not run")
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(check_ratchet(ops, baseline), 0)
            # the float64 cell that stopped passing is still caught under its old key
            with contextlib.redirect_stdout(io.StringIO()) as out:
                self.assertEqual(check_ratchet(merge(COMPLEX, {})[1], baseline), 1)
            self.assertIn("mm cpu float64 backward: passed in the baseline, now not run", out.getvalue())

    def test_a_complex_cuda_cell_gets_the_device_run_note(self):
        declared = json.loads(json.dumps(COMPLEX))
        declared["ops"][0]["backends"]["cuda"] = dict(declared["ops"][0]["backends"]["cpu"])
        device_run = {
            "device": "NVIDIA H200",
            "date": "2026-11-26",
            "passed": {cell_key("mm", "cuda", "complex128", "backward")},
        }
        _, ops = merge(declared, {}, BUILD, device_run)
        self.assertIn("passed on NVIDIA H200", ops[0]["backward"]["cuda"]["complex128"]["detail"])
        self.assertNotIn("H200", ops[0]["backward"]["cuda"]["float64"]["detail"])


# The registry's forward-AD modes (the declared file's "jvp"): exp derives its tangents, mm has a
# formula, cholesky cannot push them, eq is not differentiable. COMPLEX above predates the key.
FORWARD_AD = {
    "ops": [
        {
            "name": "exp",
            "family": "pointwise",
            "doc": "",
            "kind": "pointwise",
            "differentiable": True,
            "jvp": "derived",
            "backends": {
                "cpu": {
                    "declared": ["float32", "float64", "complex128"],
                    "compiled": ["float32", "float64", "complex128"],
                },
                "cuda": {"declared": ["float32", "float64"], "compiled": ["float32", "float64"]},
            },
        },
        {
            "name": "mm",
            "family": "linalg",
            "doc": "",
            "kind": "matmul",
            "differentiable": True,
            "jvp": "formula",
            "backends": {"cpu": {"declared": ["float64", "complex128"], "compiled": ["float64"]}},
        },
        {
            "name": "cholesky",
            "family": "linalg",
            "doc": "",
            "kind": "composite",
            "differentiable": True,
            "jvp": "unsupported",
            "backends": {"cpu": {"declared": ["float64"], "compiled": ["float64"]}},
        },
        {
            "name": "eq",
            "family": "comparison",
            "doc": "",
            "kind": "pointwise",
            "differentiable": False,
            "jvp": "none",
            "backends": {"cpu": {"declared": ["float64"], "compiled": ["float64"]}},
        },
    ]
}


def jvp(backend, dtype, status, op, detail=""):
    return dict(result(backend, dtype, "jvp", status, op), detail=detail)


class ForwardAD(unittest.TestCase):
    def test_jvp_cells_are_built_like_the_backward_ones(self):
        results = results_of(jvp("cpu", "float64", "pass", "exp"), jvp("cpu", "complex128", "fail", "exp"))
        _, ops = merge(FORWARD_AD, results)
        exp, mm, cholesky, eq = ops
        self.assertEqual(exp["jvp_mode"], "derived")
        self.assertEqual(exp["jvp"]["cpu"]["float64"]["status"], "pass")
        self.assertEqual(exp["jvp"]["cpu"]["complex128"]["status"], "fail")
        self.assertEqual(set(exp["jvp"]["cuda"]), {"float64"})  # cuda declares no complex128
        self.assertEqual(mm["jvp"]["cpu"]["float64"]["status"], "not run")
        self.assertEqual(mm["jvp"]["cpu"]["complex128"]["status"], "declared")  # declared, not compiled
        # an op that cannot push tangents keeps its cells: the gap shows
        self.assertEqual(
            (cholesky["jvp_mode"], cholesky["jvp"]["cpu"]["float64"]["status"]), ("unsupported", "not run")
        )
        self.assertEqual((eq["jvp_mode"], eq["jvp"]), ("none", {}))
        self.assertIn(cell_key("exp", "cpu", "float64", "jvp"), passing_cells(ops))
        self.assertNotIn(cell_key("exp", "cpu", "float64", "backward"), passing_cells(ops))

    def test_a_declared_file_without_jvp_modes_gives_no_jvp_cells(self):
        _, ops = merge(COMPLEX, {})
        self.assertEqual([(op["jvp_mode"], op["jvp"]) for op in ops], [("none", {})] * 3)
        md = render_markdown(report_of(*merge(COMPLEX, {})))
        row = op_row(md, "cpu", "mm")
        self.assertEqual((row["fwd"], row["fwd c128"], row["fwd via"]), ("", "", ""))

    def test_results_without_jvp_lines_leave_the_cells_not_run(self):
        results = results_of(result("cpu", "float64", "backward", "pass", "exp"))
        backends, ops = merge(FORWARD_AD, results)
        counts = totals(backends, ops)
        self.assertEqual(counts["cpu jvp float64"]["declared"], 3)  # exp, mm, cholesky
        self.assertEqual(counts["cpu jvp float64"]["not run"], 3)
        self.assertEqual(counts["cpu jvp complex128"]["declared"], 2)  # exp, mm
        self.assertEqual(counts["cpu jvp complex128"]["compiled"], 1)
        md = render_markdown(report_of(backends, ops))
        row = op_row(md, "cpu", "exp")
        self.assertEqual((row["grad"], row["fwd"], row["fwd c128"], row["fwd via"]), ("✓", "–", "–", "derived"))
        self.assertNotIn("## Failing cells", md)

    def test_the_fwd_columns_and_mode_show_in_markdown_and_html(self):
        results = results_of(
            jvp("cpu", "float64", "pass", "exp"),
            jvp("cpu", "complex128", "fail", "exp", "sample 0: J v differs (jvp: derived)"),
            jvp("cpu", "float64", "fail", "cholesky", "NotImplementedError (jvp: unsupported)"),
        )
        backends, ops = merge(FORWARD_AD, results)
        md = render_markdown(report_of(backends, ops))
        exp, cholesky, eq = (op_row(md, "cpu", n) for n in ("exp", "cholesky", "eq"))
        self.assertEqual((exp["fwd"], exp["fwd c128"], exp["fwd via"]), ("✓", "✗", "derived"))
        self.assertEqual((cholesky["fwd"], cholesky["fwd via"]), ("✗", "unsupported"))
        self.assertEqual(eq["fwd via"], "")  # mode "none" is blank
        self.assertEqual(op_row(md, "cuda", "mm")["fwd via"], "")  # no cells on cuda
        failing = md.split("## Failing cells", 1)[1]
        self.assertIn("- `exp` cpu complex128 forward AD: sample 0: J v differs (jvp: derived)", failing)
        self.assertIn("- `cholesky` cpu float64 forward AD: NotImplementedError", failing)
        self.assertIn("cpu fwd (real)", md)
        pointwise = next(line for line in md.splitlines() if line.startswith("| pointwise |"))
        # family, ops, then cpu: forward, grad (real), grad (complex), fwd (real), fwd (complex)
        self.assertEqual([c.strip() for c in pointwise.strip("|").split("|")][2:7], ["0/3", "0/1", "0/1", "1/1", "0/1"])
        page = render_html(report_of(backends, ops))
        self.assertIn(">fwd</th>", page)
        self.assertIn(">fwd c128</th>", page)
        self.assertIn("float64 forward-mode AD: J v vs finite differences and reverse mode", page)
        self.assertIn(">fwd via</th>", page)
        self.assertIn(">unsupported</td>", page)

    def test_the_ratchet_catches_a_jvp_cell_and_old_baselines_still_pass(self):
        passing = results_of(result("cpu", "float64", "backward", "pass", "exp"), jvp("cpu", "float64", "pass", "exp"))
        with tempfile.TemporaryDirectory() as tmp:
            baseline = os.path.join(tmp, "baseline.json")
            with open(baseline, "w", encoding="utf-8") as f:
                json.dump({"cells": passing_cells(merge(FORWARD_AD, passing)[1])}, f)
            now = dict(passing)
            key = cell_key("exp", "cpu", "float64", "jvp")
            now[key] = dict(now[key], status="fail", detail="J v differs")
            with contextlib.redirect_stdout(io.StringIO()) as out:
                self.assertEqual(check_ratchet(merge(FORWARD_AD, now)[1], baseline), 1)
            self.assertIn(f"{key}: passed in the baseline, now fail (J v differs)", out.getvalue())
            # a baseline from before forward AD holds no jvp cell: unrun jvp cells do not fail it
            with open(baseline, "w", encoding="utf-8") as f:
                json.dump({"cells": [cell_key("exp", "cpu", "float64", "backward")]}, f)
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(check_ratchet(merge(FORWARD_AD, passing)[1], baseline), 0)
                without_jvp = results_of(result("cpu", "float64", "backward", "pass", "exp"))
                self.assertEqual(check_ratchet(merge(FORWARD_AD, without_jvp)[1], baseline), 0)

    def test_a_jvp_cuda_cell_gets_the_device_run_note(self):
        device_run = {
            "device": "NVIDIA H200",
            "date": "2026-11-26",
            "passed": {cell_key("exp", "cuda", "float64", "jvp")},
        }
        _, ops = merge(FORWARD_AD, {}, BUILD, device_run)
        self.assertIn("passed on NVIDIA H200", ops[0]["jvp"]["cuda"]["float64"]["detail"])
        self.assertNotIn("H200", ops[0]["backward"]["cuda"]["float64"]["detail"])


class ServedBy(unittest.TestCase):
    def test_each_backend_table_names_what_dispatch_serves_it_with(self):
        declared = json.loads(json.dumps(DECLARED))
        declared["ops"][0]["backends"]["cpu"]["target"] = "pointwise"
        declared["ops"][0]["backends"]["cuda"]["target"] = "composite"
        backends, ops = merge(declared, {}, BUILD)
        self.assertEqual(ops[0]["served_by"], {"cpu": "pointwise", "cuda": "composite"})
        report = report_of(backends, ops)
        text = render_markdown(report)
        self.assertIn("| op | family | served by | autocast |", text)
        self.assertIn("| `exp` | pointwise | composite |", text)
        self.assertIn("<td class='fam'>composite</td>", render_html(report))


if __name__ == "__main__":
    unittest.main()
