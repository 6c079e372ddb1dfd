#ifndef KILN_OPTIM_INCLUDE_KILN_AMP_H_
#define KILN_OPTIM_INCLUDE_KILN_AMP_H_
// Loss scaling for mixed-precision training, as torch.cuda.amp.GradScaler (PyTorch 1.13), on
// any device: multiply the loss by a scale so small float16 gradients do not flush to zero,
// unscale the gradients before the optimizer reads them, skip the step when any is inf/NaN and
// lower the scale, raise it after growth_interval clean steps.
//   kiln::GradScaler scaler;
//   { kiln::AutocastGuard region(kiln::DeviceType::CUDA); loss = loss_fn(model(x), y); }
//   scaler.scale(loss).backward();
//   scaler.step(opt);   // skipped when a gradient is not finite
//   scaler.update();
// The found-inf check runs on the gradients' device: one host read per step (to decide
// whether to step), none per tensor.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>
#include "kiln/optim.h"
#include "kiln/tensor.h"

namespace kiln {

// GradScaler runs the registry ops _amp_foreach_non_finite_check_and_unscale_ and
// _amp_update_scale_ (ops/amp.yaml; kiln/gen/api/<name>.h), with CPU and CUDA kernels.

struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;   // > 1
  double backoff_factor = 0.5;  // < 1
  int64_t growth_interval = 2000;
  bool enabled = true;  // false: scale() and unscale_() do nothing, step() just steps
};

// GradScaler.state_dict(): what a resumed run needs.
struct GradScalerState {
  double scale = 65536.0;
  double growth_factor = 2.0, backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  int64_t growth_tracker = 0;
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  // outputs * scale (the scale lives on the outputs' device, made there on first use).
  Tensor scale(const Tensor& outputs);
  TensorList scale(const TensorList& outputs);
  // Divides the optimizer's gradients by the scale in place (once per update()), recording
  // whether any is inf/NaN. Call it before reading or clipping gradients.
  void unscale_(optim::Optimizer& optimizer);
  // Unscales if unscale_ was not called, then runs optimizer.step() unless a gradient was
  // inf/NaN. Returns whether the optimizer stepped.
  bool step(optim::Optimizer& optimizer);
  // Adjusts the scale for the next iteration from this iteration's inf checks, or sets it.
  void update(std::optional<double> new_scale = std::nullopt);
  void update(const Tensor& new_scale);  // a 1-element float32 tensor

  double get_scale() const;  // 1.0 when disabled
  double get_growth_factor() const { return options_.growth_factor; }
  void set_growth_factor(double f) { options_.growth_factor = f; }
  double get_backoff_factor() const { return options_.backoff_factor; }
  void set_backoff_factor(double f) { options_.backoff_factor = f; }
  int64_t get_growth_interval() const { return options_.growth_interval; }
  void set_growth_interval(int64_t n) { options_.growth_interval = n; }
  bool is_enabled() const { return options_.enabled; }

  // Empty when disabled (PyTorch's {}); loading an empty state into an enabled scaler raises.
  std::optional<GradScalerState> state_dict() const;
  void load_state_dict(const std::optional<GradScalerState>& state);

 private:
  enum class Stage { Ready, Unscaled, Stepped };
  struct PerOptimizer {
    Stage stage = Stage::Ready;
    std::vector<std::pair<Device, Tensor>> found_inf_per_device;
  };
  void lazy_init(Device device);
  void check_initialized(const char* fn) const;

  GradScalerOptions options_;
  Tensor scale_, growth_tracker_;    // 1-element float32 and int32, on the device
  int64_t init_growth_tracker_ = 0;  // from load_state_dict before the first scale()
  std::unordered_map<const optim::Optimizer*, PerOptimizer> per_optimizer_;
};

}  // namespace kiln
#endif  // KILN_OPTIM_INCLUDE_KILN_AMP_H_
