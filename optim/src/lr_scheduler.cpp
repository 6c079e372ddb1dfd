// torch.optim.lr_scheduler's rules (PyTorch 1.13), each lr computed from the optimizer's current
// one as torch's get_lr() does.
#include "kiln/lr_scheduler.h"
#include <cmath>
#include "kiln/error.h"

namespace kiln::optim {

namespace {
constexpr double kPi = 3.141592653589793;
}

LRScheduler::LRScheduler(Optimizer& optimizer, const char* name)
    : optimizer_(optimizer), base_lr_(optimizer.lr()), name_(name) {}

void LRScheduler::step() {
  ++last_epoch_;
  last_lr_ = next_lr();
  optimizer_.set_lr(last_lr_);
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer, "StepLR"), step_size_(step_size), gamma_(gamma) {
  KILN_CHECK(step_size > 0, ValueError, name_, "step_size", "expected a positive step_size, got ", step_size);
  start();
}

double StepLR::next_lr() {
  const double lr = optimizer_.lr();
  return last_epoch_ == 0 || last_epoch_ % step_size_ != 0 ? lr : lr * gamma_;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer, "CosineAnnealingLR"), T_max_(T_max), eta_min_(eta_min) {
  KILN_CHECK(T_max > 0, ValueError, name_, "T_max", "expected a positive T_max, got ", T_max);
  start();
}

double CosineAnnealingLR::next_lr() {
  const double lr = optimizer_.lr();
  const double t = double(last_epoch_), T = double(T_max_);
  if (last_epoch_ == 0) return lr;
  if ((last_epoch_ - 1 - T_max_) % (2 * T_max_) == 0)  // the bottom of a cycle: climb back
    return lr + (base_lr_ - eta_min_) * (1 - std::cos(kPi / T)) / 2;
  return (1 + std::cos(kPi * t / T)) / (1 + std::cos(kPi * (t - 1) / T)) * (lr - eta_min_) + eta_min_;
}

LinearLR::LinearLR(Optimizer& optimizer, LinearLROptions options)
    : LRScheduler(optimizer, "LinearLR"), options_(options) {
  KILN_CHECK(options.start_factor > 0 && options.start_factor <= 1, ValueError, name_, "start_factor",
             "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.");
  KILN_CHECK(options.end_factor >= 0 && options.end_factor <= 1, ValueError, name_, "end_factor",
             "Ending multiplicative factor expected to be between 0 and 1.");
  KILN_CHECK(options.total_iters > 0, ValueError, name_, "total_iters", "expected a positive total_iters, got ",
             options.total_iters);
  start();
}

double LinearLR::next_lr() {
  const double lr = optimizer_.lr();
  const LinearLROptions& o = options_;
  if (last_epoch_ == 0) return lr * o.start_factor;
  if (last_epoch_ > o.total_iters) return lr;
  const double span = o.end_factor - o.start_factor;
  return lr * (1.0 + span / (double(o.total_iters) * o.start_factor + double(last_epoch_ - 1) * span));
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, OneCycleLROptions options)
    : LRScheduler(optimizer, "OneCycleLR"), options_(std::move(options)) {
  const OneCycleLROptions& o = options_;
  KILN_CHECK(o.total_steps > 0, ValueError, name_, "total_steps", "Expected positive integer total_steps, but got ",
             o.total_steps);
  KILN_CHECK(o.pct_start >= 0 && o.pct_start <= 1, ValueError, name_, "pct_start",
             "Expected float between 0 and 1 pct_start, but got ", o.pct_start);
  KILN_CHECK(o.anneal_strategy == "cos" || o.anneal_strategy == "linear", ValueError, name_, "anneal_strategy",
             "anneal_strategy must by one of 'cos' or 'linear', instead got ", o.anneal_strategy);
  KILN_CHECK(!o.cycle_momentum || optimizer.momentum().has_value(), ValueError, name_, "cycle_momentum",
             "optimizer must support momentum or beta1 with `cycle_momentum` option enabled");
  const double initial = o.max_lr / o.div_factor, min_lr = initial / o.final_div_factor;
  const double steps = double(o.total_steps), warm_end = o.pct_start * steps - 1;
  if (o.three_phase) {
    phases_[0] = {warm_end, initial, o.max_lr, o.max_momentum, o.base_momentum};
    phases_[1] = {2 * o.pct_start * steps - 2, o.max_lr, initial, o.base_momentum, o.max_momentum};
    phases_[2] = {steps - 1, initial, min_lr, o.max_momentum, o.max_momentum};
    n_phases_ = 3;
  } else {
    phases_[0] = {warm_end, initial, o.max_lr, o.max_momentum, o.base_momentum};
    phases_[1] = {steps - 1, o.max_lr, min_lr, o.base_momentum, o.max_momentum};
    n_phases_ = 2;
  }
  if (o.cycle_momentum) optimizer.set_momentum(o.max_momentum);
  start();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy == "linear") return (end - start) * pct + start;
  return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1);
}

double OneCycleLR::next_lr() {
  KILN_CHECK(last_epoch_ <= options_.total_steps, ValueError, name_, "total_steps", "Tried to step ", last_epoch_,
             " times. The specified number of total steps is ", options_.total_steps);
  const double step = double(last_epoch_);
  double start_step = 0;
  for (int i = 0; i < n_phases_; ++i) {
    const Phase& ph = phases_[i];
    if (step <= ph.end_step || i == n_phases_ - 1) {
      const double pct = (step - start_step) / (ph.end_step - start_step);
      if (options_.cycle_momentum) optimizer_.set_momentum(anneal(ph.start_momentum, ph.end_momentum, pct));
      return anneal(ph.start_lr, ph.end_lr, pct);
    }
    start_step = ph.end_step;
  }
  return optimizer_.lr();  // not reached: the last phase always matches
}

}  // namespace kiln::optim
