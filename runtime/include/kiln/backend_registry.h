#ifndef KILN_RUNTIME_INCLUDE_KILN_BACKEND_REGISTRY_H_
#define KILN_RUNTIME_INCLUDE_KILN_BACKEND_REGISTRY_H_
// An out-of-tree backend (PyTorch's PrivateUse1): kernels registered at run time per (op,
// device type, layout), found by kernel_for (kiln/dispatch.h) when the op's constant table has
// none. A backend also registers its allocator (register_allocator, kiln/storage.h) and device
// hooks (register_device_hooks, kiln/device_hooks.h: copy at least, for .to() both ways), and
// may rename the device (rename_privateuse1_backend, kiln/device.h). tests/test_private_backend.cpp
// is a whole backend.
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>
#include "kiln/device.h"
#include "kiln/dispatch.h"
#include "kiln/layout.h"

namespace kiln {

namespace detail {
void register_erased_kernel(std::string_view op, DeviceType type, Layout layout, ErasedKernel fn,
                            const std::type_info& fn_type);
}  // namespace detail

// Registers `fn` as `op`'s kernel ("add.Tensor", "sum.dim_IntList", "mm": the name ops/*.yaml
// gives it) for (type, layout). Fn must be the op's kernel type: PointwiseKernel for a
// pointwise op, the signature of its kiln/gen/kernels/cpu/<name>.h declaration for the others.
// ValueError naming the op when the op is unknown, the device type is CPU or CUDA (their tables
// are compiled in), the key is registered already, or Fn is not the op's kernel type (found at
// the op's first call on the device, where the op's type is known).
template <typename Fn>
void register_kernel(std::string_view op, DeviceType type, Layout layout, Fn fn) {
  static_assert(std::is_pointer_v<Fn> && std::is_function_v<std::remove_pointer_t<Fn>>,
                "register_kernel takes a function pointer of the op's kernel type");
  detail::register_erased_kernel(op, type, layout, reinterpret_cast<detail::ErasedKernel>(fn), typeid(Fn));
}
template <typename Fn>
void register_kernel(std::string_view op, DeviceType type, Fn fn) {
  register_kernel(op, type, Layout::Strided, fn);
}

// The same with the op's tag from kiln/gen/op_kernels.h: `fn`'s type is checked at compile time
// (register_kernel<op_kernels::mm>(DeviceType::PrivateUse1, &my_mm)), and a composite op, which
// has no kernel table to serve, has no tag.
template <typename Op>
void register_kernel(DeviceType type, Layout layout, typename Op::Kernel fn) {
  detail::register_erased_kernel(Op::kName, type, layout, reinterpret_cast<detail::ErasedKernel>(fn),
                                 typeid(typename Op::Kernel));
}
template <typename Op>
void register_kernel(DeviceType type, typename Op::Kernel fn) {
  register_kernel<Op>(type, Layout::Strided, fn);
}

// "privateuseone" (or its new name), with " sparse_coo" etc. for other layouts, for each
// run-time kernel of `op`: what the missing-kernel error lists besides the compiled-in tables.
std::vector<std::string> registered_kernel_keys(std::string_view op);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_BACKEND_REGISTRY_H_
