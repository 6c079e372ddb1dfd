#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORWARD_GRAD_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORWARD_GRAD_H_
// Forward-mode AD as a generated op entry sees it, over TensorBase: whether an input carries a
// tangent at the live dual level, reading one, and giving an output its tangent. Users reach the
// same machinery through kiln/autograd/forward_ad.h (make_dual, unpack_dual, jvp).
//
// A tangent lives in the tensor's AutogradMeta beside the level it was set at; leaving that level
// makes it invisible (and it is dropped the next time anything reads it), as PyTorch forgets a
// level's tangents when its dual_level context exits.
#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>
#include "kiln/autograd/graph.h"
#include "kiln/tensor_base.h"

namespace kiln::autograd::forward_ad {

// True when a dual level is live and this thread is not inside a JVP formula (Suspend).
bool level_live();
// True when a dual level is live, this thread is not inside a JVP formula (Suspend), and one
// of `tensors` has a tangent. One relaxed load when no level is live.
bool any_dual(std::initializer_list<const TensorBase*> tensors);
bool any_dual(const std::vector<TensorBase>& tensors);
template <typename List>
bool any_dual(const List& tensors) {
  return level_live() && any_dual(std::vector<TensorBase>(tensors.begin(), tensors.end()));
}

// `t`'s tangent at the live level (undefined when it has none).
TensorBase tangent(const TensorBase& t);
// ... or zeros shaped like `t` (the tangent of an input that has none, for `jvp:` formulas).
TensorBase tangent_or_zeros(const TensorBase& t);
std::vector<TensorBase> tangents_or_zeros(const std::vector<TensorBase>& ts);
template <typename List>
List tangents_or_zeros(const List& ts) {
  std::vector<TensorBase> t = tangents_or_zeros(std::vector<TensorBase>(ts.begin(), ts.end()));
  return List(t.begin(), t.end());
}

// While alive, ops compute no tangents on this thread: a JVP formula's own ops (and a
// composite's inner calls, which its formula replaces) are plain computations over primals
// and tangents. Reverse-mode recording is untouched, so a tangent keeps its history.
class Suspend {
 public:
  Suspend();
  ~Suspend();
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;
};

// tangent += part (tangent undefined: part), for the per-input terms of a derived JVP.
void add_to(TensorBase& tangent, const TensorBase& part);

// Gives an op's output its tangent: broadcast to the output's shape, cast to its dtype (the real
// part for a real output), and copied when it would share memory with one of `inputs` (an input's
// tangent returned as is by `grad`-like formulas), so writing one tangent in place never changes
// another. An undefined tangent leaves the output without one. `is_view`: the output is a view of
// its input and its tangent the same view of the input's tangent, which is kept.
void set_tangent(const TensorBase& output, TensorBase tangent, std::initializer_list<const TensorBase*> inputs,
                 bool is_view = false);

// After an in-place op wrote `self`: its new tangent. A tangent self already has is overwritten
// in place (a view's tangent is a view of its base's, so the base's tangent sees the change); a
// view without one first gives its base a zero tangent, of which its own is the same view.
void write_tangent(const TensorBase& self, const TensorBase& tangent);

// The tangents of `outputs` from a backward formula alone: J t = d/dg <J^T g, t> (one backward
// pass over the formula, which is linear in g), for the ops no `jvp:` formula covers. `vjp`
// returns one gradient per entry of `inputs` (finished to the input's shape and dtype) from one
// gradient per output; a null output (an index, a mask) gets none.
using VjpFn = std::function<TensorBaseList(const TensorBaseList& grads)>;
TensorBaseList tangents_by_vjp(std::initializer_list<const TensorBase*> outputs,
                               std::initializer_list<const TensorBase*> inputs, const VjpFn& vjp);

// An op with dual inputs and no way to push tangents through (NotImplementedError naming it).
[[noreturn]] void not_implemented(const char* op);
// out= with a dual input: PyTorch's message (the out tensor would not get the tangent).
void check_out(const char* op, std::initializer_list<const TensorBase*> inputs);

}  // namespace kiln::autograd::forward_ad
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORWARD_GRAD_H_
