#ifndef KILN_RUNTIME_INCLUDE_KILN_DEVICE_H_
#define KILN_RUNTIME_INCLUDE_KILN_DEVICE_H_
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
inline constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = 0;
  constexpr Device() = default;
  constexpr Device(DeviceType t, int idx = 0) : type(t), index(int8_t(idx)) {}
  Device(const char* spec) : Device(parse(spec)) {}  // "cpu", "cuda", "cuda:1"
  Device(const std::string& spec) : Device(parse(spec)) {}
  static Device parse(std::string_view spec);
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  std::string str() const;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

inline constexpr Device kCPU{DeviceType::CPU, 0};
const char* device_type_name(DeviceType t);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_DEVICE_H_
