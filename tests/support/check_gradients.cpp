// check_gradients: autograd against central finite differences in float64 and complex128, first
// order and (when the op's formulas are differentiable) second order, and for an op with an
// in-place variant that variant applied to a view of a bigger tensor; one coverage cell per
// backend and dtype.
#include <doctest/doctest.h>
#include <algorithm>
#include <cstdlib>
#include <random>
#include "coverage_log.h"
#include "gradcheck.h"
#include "kiln/autograd.h"
#include "kiln/gen/api/stack.h"
#include "op_catalog.h"
#include "op_testing.h"
#include "sample_inputs.h"
#include "tensor_json.h"

namespace kiln::testing {
namespace {

struct Slot {
  std::string name;
  int64_t list_index;  // -1: a plain Tensor argument
};

// The op as a function of its differentiable inputs (other arguments fixed), keeping
// only inexact outputs (indices and masks have no gradient).
Fn op_fn(const OpInfo& op, const std::map<std::string, Value>& base, const std::vector<Slot>& slots) {
  return [&op, base, slots](const TensorList& xs) {
    std::map<std::string, Value> named = base;
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].list_index < 0) {
        // an argument the op writes (Tensor(a!) self of index_put_) gets a differentiable copy:
        // a leaf cannot be written in place, and the op is checked as a function of its inputs
        const ArgInfo* a = op.arg(slots[i].name);
        named[slots[i].name] = a && a->mutable_ ? xs[i].clone() : xs[i];
      } else {
        TensorList list = named[slots[i].name].to_tensor_list();
        list[size_t(slots[i].list_index)] = xs[i];
        named[slots[i].name] = Value(std::move(list));
      }
    }
    TensorList outs;
    const std::vector<Tensor> all = flatten_result(call_op(op, named));
    for (size_t i = 0; i < all.size(); ++i) {
      const bool differentiable = i >= op.differentiable_outputs.size() || op.differentiable_outputs[i];
      if (differentiable && is_inexact(all[i].dtype())) outs.push_back(all[i]);
    }
    return outs;
  };
}

// The in-place variant applied to a view, under autograd: root = stack([self * 1, self * 2]),
// op_(root.select(0, 0), ...), and the function's output is the whole root. Its Jacobian checks
// that the base's history is rebased (the written half through the op, the other half as before).
Fn inplace_on_view_fn(const OpInfo& op, const std::map<std::string, Value>& base, const std::vector<Slot>& slots) {
  return [&op, base, slots](const TensorList& xs) {
    std::map<std::string, Value> named = base;
    for (size_t i = 0; i < slots.size(); ++i) named[slots[i].name] = xs[i];
    const std::string& self_name = op.args[0].name;
    const Tensor self = named[self_name].to_tensor();
    Tensor root = stack({self * 1, self * 2}, 0);
    named[self_name] = Value(root.select(0, 0));
    call_op(op, named, Variant::Inplace);
    return TensorList{root};
  };
}

std::string describe(const std::exception& e) {
  if (auto* k = dynamic_cast<const kiln::Error*>(&e))
    return std::string("kiln raised ") + error_kind_name(k->kind()) + " error: " + k->what();
  return std::string("unexpected exception: ") + e.what();
}

// A sample's arguments and its differentiable inputs (inexact Tensors and list elements): their
// slots, values and names.
struct DifferentiableSample {
  std::map<std::string, Value> base;
  std::vector<Slot> slots;
  TensorList x0;
  std::vector<std::string> names;
};

DifferentiableSample differentiable_sample(const OpInfo& op, size_t index, DType dtype, Device device) {
  DifferentiableSample sample{sample_args(op, index, dtype, device), {}, {}, {}};
  std::vector<Slot>& slots = sample.slots;
  TensorList& x0 = sample.x0;
  std::vector<std::string>& names = sample.names;
  const std::map<std::string, Value>& base = sample.base;
  for (const std::string& name : op.differentiable_inputs) {
    auto it = base.find(name);
    if (it == base.end() || it->second.is_none()) continue;
    if (it->second.is_tensor()) {
      if (!is_inexact(it->second.to_tensor().dtype())) continue;
      slots.push_back({name, -1});
      x0.push_back(it->second.to_tensor());
      names.push_back(name);
    } else {
      const TensorList& list = it->second.to_tensor_list();
      for (size_t k = 0; k < list.size(); ++k) {
        if (!list[k].defined() || !is_inexact(list[k].dtype())) continue;  // None entries of a Tensor?[]
        slots.push_back({name, int64_t(k)});
        x0.push_back(list[k]);
        names.push_back(name + "[" + std::to_string(k) + "]");
      }
    }
  }
  return sample;
}

// Empty when sample `index` passes; adds the number of Jacobian entries compared.
std::string check_sample(const OpInfo& op, size_t index, DType dtype, Device device, bool gradgrad, size_t& compared,
                         bool& inplace_on_view) {
  const DifferentiableSample sample = differentiable_sample(op, index, dtype, device);
  const auto& base = sample.base;
  const auto& slots = sample.slots;
  const TensorList& x0 = sample.x0;
  const auto& names = sample.names;
  if (x0.empty()) return "";
  Fn f = op_fn(op, base, slots);
  std::string first = compare_jacobians(f, x0, names, device, compared);
  if (!first.empty()) return first;
  // In place on a view: when self is differentiable, a plain Tensor, and the result has its shape.
  const bool plain = std::all_of(slots.begin(), slots.end(), [](const Slot& s) { return s.list_index < 0; });
  if (op.has_variant("inplace") && plain && !slots.empty() && slots[0].name == op.args[0].name) {
    TensorList outs = f(leaves_of(x0, device));
    if (outs.size() == 1 && outs[0].sizes().equals(x0[0].sizes()) &&
        outs[0].dtype() == leaves_of(x0, device)[0].dtype()) {
      std::string why = compare_jacobians(inplace_on_view_fn(op, base, slots), x0, names, device, compared);
      if (!why.empty()) return "in place on a view: " + why;
      inplace_on_view = true;
    }
  }
  if (!gradgrad) return first;

  // Second order: differentiate the vector-Jacobian product w.r.t. the inputs and the vector.
  TensorList outs = f(leaves_of(x0, device));
  std::mt19937_64 rng(seed_for(op.name, 1000 + index));
  std::uniform_real_distribution<double> uni(-1, 1);
  TensorList xv = x0;
  std::vector<std::string> xv_names = names;
  for (size_t o = 0; o < outs.size(); ++o) {
    std::vector<double> re(size_t(outs[o].numel())), im;
    for (double& e : re) e = uni(rng);
    if (is_complex(outs[o].dtype())) {
      im.resize(re.size());
      for (double& e : im) e = uni(rng);
    }
    Tensor t = host_tensor(outs[o].sizes(), is_complex(outs[o].dtype()) ? DType::Complex128 : DType::Float64, re, im);
    xv.push_back(device.is_cpu() ? t : t.to(device));
    xv_names.push_back("grad_output" + std::to_string(o));
  }
  std::string second = compare_jacobians(vjp_fn(f, x0.size()), xv, xv_names, device, compared);
  return second.empty() ? "" : "second order: " + second;
}

// A sample whose arguments the op refuses for this dtype (scatter_reduce's amax of complex
// numbers) has no gradient to check; whether the refusal matches PyTorch's is the forward
// test's business. Asked only after a sample failed, so passing samples run once.
bool refused_for_dtype(const OpInfo& op, size_t index, DType dtype, Device device) {
  try {
    call_op(op, sample_args(op, index, dtype, device));
  } catch (const DTypeError&) {
    return true;
  } catch (const std::exception&) {
  }
  return false;
}

// Forward-mode AD on sample `index`: J v against finite differences and reverse mode's J^T u.
std::string check_sample_jvp(const OpInfo& op, size_t index, DType dtype, Device device, size_t& compared) {
  const DifferentiableSample sample = differentiable_sample(op, index, dtype, device);
  const auto& base = sample.base;
  const auto& slots = sample.slots;
  const TensorList& x0 = sample.x0;
  const auto& names = sample.names;
  if (x0.empty()) return "";
  return compare_jvp(op_fn(op, base, slots), x0, names, device, seed_for(op.name, 2000 + index), compared);
}

// One forward-AD cell per dtype: how the op pushes tangents (OpInfo::jvp) and whether it is right.
void check_forward_ad(const OpInfo& op, const OpTestSpec& spec, Device device, DType dtype) {
  std::string failure;
  size_t compared = 0;
  for (size_t i = 0; i < op.samples.size() && failure.empty(); ++i) {
    try {
      std::string why = check_sample_jvp(op, i, dtype, device, compared);
      if (!why.empty()) failure = "sample " + std::to_string(i) + ": " + why;
    } catch (const std::exception& e) {
      if (refused_for_dtype(op, i, dtype, device)) continue;
      failure = "sample " + std::to_string(i) + ": " + describe(e);
    }
  }
  if (failure.empty() && compared == 0) failure = "no sample has a differentiable input and output to check";
  const std::string detail = failure.empty() ? std::to_string(compared) + " J v entries match finite differences and " +
                                                   "<J v, u> = <v, J^T u> (jvp: " + op.jvp + ")"
                                             : failure + " (jvp: " + op.jvp + ")";
  record_cell(op.name, spec.backend, dtype_name(dtype), "jvp", failure.empty() ? CellStatus::Pass : CellStatus::Fail,
              detail);
  if (!failure.empty())
    FAIL_CHECK(op.name << " [" << std::string(spec.backend) << ", " << std::string(dtype_name(dtype))
                       << "] forward AD: " << failure);
}

}  // namespace

void check_gradients(const OpTestSpec& spec) {
  const std::string op_name = spec.op;
  Device device;
  const OpInfo* op = nullptr;
  try {
    device = Device(std::string(spec.backend));
    op = &op_info(op_name);
  } catch (const std::exception& e) {
    record_cell(op_name, spec.backend, "float64", "backward", CellStatus::Fail, e.what());
    FAIL_CHECK(op_name << ": " << e.what());
    return;
  }
  // KILN_TEST_FIRST_ORDER_ONLY=1 (the sanitizer stages): second-order gradients are checked by
  // the normal run; under a sanitizer they would re-run the same kernels at several times the cost
  const bool gradgrad = spec.gradgrad && !std::getenv("KILN_TEST_FIRST_ORDER_ONLY");
  for (DType dtype : spec.dtypes) {
    std::string failure;
    size_t compared = 0;
    bool inplace_on_view = false;
    for (size_t i = 0; i < op->samples.size() && failure.empty(); ++i) {
      try {
        std::string why = check_sample(*op, i, dtype, device, gradgrad, compared, inplace_on_view);
        if (!why.empty()) failure = "sample " + std::to_string(i) + ": " + why;
      } catch (const std::exception& e) {
        if (refused_for_dtype(*op, i, dtype, device)) continue;
        failure = "sample " + std::to_string(i) + ": " + describe(e);
      }
    }
    if (failure.empty() && compared == 0) failure = "no sample has a differentiable input and output to check";
    std::string detail = failure.empty() ? std::to_string(compared) + " Jacobian entries match finite differences" +
                                               (gradgrad ? " (first and second order" : " (first order") +
                                               (inplace_on_view ? "; in place on a view too)" : ")")
                                         : failure;
    record_cell(op_name, spec.backend, dtype_name(dtype), "backward",
                failure.empty() ? CellStatus::Pass : CellStatus::Fail, detail);
    if (!failure.empty())
      FAIL_CHECK(op_name << " [" << std::string(spec.backend) << ", " << std::string(dtype_name(dtype))
                         << "] gradcheck: " << failure);
    if (op->jvp != "none") check_forward_ad(*op, spec, device, dtype);
  }
}

}  // namespace kiln::testing
