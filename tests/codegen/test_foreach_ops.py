"""Ops over Tensor lists that write their arguments (`meta: foreach`, `-> ()`, `Tensor(a!)[]`):
what the generator writes for them, and each misuse as `ops.yaml:LINE: message`."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import test_registry_errors as base  # noqa: E402

VALID = base.VALID


FOREACH = """\
- signature: _amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[] self, Tensor(b!) found_inf, Tensor inv_scale) -> ()
  family: amp
  dtypes: [floating]
  dispatch: {cpu: amp_unscale}  # kiln::cpu::amp_unscale only
  # (a CPU build of the probe registry)
  meta: foreach
  samples:
    - {self: [[2, 3]], found_inf: {shape: [1], dtype: float32}, inv_scale: {shape: [1], dtype: float32}}
  doc: Unscale.
"""


class ForeachOps(unittest.TestCase):
    setUp = base.RegistryErrors.setUp
    tearDown = base.RegistryErrors.tearDown
    run_gen = base.RegistryErrors.run_gen
    assertError = base.RegistryErrors.assertError

    def test_foreach_op_generates_a_void_entry_over_lists(self):
        r = self.run_gen(VALID + FOREACH, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        gen = os.path.join(self.tmp.name, "generated")
        name = "_amp_foreach_non_finite_check_and_unscale_"
        with open(os.path.join(gen, "src", "ops", name + ".cpp")) as f:
            entry = f.read()
        self.assertIn(f"void {name}(const TensorList& self, Tensor& found_inf, const Tensor& inv_scale)", entry)
        self.assertIn('meta::foreach("' + name + '", {{"self", self_base}}', entry)
        self.assertIn("for (const Tensor& t : self) t.bump_version();", entry)
        with open(os.path.join(gen, "include", "kiln", "gen", "kernels", "cpu", "amp_unscale.h")) as f:
            self.assertIn(
                "void amp_unscale(const meta::ForeachPlan& plan, const TensorBaseList& self, "
                "const TensorBase& found_inf, const TensorBase& inv_scale);",
                f.read(),
            )
        with open(os.path.join(gen, "src", "registry", "ops.cpp")) as f:
            self.assertIn("return Value();  // -> ()", f.read())

    def test_returning_nothing_needs_an_in_place_meta_step(self):
        broken = FOREACH.replace("meta: foreach", "meta: reduction")
        self.assertError(VALID + broken, 40, "a structured op returns")

    def test_a_mutable_list_belongs_to_foreach(self):
        broken = """\
- signature: scale_(Tensor(a!)[] self) -> Tensor
  dtypes: [floating]
  composite: "return self[0];"
  doc: Broken.
"""
        self.assertError(VALID + broken, 35, "mutable list 'self'")

    def test_foreach_needs_a_list(self):
        broken = FOREACH.replace("Tensor(a!)[] self", "Tensor(a!) self").replace("[[2, 3]]", "[2, 3]")
        self.assertError(VALID + broken, 40, "meta 'foreach' needs a Tensor[] argument")

    def test_foreach_has_no_out_variant(self):
        broken = FOREACH.replace("  meta: foreach\n", "  meta: foreach\n  variants: [function, out]\n")
        self.assertError(VALID + broken, 41, "writes into its arguments")

    def test_foreach_lists_mark_optional_and_scalar_lists(self):
        op = FOREACH.replace(
            "Tensor(a!)[] self, Tensor(b!) found_inf",
            "Tensor(a!)[] self, Tensor(c!)[] state, Tensor[] steps, Tensor(b!) found_inf",
        )
        op = op.replace("  meta: foreach\n", "  meta: foreach\n  foreach_lists: {state: optional, steps: scalars}\n")
        op = op.replace("{self: [[2, 3]], ", "{self: [[2, 3]], state: [], steps: {shapes: [[1]], dtype: float32}, ")
        r = self.run_gen(VALID + op, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        name = "_amp_foreach_non_finite_check_and_unscale_"
        with open(os.path.join(self.tmp.name, "generated", "src", "ops", name + ".cpp")) as f:
            entry = f.read()
        self.assertIn(
            '{"state", state_base, meta::ForeachList::kOptional}, '
            '{"steps", steps_base, meta::ForeachList::kScalars}',
            entry,
        )

    def test_foreach_lists_name_a_later_list_as_optional_or_scalars(self):
        broken = FOREACH.replace("  meta: foreach\n", "  meta: foreach\n  foreach_lists: {self: optional}\n")
        self.assertError(VALID + broken, 41, "foreach_lists: 'self: optional'")
        broken = FOREACH.replace("  meta: foreach\n", "  meta: foreach\n  foreach_lists: {found_inf: scalars}\n")
        self.assertError(VALID + broken, 41, "must name a Tensor[] argument after the first one")


if __name__ == "__main__":
    unittest.main()
