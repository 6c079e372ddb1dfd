#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FUNCTION_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FUNCTION_H_
// Custom autograd functions, as libtorch's torch::autograd::Function<T>:
//
//   struct Cube : kiln::autograd::Function<Cube> {
//     static Tensor forward(AutogradContext* ctx, Tensor x) {
//       ctx->save_for_backward({x});
//       return x * x * x;
//     }
//     static TensorList backward(AutogradContext* ctx, TensorList grad_outputs) {
//       Tensor x = ctx->get_saved_variables()[0];
//       return {grad_outputs[0] * 3 * x * x};
//     }
//   };
//   Tensor y = Cube::apply(x);
//
// forward runs with grad mode off and returns a Tensor or a TensorList. Its arguments after ctx
// are forwarded as given: a Tensor (or std::optional<Tensor>) is one input, a TensorList one
// input per element, anything else a non-tensor input. backward gets one gradient per forward
// output and returns one per forward input, tensor or not (undefined for non-tensors and for
// inputs it does not differentiate). When grad mode is on and some tensor input requires grad,
// the outputs get one node whose backward calls T::backward with grad mode as the engine sets
// it: written with kiln ops, it is recorded under create_graph, so double backward works.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
#include "kiln/autograd/graph.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln::autograd {

namespace detail {
class CustomFunctionNode;
class CustomFunctionCall;
}  // namespace detail

// What forward and backward share (libtorch's AutogradContext).
class AutogradContext {
 public:
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  // Forward: tensors backward will read. They are version-checked: an in-place change after
  // forward makes get_saved_variables raise. A second call replaces the first's list.
  void save_for_backward(TensorList to_save);
  // Backward: the saved tensors (an output of this function comes back with its history, an
  // input as it was). Raises after the graph was freed (a second backward without retain_graph).
  TensorList get_saved_variables() const;
  // Forward: these inputs were modified in place and are returned as outputs. Their history
  // moves onto this function's node (and their version is bumped if forward did not bump it, as
  // a write through data pointers would not). A leaf that requires grad cannot be dirtied.
  void mark_dirty(const TensorList& inputs);
  // Forward: these outputs get no history (an index, a mask); backward receives zeros for them
  // (undefined without materialized gradients).
  void mark_non_differentiable(const TensorList& outputs);
  // Default true: backward receives zeros, not undefined tensors, for outputs that got no
  // gradient. False passes them on undefined.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // Whether forward argument `index` (counting every argument after ctx, tensor or not, as
  // backward's result does; PyTorch's Python ctx.needs_input_grad) needs a gradient: a tensor
  // that requires grad while this call records. Valid in forward and backward.
  bool needs_input_grad(size_t index) const;

  // Anything else backward needs: scalars, sizes, strings (libtorch's saved_data). Tensors
  // belong in save_for_backward, which checks versions and does not keep the node alive.
  std::unordered_map<std::string, Value> saved_data;

 private:
  friend class detail::CustomFunctionNode;
  friend class detail::CustomFunctionCall;
  TensorList to_save_;                // until forward returns
  std::vector<SavedVariable> saved_;  // from then on
  std::unordered_set<const TensorImpl*> dirty_, non_differentiable_;
  std::vector<bool> needs_input_grad_;  // per forward argument
  bool materialize_grads_ = true;
  bool has_freed_buffers_ = false;
  const Node* node_ = nullptr;  // the node owning this context, while it records
};

namespace detail {

using CustomBackward = std::function<TensorList(AutogradContext*, TensorList)>;

// One call of a custom function, for Function<T>::apply and checkpoint: collect the inputs,
// begin (which decides whether to record), run forward under no-grad with ctx(), finish with
// the outputs.
class CustomFunctionCall {
 public:
  CustomFunctionCall(const char* name, CustomBackward backward);
  ~CustomFunctionCall();
  CustomFunctionCall(const CustomFunctionCall&) = delete;
  CustomFunctionCall& operator=(const CustomFunctionCall&) = delete;

  void add_input(const Tensor& t);  // undefined: an input that gets no gradient
  void add_input(const std::optional<Tensor>& t) { add_input(t ? *t : Tensor()); }
  void add_input(const TensorList& ts) {
    for (const Tensor& t : ts) add_input(t);
  }
  void add_non_tensor_input();
  // Records when grad mode is on and a tensor input requires grad; connects the node's edges.
  void begin();
  bool recording() const;
  AutogradContext* ctx();
  // Attaches the node to forward's outputs (returned inputs come back as aliases) and saves
  // what ctx->save_for_backward named.
  TensorList finish(TensorList outputs);
  Tensor finish(Tensor output) { return finish(TensorList{std::move(output)})[0]; }

 private:
  Ref<CustomFunctionNode> node_;
};

// A demangled type name, without "(anonymous namespace)::".
std::string demangled_name(const std::type_info& type);

template <typename T, typename = void>
struct has_static_name : std::false_type {};
template <typename T>
struct has_static_name<T, std::void_t<decltype(std::string(T::name()))>> : std::true_type {};

template <typename T>
const char* custom_function_name() {
  static const std::string name = [] {
    if constexpr (has_static_name<T>::value) return std::string(T::name());
    else return demangled_name(typeid(T));
  }();
  return name.c_str();
}

template <typename A>
void add_argument(CustomFunctionCall& call, const A& arg) {
  using D = std::decay_t<A>;
  if constexpr (std::is_base_of_v<TensorBase, D>) call.add_input(Tensor(arg));
  else if constexpr (std::is_same_v<D, TensorList> || std::is_same_v<D, std::optional<Tensor>>) call.add_input(arg);
  else call.add_non_tensor_input();
}

}  // namespace detail

// Derive MyFn from Function<MyFn>, define static forward(AutogradContext*, ...) and static
// backward(AutogradContext*, TensorList), and call MyFn::apply(...). A static `name()` names the
// node (its error messages and grad_fn()->name()); else the type's name does.
template <class T>
struct Function {
  template <typename... Args>
  static auto apply(Args&&... args) {
    detail::CustomFunctionCall call(detail::custom_function_name<T>(), [](AutogradContext* ctx, TensorList grads) {
      return TensorList(T::backward(ctx, std::move(grads)));
    });
    (detail::add_argument(call, args), ...);
    call.begin();
    using Result = std::decay_t<decltype(T::forward(call.ctx(), std::forward<Args>(args)...))>;
    static_assert(std::is_base_of_v<TensorBase, Result> || std::is_same_v<Result, TensorList>,
                  "Function<T>: T::forward must return a Tensor or a TensorList");
    std::optional<Result> outputs;
    {
      NoGradGuard no_grad;
      outputs.emplace(T::forward(call.ctx(), std::forward<Args>(args)...));
    }
    if constexpr (std::is_same_v<Result, TensorList>) return call.finish(std::move(*outputs));
    else return call.finish(Tensor(std::move(*outputs)));
  }
};

}  // namespace kiln::autograd
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FUNCTION_H_
