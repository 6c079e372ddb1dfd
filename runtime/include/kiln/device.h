#ifndef KILN_RUNTIME_INCLUDE_KILN_DEVICE_H_
#define KILN_RUNTIME_INCLUDE_KILN_DEVICE_H_
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

// PrivateUse1 is PyTorch's slot for an out-of-tree backend: its kernels, allocator and hooks
// are registered at run time (kiln/backend_registry.h), not compiled into the op tables.
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, PrivateUse1 = 2 };
inline constexpr int kNumDeviceTypes = 3;

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = 0;
  constexpr Device() = default;
  constexpr Device(DeviceType t, int idx = 0) : type(t), index(int8_t(idx)) {}
  Device(const char* spec) : Device(parse(spec)) {}  // "cpu", "cuda", "cuda:1", "privateuseone:0"
  Device(const std::string& spec) : Device(parse(spec)) {}
  static Device parse(std::string_view spec);
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool is_privateuseone() const { return type == DeviceType::PrivateUse1; }
  std::string str() const;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

inline constexpr Device kCPU{DeviceType::CPU, 0};
// "cpu", "cuda", and PrivateUse1's name: "privateuseone" until a backend renames it.
const char* device_type_name(DeviceType t);

// torch.utils.rename_privateuse1_backend: PrivateUse1 prints and parses as `name` (a lowercase
// identifier that names no other device type); "privateuseone" still parses. Once only:
// renaming again to another name is a ValueError, as in PyTorch.
void rename_privateuse1_backend(std::string_view name);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_DEVICE_H_
