"""Views are built once, with every fact, and never change after: render reads them, it does
not add to them. An attribute set on an OpView or on one of its parts after construction raises,
and the cross-op facts (over_base, adapter, formula_ops, scalar_clash) come with construction."""
import os
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "codegen"))

from kiln_codegen import loader  # noqa: E402
from kiln_codegen.build import build  # noqa: E402
from kiln_codegen.facts import FrozenError  # noqa: E402
from kiln_codegen.views import PARTS, build_views  # noqa: E402

_built = None


def built():
    global _built
    if _built is None:
        path = os.path.join(ROOT, "ops.yaml")
        doc, sources = loader.load_registry(path)
        _built = build_views(build(doc), sources)
    return _built


class FrozenViews(unittest.TestCase):
    def view(self, full):
        return next(v for v in built().all if v.full == full)

    def test_a_view_refuses_new_and_changed_attributes(self):
        v = self.view("add.Tensor")
        for name in ("over_base", "input_ptrs", "forward_call", "something_new"):
            with self.assertRaises(FrozenError, msg=name):
                setattr(v, name, True)
        with self.assertRaises(FrozenError):
            del v.name

    def test_its_parts_are_frozen_too(self):
        v = self.view("add.Tensor")
        for part in PARTS:
            with self.assertRaises((FrozenError, AttributeError), msg=part):
                setattr(getattr(v, part), "over_base", True)
        with self.assertRaises(FrozenError):
            built().with_entries = set()

    def test_cross_op_facts_come_with_construction(self):
        add, linear = self.view("add.Tensor"), self.view("linear")
        self.assertTrue(add.over_base)
        self.assertTrue(linear.adapter and not linear.over_base)
        self.assertIn("add", built().with_entries)
        # pow(Tensor, Scalar) is pow.Tensor_Scalar: pow.Tensor_Tensor gets no Scalar overload
        self.assertTrue(add.scalar_overload and not add.scalar_clash)
        self.assertTrue(self.view("pow.Tensor_Tensor").scalar_clash)
        # mul_'s node saves self's old value as _ops::clone(self); complex inputs conj the tangent
        self.assertEqual(self.view("mul.Tensor").formula_ops, ("clone", "conj"))

    def test_parts_do_not_shadow_each_other(self):
        """A template's v.<name> reads one part's fact: no two parts (nor the view) share a name."""
        for v in built().all:
            seen = {k: "view" for k in vars(v) if not k.startswith("_")}
            for part in PARTS:
                p = getattr(v, part)
                for k in vars(p) if p is not None and hasattr(p, "__dict__") else ():
                    if k.startswith("_"):
                        continue
                    self.assertNotIn(k, seen, f"{v.full}: {part}.{k} shadowed by {seen.get(k)}")
                    seen[k] = part


if __name__ == "__main__":
    unittest.main()
