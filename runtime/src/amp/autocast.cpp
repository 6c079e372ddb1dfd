// Autocast state (per thread, as PyTorch's), the cast the generated op entries apply, and the
// weight cast cache (PyTorch's cached_cast, aten/src/ATen/autocast_mode.cpp).
#include "kiln/autocast.h"

#include <unordered_map>
#include <utility>
#include "kiln/core.h"

namespace kiln {
namespace {

struct State {
  bool enabled[kNumDeviceTypes] = {false, false, false};
  DType dtype[kNumDeviceTypes] = {DType::BFloat16, DType::Float16, DType::Float16};
  bool cache_enabled = true;
  int nesting = 0;
  // Keyed by the leaf's impl; the entry holds the leaf too, so the address is not reused.
  std::unordered_map<const TensorImpl*, std::pair<TensorBase, TensorBase>> cache;
};
thread_local State state;

int index(DeviceType d) { return int(d); }

void sync_flags() {
  uint8_t flags = uint8_t(autocast::detail::t_flags & autocast::detail::kExcluded);
  if (state.enabled[index(DeviceType::CPU)]) flags |= autocast::detail::kCpuOn;
  if (state.enabled[index(DeviceType::CUDA)]) flags |= autocast::detail::kCudaOn;
  autocast::detail::t_flags = flags;
}

void check_dtype(DeviceType device, DType dtype) {
  // The op entries' casts key on kCpuOn/kCudaOn only: a region on another device would do nothing.
  if (device == DeviceType::PrivateUse1)
    throw NotImplementedError("autocast", "device_type",
                              detail::cat("autocast is not supported on ", device_type_name(device)));
  if (device == DeviceType::CPU && dtype != DType::BFloat16)
    throw ValueError("autocast", "dtype", detail::cat("CPU autocast supports bfloat16 only, got ", dtype_name(dtype)));
  if (device == DeviceType::CUDA && dtype != DType::Float16 && dtype != DType::BFloat16)
    throw ValueError("autocast", "dtype",
                     detail::cat("CUDA autocast supports float16 and bfloat16, got ", dtype_name(dtype)));
}

// PyTorch's is_eligible: floating but not float64, on the autocasting device type.
bool eligible(const TensorBase& t, DeviceType device) {
  return t.defined() && t.device().type == device && is_floating(t.dtype()) && t.dtype() != DType::Float64;
}

// PyTorch's promote_type: the lower-precision dtype, widened by each eligible input (float32
// wins; float16 with bfloat16, which PyTorch refuses, widens to float32 too).
DType widen(DType current, const TensorBase& t, DeviceType device) {
  return eligible(t, device) ? promote_types(current, t.dtype()) : current;
}

}  // namespace

AutocastGuard::AutocastGuard(DeviceType device, std::optional<DType> dtype, bool enabled,
                             std::optional<bool> cache_enabled)
    : device_(device),
      prev_enabled_(state.enabled[index(device)]),
      prev_cache_(state.cache_enabled),
      prev_dtype_(state.dtype[index(device)]) {
  const DType want = dtype.value_or(device == DeviceType::CPU ? DType::BFloat16 : DType::Float16);
  check_dtype(device, want);
  state.enabled[index(device)] = enabled;
  state.dtype[index(device)] = want;
  state.cache_enabled = cache_enabled.value_or(state.cache_enabled);
  ++state.nesting;
  sync_flags();
}

AutocastGuard::~AutocastGuard() {
  if (--state.nesting == 0) state.cache.clear();
  state.enabled[index(device_)] = prev_enabled_;
  state.dtype[index(device_)] = prev_dtype_;
  state.cache_enabled = prev_cache_;
  sync_flags();
}

AutocastOffGuard::AutocastOffGuard() {
  for (int d = 0; d < kNumDeviceTypes; ++d) prev_[d] = std::exchange(state.enabled[d], false);
  sync_flags();
}
AutocastOffGuard::~AutocastOffGuard() {
  for (int d = 0; d < kNumDeviceTypes; ++d) state.enabled[d] = prev_[d];
  sync_flags();
}

bool is_autocast_enabled() { return state.enabled[index(DeviceType::CUDA)]; }
bool is_autocast_cpu_enabled() { return state.enabled[index(DeviceType::CPU)]; }

namespace autocast {

bool is_enabled(DeviceType device) { return state.enabled[index(device)]; }
DType lower_precision_dtype(DeviceType device) { return state.dtype[index(device)]; }
bool is_cache_enabled() { return state.cache_enabled; }
void clear_cache() { state.cache.clear(); }
size_t cache_size() { return state.cache.size(); }

std::optional<Target> target_dtype(Policies policies, std::initializer_list<const TensorBase*> tensors,
                                   std::initializer_list<const TensorList*> lists) {
  const TensorBase* first = nullptr;
  for (const TensorBase* t : tensors)
    if (!first && t->defined()) first = t;
  for (const TensorList* list : lists)
    for (const Tensor& t : *list)
      if (!first && t.defined()) first = &t;
  if (!first) return std::nullopt;
  const DeviceType device = first->device().type;
  const CastPolicy policy = device == DeviceType::CPU ? policies.cpu : policies.cuda;
  if (policy == CastPolicy::None || !state.enabled[index(device)]) return std::nullopt;
  const DType lower = state.dtype[index(device)];
  switch (policy) {
    case CastPolicy::LowerPrecision:
      return Target{lower, device};
    case CastPolicy::Float32:
      return Target{DType::Float32, device};
    default: {
      DType widest = lower;
      for (const TensorBase* t : tensors) widest = widen(widest, *t, device);
      for (const TensorList* list : lists)
        for (const Tensor& t : *list) widest = widen(widest, t, device);
      return Target{widest, device};
    }
  }
}

TensorBase cast(const TensorBase& t, const Target& to) {
  if (!eligible(t, to.device) || t.dtype() == to.dtype) return t;
  const Tensor arg(t);
  // A weight (float32 leaf that requires grad) is cast once per region and reused by every op
  // that reads it. Not under no-grad: that cast would have no history for a later backward.
  const bool cacheable = to.dtype == state.dtype[index(to.device)] && t.dtype() == DType::Float32 &&
                         state.cache_enabled && GradMode::is_enabled() && arg.requires_grad() && arg.is_leaf() &&
                         !t.impl()->is_view;
  if (!cacheable) return arg.to(to.dtype);
  auto found = state.cache.find(t.impl());
  if (found != state.cache.end() && found->second.second.dtype() == to.dtype) return found->second.second;
  TensorBase casted = arg.to(to.dtype);
  state.cache[t.impl()] = {t, casted};
  return casted;
}

TensorList cast(const TensorList& tensors, const Target& to) {
  TensorList out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.emplace_back(cast(t, to));
  return out;
}

}  // namespace autocast
}  // namespace kiln
