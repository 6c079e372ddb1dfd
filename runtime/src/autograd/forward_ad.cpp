// Forward-mode AD: dual levels, tangents in AutogradMeta, and what generated op entries call to
// push them through an op (kiln/autograd/forward_grad.h, kiln/autograd/forward_ad.h).
#include <atomic>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/gen/api/conj.h"
#include "kiln/gen/api/expand.h"
#include "kiln/gen/api/real.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/view.h"

namespace kiln::autograd::forward_ad {
namespace {

// The live level (0: none). Levels are process-wide, as PyTorch's; a new one gets a new number,
// so the tangents of an ended level never match again.
std::atomic<uint64_t> live_level{0};
std::atomic<uint64_t> last_level{0};
thread_local int suspended = 0;

uint64_t current() { return live_level.load(std::memory_order_relaxed); }

void store(const TensorBase& t, TensorBase tangent) {
  AutogradMeta& meta = t.impl()->autograd_or_create();
  meta.fw_grad = std::move(tangent);
  meta.fw_level = current();
}

bool shares_memory(const TensorBase& a, const TensorBase& b) {
  return a.defined() && b.defined() && a.storage() == b.storage();
}

// `tangent` as `like`'s: its dtype (the real part for a real tensor) and sizes.
Tensor conform(const Tensor& tangent, const TensorBase& like) {
  Tensor t = tangent;
  if (is_complex(t.dtype()) && !is_complex(like.dtype())) t = real(t);
  if (t.dtype() != like.dtype()) t = t.to(like.dtype());
  if (!t.sizes().equals(like.sizes())) t = expand(t, like.sizes());
  return t;
}

// Re(<a, b>) = Re(sum(conj(a) * b)): the real inner product of two tensors of one shape.
Tensor real_inner(const Tensor& a, const Tensor& b) {
  Tensor s = sum(conj(a) * b);
  return is_complex(s.dtype()) ? real(s) : s;
}

}  // namespace

bool level_live() { return current() != 0 && suspended == 0; }

bool any_dual(std::initializer_list<const TensorBase*> tensors) {
  if (!level_live()) return false;
  for (const TensorBase* t : tensors)
    if (t && tangent(*t).defined()) return true;
  return false;
}

bool any_dual(const std::vector<TensorBase>& tensors) {
  if (!level_live()) return false;
  for (const TensorBase& t : tensors)
    if (tangent(t).defined()) return true;
  return false;
}

TensorBase tangent(const TensorBase& t) {
  if (!t.defined()) return {};
  AutogradMeta* meta = t.impl()->autograd();
  if (!meta || !meta->fw_grad.defined()) return {};
  if (meta->fw_level != current()) {
    meta->fw_grad = TensorBase();  // its level ended
    return {};
  }
  return meta->fw_grad;
}

TensorBase tangent_or_zeros(const TensorBase& t) {
  TensorBase found = tangent(t);
  if (found.defined() || !t.defined()) return found;
  return zeros_like(Tensor(t));
}

std::vector<TensorBase> tangents_or_zeros(const std::vector<TensorBase>& ts) {
  std::vector<TensorBase> out;
  out.reserve(ts.size());
  for (const TensorBase& t : ts) out.push_back(tangent_or_zeros(t));
  return out;
}

Suspend::Suspend() { ++suspended; }
Suspend::~Suspend() { --suspended; }

void add_to(TensorBase& tangent, const TensorBase& part) {
  if (!part.defined()) return;
  tangent = tangent.defined() ? TensorBase(Tensor(tangent) + Tensor(part)) : part;
}

void set_tangent(const TensorBase& output, TensorBase tangent, std::initializer_list<const TensorBase*> inputs,
                 bool is_view) {
  if (!tangent.defined() || !output.defined() || !is_inexact(output.dtype())) return;
  if (tangent.is_same(forward_ad::tangent(output))) return;  // an op that returned its input (to(), contiguous())
  Tensor t = conform(Tensor(tangent), output);
  if (!is_view) {
    // An expanded tangent, or one that is an input's (formula `grad`), gets memory of its own:
    // an in-place op on the output writes its tangent in place.
    bool copy = !t.is_contiguous() && t.numel() > 1;
    for (const TensorBase* in : inputs)
      if (in && shares_memory(t, *in)) copy = true;
    if (copy) t = t.clone();
  }
  store(output, std::move(t));
}

void write_tangent(const TensorBase& self, const TensorBase& new_tangent) {
  if (!new_tangent.defined() || !is_inexact(self.dtype())) return;
  Tensor t = conform(Tensor(new_tangent), self);
  Tensor own = tangent(self);
  if (!own.defined()) {
    const ViewInfo* view = self.impl()->view_info.get();
    if (view && view->replay) {
      TensorBase base_tangent = tangent(view->base);
      if (!base_tangent.defined()) {
        base_tangent = zeros_like(Tensor(view->base));
        store(view->base, base_tangent);
      }
      Suspend plain;
      own = view->replay(base_tangent);
    } else {
      own = zeros_like(Tensor(self));
    }
    store(self, own);
  }
  Suspend plain;
  own.copy_(t);
}

TensorBaseList tangents_by_vjp(std::initializer_list<const TensorBase*> outputs,
                               std::initializer_list<const TensorBase*> inputs, const VjpFn& vjp) {
  TensorList ts;
  bool recording = GradMode::is_enabled();
  bool any_history = false;
  for (const TensorBase* in : inputs) {
    ts.push_back(in ? Tensor(tangent(*in)) : Tensor());
    any_history = any_history || (in && requires_grad(*in)) || requires_grad(ts.back());
  }
  // One cotangent per differentiable output. The formula is linear in it, so any point gives the
  // same derivative; ones, not zeros, as some formulas take log|g| (logcumsumexp).
  TensorBaseList grads;
  TensorList cotangents;
  for (const TensorBase* out : outputs) {
    if (out && out->defined() && is_inexact(out->dtype())) {
      Tensor g = ones_like(Tensor(*out));
      g.requires_grad_(true);
      cotangents.push_back(g);
      grads.push_back(g);
    } else {
      grads.push_back(TensorBase());
    }
  }
  const bool create_graph = recording && any_history;
  EnableGradGuard record(true);
  const TensorBaseList vjps = vjp(grads);
  Tensor h;
  for (size_t i = 0; i < ts.size() && i < vjps.size(); ++i) {
    if (!ts[i].defined() || !vjps[i].defined()) continue;
    Tensor term = real_inner(Tensor(vjps[i]), ts[i]);
    h = h.defined() ? h + term : term;
  }
  TensorList jvps;
  if (h.defined() && requires_grad(h))
    jvps = grad({h}, cotangents, {}, create_graph, create_graph, /*allow_unused=*/true);
  TensorBaseList result;
  size_t k = 0;
  for (const TensorBase* out : outputs) {
    if (!grads[result.size()].defined()) {
      result.push_back(TensorBase());
      continue;
    }
    Tensor j = k < jvps.size() ? jvps[k] : Tensor();
    ++k;
    if (!j.defined()) j = zeros_like(Tensor(*out));
    result.push_back(create_graph ? j : j.detach());
  }
  return result;
}

void not_implemented(const char* op) {
  KILN_FAIL(NotImplementedError, op, "",
            "forward-mode AD: this op has no way to push tangents through (no jvp formula, and its derivative "
            "cannot be transposed); see the forward-AD column of the coverage report");
}

void check_out(const char* op, std::initializer_list<const TensorBase*> inputs) {
  KILN_CHECK(!any_dual(inputs), NotImplementedError, op, "out",
             "forward-mode AD: an out= call with dual inputs would lose their tangents; call the functional form");
}

// ---- the user's side ----

DualLevel::DualLevel() {
  const uint64_t level = last_level.fetch_add(1) + 1;
  uint64_t none = 0;
  KILN_CHECK(live_level.compare_exchange_strong(none, level), NotImplementedError, "dual_level", "",
             "nested forward-mode AD is not supported: a dual level is already live");
  level_ = level;
}

DualLevel::~DualLevel() { live_level.store(0); }

Tensor make_dual(const Tensor& primal, const Tensor& tangent) {
  KILN_CHECK(current() != 0, ValueError, "make_dual", "",
             "to create a dual tensor, a forward_ad::DualLevel must be live");
  KILN_CHECK(primal.defined() && tangent.defined(), ValueError, "make_dual", "tangent",
             "primal and tangent must be defined tensors");
  KILN_CHECK(is_inexact(primal.dtype()), ValueError, "make_dual", "primal",
             "expected a floating point or complex tensor as primal, got ", dtype_name(primal.dtype()));
  KILN_CHECK(tangent.sizes().equals(primal.sizes()), ValueError, "make_dual", "tangent",
             "trying to set a forward gradient that has a different size than that of the original tensor: ",
             tangent.shape_str(), " vs ", primal.shape_str());
  KILN_CHECK(tangent.dtype() == primal.dtype(), ValueError, "make_dual", "tangent",
             "expected the tangent to have dtype ", dtype_name(primal.dtype()), ", got ", dtype_name(tangent.dtype()));
  KILN_CHECK(tangent.device() == primal.device(), ValueError, "make_dual", "tangent", "expected the tangent on ",
             primal.device().str(), ", got ", tangent.device().str());
  Tensor dual;
  {
    Suspend plain;  // the view takes no tangent of primal's
    dual = view(primal, primal.sizes());
  }
  store(dual, tangent);
  return dual;
}

UnpackedDual unpack_dual(const Tensor& tensor) {
  if (!tensor.defined()) return {};
  Tensor found = tangent(tensor);
  if (!found.defined()) return {tensor, Tensor()};
  Suspend plain;
  return {view(tensor, tensor.sizes()), found};
}

}  // namespace kiln::autograd::forward_ad

namespace kiln::autograd {

std::pair<TensorList, TensorList> jvp(const std::function<TensorList(const TensorList&)>& fn, const TensorList& primals,
                                      const TensorList& tangents, bool create_graph) {
  KILN_CHECK(primals.size() == tangents.size(), ValueError, "jvp", "tangents", "expected ", primals.size(),
             " tangents (one per primal), got ", tangents.size());
  forward_ad::DualLevel level;
  TensorList duals;
  for (size_t i = 0; i < primals.size(); ++i) {
    KILN_CHECK(tangents[i].sizes().equals(primals[i].sizes()), ValueError, "jvp", "tangents", "tangent ", i,
               " has sizes ", tangents[i].shape_str(), " but its primal ", primals[i].shape_str());
    duals.push_back(forward_ad::make_dual(primals[i], tangents[i]));
  }
  TensorList outputs = fn(duals), values, jvps;
  for (const Tensor& out : outputs) {
    forward_ad::UnpackedDual u = forward_ad::unpack_dual(out);
    Tensor t = u.tangent.defined() ? u.tangent : zeros_like(out);
    values.push_back(create_graph ? u.primal : u.primal.detach());
    jvps.push_back(create_graph ? t : t.detach());
  }
  return {values, jvps};
}

std::pair<TensorList, TensorList> vjp(const std::function<TensorList(const TensorList&)>& fn, const TensorList& inputs,
                                      const TensorList& v, bool create_graph) {
  TensorList leaves;
  for (const Tensor& x : inputs) {
    Tensor leaf = x.detach();
    leaf.requires_grad_(true);
    leaves.push_back(leaf);
  }
  TensorList outputs;
  {
    EnableGradGuard record(true);
    outputs = fn(leaves);
  }
  KILN_CHECK(v.empty() || v.size() == outputs.size(), ValueError, "vjp", "v", "expected ", outputs.size(),
             " vectors (one per output), got ", v.size());
  TensorList used_outputs, used_v;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!requires_grad(outputs[i])) continue;  // does not depend on the inputs
    used_outputs.push_back(outputs[i]);
    if (!v.empty()) used_v.push_back(v[i]);
  }
  TensorList grads(inputs.size());
  if (!used_outputs.empty())
    grads = grad(used_outputs, leaves, used_v, create_graph, create_graph, /*allow_unused=*/true);
  TensorList values;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!grads[i].defined()) grads[i] = zeros_like(inputs[i]);
  for (const Tensor& out : outputs) values.push_back(create_graph ? out : out.detach());
  return {values, grads};
}

}  // namespace kiln::autograd
