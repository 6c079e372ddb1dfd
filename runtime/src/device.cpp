// Device names: "cpu", "cuda", "cuda:1", "privateuseone:0" or its backend's name (torch.device spelling).
#include "kiln/device.h"

#include <atomic>
#include <cctype>
#include <mutex>
#include "kiln/error.h"

namespace kiln {
namespace {
constexpr const char* kPrivateUse1 = "privateuseone";
// Set once by rename_privateuse1_backend (a leaked copy: names handed out stay valid) and read
// by every print, so an atomic pointer rather than a lock.
std::atomic<const char*> g_privateuse1_name{kPrivateUse1};
}  // namespace

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
    case DeviceType::PrivateUse1: return g_privateuse1_name.load(std::memory_order_acquire);
  }
  return "unknown";
}

void rename_privateuse1_backend(std::string_view name) {
  const char* op = "rename_privateuse1_backend";
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; };
  bool identifier = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) identifier = identifier && lower_or_digit(c);
  KILN_CHECK(identifier, ValueError, op, "backend_name", "expected a lowercase identifier, got '", name, "'");
  KILN_CHECK(name != "cpu" && name != "cuda", ValueError, op, "backend_name", "'", name,
             "' already names a device type");
  static std::mutex mu;
  const std::lock_guard<std::mutex> lock(mu);
  const std::string_view current = g_privateuse1_name.load(std::memory_order_acquire);
  if (current == name) return;
  KILN_CHECK(current == kPrivateUse1, ValueError, op, "backend_name", "privateuseone is already renamed to '",
             current, "'; it cannot be renamed to '", name, "'");
  g_privateuse1_name.store((new std::string(name))->c_str(), std::memory_order_release);
}

Device Device::parse(std::string_view spec) {
  auto bad = [&](const char* why) {
    KILN_FAIL(ValueError, "Device", "spec", "expected a device like 'cpu', 'cuda', 'cuda:1' or '",
              device_type_name(DeviceType::PrivateUse1), ":0', got '", spec, "' (", why, ")");
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
  else if (type == kPrivateUse1 || type == device_type_name(DeviceType::PrivateUse1)) t = DeviceType::PrivateUse1;
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
