// check_variants: every sample of an op, on every declared dtype, through its other entry
// points: out= and in-place must give the functional result, and inputs laid out differently
// (a strided slice, a transpose, an expanded row) must give what their contiguous copies give.
#include <doctest/doctest.h>
#include "kiln/core.h"
#include "layouts.h"
#include "op_catalog.h"
#include "op_testing.h"
#include "sample_inputs.h"
#include "tensor_json.h"

namespace kiln::testing {
namespace {

using Named = std::map<std::string, Value>;

std::string describe(const std::exception& e) {
  if (auto* k = dynamic_cast<const kiln::Error*>(&e))
    return std::string("kiln raised ") + error_kind_name(k->kind()) + " error: " + k->what();
  return std::string("unexpected exception: ") + e.what();
}

// Empty when `got` has `want`'s dtype, shape and values (within want's dtype tolerance); only
// dtype and shape for an op whose values are unspecified (empty). A random op's values are
// compared: every call is reseeded.
std::string compare(const std::vector<Tensor>& got, const std::vector<Tensor>& want, bool values = true) {
  if (got.size() != want.size())
    return "returned " + std::to_string(got.size()) + " tensors, expected " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    // unspecified values (empty's) are never read: an uninitialized bool is UB
    std::string d = values ? compare_with_json(got[i], tensor_to_json(want[i]))
                           : compare_metadata_with_json(got[i], {{"dtype", dtype_name(want[i].dtype())},
                                                                 {"shape", want[i].sizes().vec()}});
    if (!d.empty()) return got.size() > 1 ? "output " + std::to_string(i) + ": " + d : d;
  }
  return "";
}

bool is_view_op(const OpInfo& op) { return op.signature.find("-> Tensor(a)") != std::string::npos; }

void check_out(const OpInfo& op, const Named& args, const std::vector<Tensor>& want, Device device, std::string& fail) {
  TensorList out;
  for (const Tensor& w : want) out.push_back(empty({0}, TensorOptions(w.dtype(), device)));  // out= resizes
  try {
    call_op(op, args, Variant::Out, out);
    std::string d = compare(out, want);
    if (!d.empty()) fail = "out=: " + d;
  } catch (const std::exception& e) {
    fail = "out=: " + describe(e);
  }
}

void check_inplace(const OpInfo& op, const Named& args, const Tensor& want, std::string& fail) {
  const Tensor self = args.at(op.args[0].name).to_tensor();
  if (!self.sizes().equals(want.sizes())) return;  // a broadcast result cannot go into self
  Named with_copy = args;
  Tensor target = self.clone();
  with_copy[op.args[0].name] = Value(target);
  try {
    call_op(op, with_copy, Variant::Inplace);
    if (!can_cast(want.dtype(), self.dtype())) {
      fail = std::string("in-place: wrote a ") + dtype_name(want.dtype()) + " result into " + dtype_name(self.dtype()) +
             " (expected a DTypeError)";
      return;
    }
    std::string d = compare({target}, {want.to(self.dtype())});
    if (!d.empty()) fail = "in-place: " + d;
  } catch (const kiln::Error& e) {
    if (can_cast(want.dtype(), self.dtype())) fail = "in-place: " + describe(e);
    else if (!compare({target}, {self}).empty()) fail = "in-place: a refused call changed self";
  } catch (const std::exception& e) {
    fail = "in-place: " + describe(e);
  }
}

void check_layouts(const OpInfo& op, const Named& args, std::string& fail) {
  for (const Layout& layout : input_layouts()) {
    Named strided, dense;
    if (!lay_out(op, args, layout, strided, dense)) continue;
    try {
      std::vector<Tensor> want = flatten_result(call_op(op, dense));
      std::string d = compare(flatten_result(call_op(op, strided)), want, op.compare_values || op.random);
      if (!d.empty()) fail = std::string("inputs as ") + layout.name + ": " + d;
    } catch (const ShapeError&) {
      // A view may refuse strides it cannot express (view() of a transposed tensor), as PyTorch's does.
      if (!is_view_op(op)) fail = std::string("inputs as ") + layout.name + ": refused with a ShapeError";
    } catch (const std::exception& e) {
      fail = std::string("inputs as ") + layout.name + ": " + describe(e);
    }
    if (!fail.empty()) return;
  }
}

}  // namespace

void check_variants(const OpTestSpec& spec) {
  const OpInfo& op = op_info(spec.op);
  const Device device{std::string(spec.backend)};
  for (DType dtype : spec.dtypes) {
    for (size_t i = 0; i < op.samples.size(); ++i) {
      Named args = sample_args(op, i, dtype, device);
      std::vector<Tensor> want;
      try {
        want = flatten_result(call_op(op, args));
      } catch (const kiln::Error&) {
        continue;  // refused inputs are the forward test's business
      }
      std::string fail;
      if (op.has_variant("out")) check_out(op, args, want, device, fail);
      if (fail.empty() && op.has_variant("inplace") && want.size() == 1) check_inplace(op, args, want[0], fail);
      if (fail.empty() && !op.reads_storage) check_layouts(op, args, fail);
      if (!fail.empty())
        FAIL_CHECK(op.name << " [" << std::string(spec.backend) << ", " << std::string(dtype_name(dtype)) << "] sample "
                           << i << ": " << fail);
    }
  }
}

}  // namespace kiln::testing
