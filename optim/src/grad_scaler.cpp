// GradScaler: torch.cuda.amp.GradScaler (PyTorch 1.13, torch/cuda/amp/grad_scaler.py) over the
// two amp ops, with its messages; the order errors are ValueErrors naming the method.
#include <string>
#include "kiln/amp.h"
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/gen/api/_amp_foreach_non_finite_check_and_unscale_.h"
#include "kiln/gen/api/_amp_update_scale_.h"
#include "kiln/gen/api/mul.h"

namespace kiln {

GradScaler::GradScaler(GradScalerOptions options) : options_(options) {
  if (!options_.enabled) return;
  KILN_CHECK(options_.growth_factor > 1.0, ValueError, "GradScaler", "growth_factor",
             "The growth factor must be > 1.0.");
  KILN_CHECK(options_.backoff_factor < 1.0, ValueError, "GradScaler", "backoff_factor",
             "The backoff factor must be < 1.0.");
}

void GradScaler::lazy_init(Device device) {
  if (scale_.defined()) return;
  scale_ = full({1}, options_.init_scale, TensorOptions(kFloat32, device));
  growth_tracker_ = full({1}, init_growth_tracker_, TensorOptions(kInt32, device));
}

void GradScaler::check_initialized(const char* fn) const {
  KILN_CHECK(scale_.defined(), ValueError, fn, "", "Attempted ", fn,
             " but _scale is None.  This may indicate your script did not use scaler.scale(loss or "
             "outputs) earlier in the iteration.");
}

Tensor GradScaler::scale(const Tensor& outputs) {
  if (!options_.enabled) return outputs;
  lazy_init(outputs.device());
  return mul(outputs, scale_.device() == outputs.device() ? scale_ : scale_.to(outputs.device()));
}

TensorList GradScaler::scale(const TensorList& outputs) {
  TensorList out;
  out.reserve(outputs.size());
  for (const Tensor& t : outputs) out.push_back(scale(t));
  return out;
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!options_.enabled) return;
  check_initialized("unscale_");
  PerOptimizer& state = per_optimizer_[&optimizer];
  KILN_CHECK(state.stage != Stage::Unscaled, ValueError, "GradScaler.unscale_", "optimizer",
             "unscale_() has already been called on this optimizer since the last update().");
  KILN_CHECK(state.stage != Stage::Stepped, ValueError, "GradScaler.unscale_", "optimizer",
             "unscale_() is being called after step().");
  // The inverse in double, rounded to float once, as PyTorch's scale.double().reciprocal().float().
  const Tensor inv_scale = (1.0 / scale_.to(kFloat64)).to(kFloat32);
  // One call per device: PyTorch groups by device and dtype only to launch fewer kernels.
  std::vector<std::pair<Device, TensorList>> grads;
  for (const Tensor& p : optimizer.params()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    KILN_CHECK(g.dtype() != kFloat16, ValueError, "GradScaler.unscale_", "optimizer",
               "Attempting to unscale FP16 gradients.");
    auto it = grads.begin();
    while (it != grads.end() && !(it->first == g.device())) ++it;
    if (it == grads.end()) it = grads.insert(grads.end(), {g.device(), {}});
    it->second.push_back(g);
  }
  for (auto& [device, list] : grads) {
    Tensor found_inf = zeros({1}, TensorOptions(kFloat32, device));
    _amp_foreach_non_finite_check_and_unscale_(list, found_inf,
                                               inv_scale.device() == device ? inv_scale : inv_scale.to(device));
    state.found_inf_per_device.emplace_back(device, found_inf);
  }
  state.stage = Stage::Unscaled;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!options_.enabled) {
    optimizer.step();
    return true;
  }
  check_initialized("step");
  PerOptimizer& state = per_optimizer_[&optimizer];
  KILN_CHECK(state.stage != Stage::Stepped, ValueError, "GradScaler.step", "optimizer",
             "step() has already been called since the last update().");
  if (state.stage == Stage::Ready) unscale_(optimizer);
  PerOptimizer& checked = per_optimizer_[&optimizer];
  KILN_CHECK(!checked.found_inf_per_device.empty(), ValueError, "GradScaler.step", "optimizer",
             "No inf checks were recorded for this optimizer.");
  // The one host read per step: whether any device found an inf or NaN.
  double found = 0;
  for (const auto& [device, found_inf] : checked.found_inf_per_device) found += found_inf.item<double>();
  checked.stage = Stage::Stepped;
  if (found != 0) return false;
  optimizer.step();
  return true;
}

void GradScaler::update(std::optional<double> new_scale) {
  if (!options_.enabled) return;
  check_initialized("update");
  if (new_scale) {
    scale_.fill_(*new_scale);
  } else {
    Tensor combined;
    for (const auto& [opt, state] : per_optimizer_)
      for (const auto& [device, found_inf] : state.found_inf_per_device) {
        Tensor here = found_inf.device() == scale_.device() ? found_inf : found_inf.to(scale_.device());
        combined = combined.defined() ? combined + here : here;
      }
    KILN_CHECK(combined.defined(), ValueError, "GradScaler.update", "", "No inf checks were recorded prior to update.");
    _amp_update_scale_(scale_, growth_tracker_, combined, options_.growth_factor, options_.backoff_factor,
                       options_.growth_interval);
  }
  per_optimizer_.clear();
}

void GradScaler::update(const Tensor& new_scale) {
  if (!options_.enabled) return;
  check_initialized("update");
  KILN_CHECK(
      new_scale.defined() && new_scale.numel() == 1 && new_scale.dtype() == kFloat32 && !new_scale.requires_grad(),
      ValueError, "GradScaler.update", "new_scale",
      "new_scale should be a float or a 1-element torch.cuda.FloatTensor with requires_grad=False.");
  scale_.copy_(new_scale.reshape({1}));
  per_optimizer_.clear();
}

double GradScaler::get_scale() const {
  if (!options_.enabled) return 1.0;
  return scale_.defined() ? scale_.item<double>() : options_.init_scale;
}

std::optional<GradScalerState> GradScaler::state_dict() const {
  if (!options_.enabled) return std::nullopt;
  GradScalerState s;
  s.scale = get_scale();
  s.growth_factor = options_.growth_factor;
  s.backoff_factor = options_.backoff_factor;
  s.growth_interval = options_.growth_interval;
  s.growth_tracker = growth_tracker_.defined() ? growth_tracker_.item<int64_t>() : init_growth_tracker_;
  return s;
}

void GradScaler::load_state_dict(const std::optional<GradScalerState>& state) {
  if (!options_.enabled) return;
  KILN_CHECK(state.has_value(), ValueError, "GradScaler.load_state_dict", "state",
             "The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler.");
  options_.init_scale = state->scale;
  options_.growth_factor = state->growth_factor;
  options_.backoff_factor = state->backoff_factor;
  options_.growth_interval = state->growth_interval;
  init_growth_tracker_ = state->growth_tracker;
  if (scale_.defined()) scale_.fill_(state->scale);
  if (growth_tracker_.defined()) growth_tracker_.fill_(state->growth_tracker);
}

}  // namespace kiln
