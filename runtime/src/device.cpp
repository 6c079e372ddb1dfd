// Device names: "cpu", "cuda", "cuda:1" (torch.device spelling).
#include "kiln/device.h"

#include <cctype>
#include "kiln/error.h"

namespace kiln {

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
  }
  return "unknown";
}

Device Device::parse(std::string_view spec) {
  auto bad = [&](const char* why) {
    KILN_FAIL(ValueError, "Device", "spec", "expected a device like 'cpu', 'cuda' or 'cuda:1', got '", spec, "' (",
              why, ")");
  };
  std::string_view type = spec, index;
  if (size_t colon = spec.find(':'); colon != std::string_view::npos) {
    type = spec.substr(0, colon);
    index = spec.substr(colon + 1);
    if (index.empty()) bad("missing index after ':'");
  }
  DeviceType t;
  if (type == "cpu") t = DeviceType::CPU;
  else if (type == "cuda") t = DeviceType::CUDA;
  else bad("unknown device type");
  int idx = 0;
  for (char c : index) {
    if (!std::isdigit(static_cast<unsigned char>(c))) bad("index is not a non-negative integer");
    idx = idx * 10 + (c - '0');
    if (idx > 127) bad("index too large");
  }
  if (t == DeviceType::CPU && idx != 0) bad("the cpu device has only index 0");
  return Device(t, idx);
}

std::string Device::str() const {
  if (type == DeviceType::CPU) return "cpu";
  return std::string(device_type_name(type)) + ":" + std::to_string(int(index));
}

}  // namespace kiln
