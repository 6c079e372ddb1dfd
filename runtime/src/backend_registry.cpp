// The kernels out-of-tree backends register at run time (kiln/backend_registry.h). Only
// kernel_for's slow path reads them (an op whose constant table has no kernel for the device),
// so a plain mutex over a map is enough; the compiled-in CPU and CUDA tables never come here.
#include "kiln/backend_registry.h"

#include <cxxabi.h>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include "kiln/error.h"
#include "kiln/value.h"  // kiln::ops(): the names an op may be registered under

namespace kiln {
namespace {

struct Registered {
  detail::ErasedKernel fn;
  const std::type_info* type;
};
using Key = std::tuple<std::string, DeviceType, Layout>;

struct Registry {
  std::mutex mu;
  std::map<Key, Registered, std::less<>> kernels;
  // An op's kernel type as its entry declared it, learnt at its first run-time lookup: later
  // registrations are checked against it at once.
  std::map<std::string, const std::type_info*, std::less<>> op_types;
};
// Never destroyed: a backend may be called from static destructors.
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

std::string type_name(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> s(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && s ? std::string(s.get()) : std::string(t.name());
}

std::string device_key(DeviceType type, Layout layout) {
  return (layout == Layout::Strided ? std::string() : std::string(layout_name(layout)) + " ") + device_type_name(type);
}

[[noreturn]] void throw_type_mismatch(std::string_view op, DeviceType type, Layout layout,
                                      const std::type_info& registered, const std::type_info& expected) {
  KILN_FAIL(ValueError, std::string(op), "kernel", "the ", device_key(type, layout), " kernel registered for ", op,
            " has type ", type_name(registered), " but the op's kernels have type ", type_name(expected));
}

bool known_op(std::string_view op) {
  for (const OpSchema& s : ops())
    if (s.name == op) return true;
  return false;
}

}  // namespace

namespace detail {

void register_erased_kernel(std::string_view op, DeviceType type, Layout layout, ErasedKernel fn,
                            const std::type_info& fn_type) {
  const std::string name(op);
  KILN_CHECK(fn != nullptr, ValueError, name, "kernel", "a null kernel for ", device_key(type, layout));
  KILN_CHECK(type != DeviceType::CPU && type != DeviceType::CUDA, ValueError, name, "device", "kernels for ",
             device_type_name(type),
             " are compiled into the op's table; register an out-of-tree backend as PrivateUse1");
  KILN_CHECK(int(type) >= 0 && int(type) < kNumDeviceTypes, ValueError, name, "device", "unknown device type ",
             int(type));
  KILN_CHECK(known_op(op), ValueError, name, "op", "no op is named '", op,
             "' (use the registry's name with its overload, e.g. 'add.Tensor')");
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  if (auto it = r.op_types.find(op); it != r.op_types.end() && *it->second != fn_type)
    throw_type_mismatch(op, type, layout, fn_type, *it->second);
  // One type per op: another layout's registration already says what the op's kernels are.
  for (const auto& [key, k] : r.kernels)
    if (std::get<0>(key) == op && *k.type != fn_type) throw_type_mismatch(op, type, layout, fn_type, *k.type);
  const bool inserted = r.kernels.emplace(Key{name, type, layout}, Registered{fn, &fn_type}).second;
  KILN_CHECK(inserted, ValueError, name, "device", "a ", device_key(type, layout), " kernel for ", op,
             " is registered already");
}

ErasedKernel registered_kernel(const char* op, Device device, Layout layout, const std::type_info& type) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  if (r.op_types.find(std::string_view(op)) == r.op_types.end()) r.op_types.emplace(op, &type);
  const auto it = r.kernels.find(std::make_tuple(std::string_view(op), device.type, layout));
  if (it == r.kernels.end()) return nullptr;
  if (*it->second.type != type) throw_type_mismatch(op, device.type, layout, *it->second.type, type);
  return it->second.fn;
}

}  // namespace detail

std::vector<std::string> registered_kernel_keys(std::string_view op) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> keys;
  for (const auto& [key, k] : r.kernels)
    if (std::get<0>(key) == op) keys.push_back(device_key(std::get<1>(key), std::get<2>(key)));
  return keys;
}

}  // namespace kiln
