#ifndef KILN_OPTIM_INCLUDE_KILN_LR_SCHEDULER_H_
#define KILN_OPTIM_INCLUDE_KILN_LR_SCHEDULER_H_
// Learning-rate schedulers with torch.optim.lr_scheduler's rules and step order: constructing
// one sets the optimizer's lr for step 0, and each step() after an optimizer step moves to the
// next epoch (or batch, for OneCycleLR):
//   optim::AdamW opt(params, {1e-3});
//   optim::LinearLR warmup(opt, {/*start_factor=*/0.1, /*end_factor=*/1.0, /*total_iters=*/100});
//   for (...) { loss.backward(); opt.step(); opt.zero_grad(); warmup.step(); }
// The rules are PyTorch's recursive ones (each lr from the previous), so a schedule matches
// torch's to the last bit where the arithmetic is the same.
#include <cstdint>
#include <string>
#include "kiln/optim.h"

namespace kiln::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  void step();                                     // the next epoch's lr into the optimizer
  double get_last_lr() const { return last_lr_; }  // the lr set by the latest step
  int64_t last_epoch() const { return last_epoch_; }

 protected:
  LRScheduler(Optimizer& optimizer, const char* name);
  // Called by the constructor of the concrete scheduler once its fields are set (step 0).
  void start() { step(); }
  // The lr for last_epoch(), from the optimizer's current lr (PyTorch's chainable get_lr()).
  virtual double next_lr() = 0;

  Optimizer& optimizer_;
  double base_lr_;  // the optimizer's lr when the scheduler was made (torch's initial_lr)
  int64_t last_epoch_ = -1;
  double last_lr_ = 0;
  const char* name_;
};

// lr *= gamma every step_size epochs.
class StepLR final : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 private:
  double next_lr() override;
  int64_t step_size_;
  double gamma_;
};

// Cosine annealing from the initial lr to eta_min over T_max epochs (and back up after, as torch).
class CosineAnnealingLR final : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 private:
  double next_lr() override;
  int64_t T_max_;
  double eta_min_;
};

struct LinearLROptions {
  double start_factor = 1.0 / 3, end_factor = 1.0;
  int64_t total_iters = 5;
};

// Warm-up: lr goes linearly from start_factor * lr to end_factor * lr over total_iters steps.
class LinearLR final : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, LinearLROptions options = {});

 private:
  double next_lr() override;
  LinearLROptions options_;
};

struct OneCycleLROptions {
  double max_lr;
  int64_t total_steps;  // torch's epochs * steps_per_epoch, given as their product
  double pct_start = 0.3;
  std::string anneal_strategy = "cos";  // or "linear"
  bool cycle_momentum = true;
  double base_momentum = 0.85, max_momentum = 0.95;
  double div_factor = 25, final_div_factor = 1e4;
  bool three_phase = false;
};

// The 1cycle policy (Smith & Topin), stepped after every batch: lr rises from max_lr /
// div_factor to max_lr over pct_start of the steps, then anneals to initial / final_div_factor
// (three_phase: back to the initial lr first); momentum (Adam's beta1) moves the other way.
class OneCycleLR final : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, OneCycleLROptions options);

 private:
  struct Phase {
    double end_step, start_lr, end_lr, start_momentum, end_momentum;
  };
  double next_lr() override;
  double anneal(double start, double end, double pct) const;
  OneCycleLROptions options_;
  Phase phases_[3];
  int n_phases_;
};

}  // namespace kiln::optim
#endif  // KILN_OPTIM_INCLUDE_KILN_LR_SCHEDULER_H_
