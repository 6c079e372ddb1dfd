#ifndef KILN_OPTIM_INCLUDE_KILN_OPTIM_H_
#define KILN_OPTIM_INCLUDE_KILN_OPTIM_H_
// Optimizers with PyTorch's update rules (torch.optim.SGD, Adam, AdamW, RMSprop, Adagrad), so a
// training loop ported from Python takes the same steps:
//   kiln::optim::AdamW opt(model_params, {/*lr=*/1e-3});
//   loss.backward(); opt.step(); opt.zero_grad();
// SGD, Adam and AdamW run the fused ops (_fused_sgd_, _fused_adam_, _fused_adamw_): one pass
// over each parameter per step. Their state can be read and loaded, so training resumes exactly:
//   std::vector<optim::ParamState> saved = opt.state();  ...  other.load_state(saved);
// Learning-rate schedulers are in kiln/lr_scheduler.h, gradient clipping in kiln/clip_grad.h.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include "kiln/tensor.h"

namespace kiln::optim {

// One parameter's state, as torch.optim's state[p]: `step` (a float32 0-d tensor on the
// parameter's device, as PyTorch's; undefined before the first step) and the named buffers of
// its optimizer ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "square_avg",
// "grad_avg", "sum"), each of the parameter's shape.
struct ParamState {
  Tensor step;
  std::map<std::string, Tensor> buffers;
};

class Optimizer {
 public:
  // Every parameter must be a real floating leaf that requires grad (kiln::ValueError, or
  // NotImplementedError for another dtype).
  explicit Optimizer(TensorList params, const char* name);
  virtual ~Optimizer() = default;
  // Updates every parameter that has a gradient, without recording autograd history.
  virtual void step() = 0;
  // Drops the gradients (set_to_none, the cheaper default) or fills them with zeros.
  void zero_grad(bool set_to_none = true);
  const TensorList& params() const { return params_; }

  // The learning rate (what schedulers set), and the momentum OneCycleLR cycles: SGD's and
  // RMSprop's momentum, Adam's and AdamW's beta1; none for Adagrad.
  virtual double lr() const = 0;
  virtual void set_lr(double lr) = 0;
  virtual std::optional<double> momentum() const { return std::nullopt; }
  virtual void set_momentum(double /*momentum*/) {}

  // The live state per parameter (params() order): the tensors are the optimizer's own, as
  // torch's state_dict(); clone them to keep a snapshot while training goes on.
  const std::vector<ParamState>& state() const { return state_; }
  // Copies saved state in, onto each parameter's device and dtype (the step stays float32).
  // ValueError for a count or buffer name this optimizer does not keep, ShapeError for a buffer
  // of another shape; on an error nothing was changed.
  void load_state(const std::vector<ParamState>& saved);
  const char* name() const { return name_; }

 protected:
  // The parameters that have a gradient (the ones a step updates), by index.
  std::vector<size_t> with_grad() const;
  // Buffer `key` of parameter i, made with `fill` (zeros of the parameter's layout) when absent.
  Tensor& buffer(size_t i, const std::string& key, double fill = 0);
  // Parameter i's step count advanced by one (made at 0 first).
  Tensor& advance_step(size_t i);
  // The buffer names load_state accepts.
  virtual std::vector<std::string> buffer_names() const = 0;

  TensorList params_;
  std::vector<ParamState> state_;
  const char* name_;
};

struct SGDOptions {
  double lr;
  double momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  bool maximize = false;
};

// p -= lr * d, where d is the gradient plus weight_decay * p, passed through a momentum buffer
// (buf = momentum * buf + (1 - dampening) * d; nesterov uses d + momentum * buf).
class SGD final : public Optimizer {
 public:
  SGD(TensorList params, SGDOptions options);
  void step() override;
  SGDOptions& options() { return options_; }
  double lr() const override { return options_.lr; }
  void set_lr(double lr) override { options_.lr = lr; }
  std::optional<double> momentum() const override { return options_.momentum; }
  void set_momentum(double m) override { options_.momentum = m; }

 private:
  std::vector<std::string> buffer_names() const override { return {"momentum_buffer"}; }
  SGDOptions options_;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;  // Adam: L2 added to the gradient; AdamW: decoupled decay
  bool amsgrad = false;     // keep the running maximum of exp_avg_sq and divide by it
  bool maximize = false;
};

// Adam (Kingma & Ba) with bias correction: m and v are running means of g and g^2,
// p -= lr / (1 - beta1^t) * m / (sqrt(v / (1 - beta2^t)) + eps). Real floating parameters.
class Adam : public Optimizer {
 public:
  Adam(TensorList params, AdamOptions options = {});
  void step() override;
  AdamOptions& options() { return options_; }
  double lr() const override { return options_.lr; }
  void set_lr(double lr) override { options_.lr = lr; }
  std::optional<double> momentum() const override { return options_.beta1; }
  void set_momentum(double beta1) override { options_.beta1 = beta1; }

 protected:
  Adam(TensorList params, AdamOptions options, const char* name, bool decoupled);

 private:
  std::vector<std::string> buffer_names() const override { return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}; }
  AdamOptions options_;
  bool decoupled_;
};

// AdamW (Loshchilov & Hutter): Adam whose weight decay scales the parameter,
// p -= lr * weight_decay * p, instead of joining the gradient. torch.optim.AdamW's defaults
// (weight_decay 0.01).
class AdamW final : public Adam {
 public:
  AdamW(TensorList params, AdamOptions options = AdamW::defaults());
  static AdamOptions defaults() {
    AdamOptions o;
    o.weight_decay = 1e-2;
    return o;
  }
};

struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false;  // divide by the estimated variance, not the raw second moment
  bool maximize = false;
};

// RMSprop: v = alpha * v + (1 - alpha) * g^2; p -= lr * g / (sqrt(v) + eps) (centered subtracts
// the squared running mean of g first; momentum keeps a buffer of those updates).
class RMSprop final : public Optimizer {
 public:
  RMSprop(TensorList params, RMSpropOptions options = {});
  void step() override;
  RMSpropOptions& options() { return options_; }
  double lr() const override { return options_.lr; }
  void set_lr(double lr) override { options_.lr = lr; }
  std::optional<double> momentum() const override { return options_.momentum; }
  void set_momentum(double m) override { options_.momentum = m; }

 private:
  std::vector<std::string> buffer_names() const override { return {"square_avg", "momentum_buffer", "grad_avg"}; }
  RMSpropOptions options_;
};

struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10;
  bool maximize = false;
};

// Adagrad: sum += g^2; p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps).
class Adagrad final : public Optimizer {
 public:
  Adagrad(TensorList params, AdagradOptions options = {});
  void step() override;
  AdagradOptions& options() { return options_; }
  double lr() const override { return options_.lr; }
  void set_lr(double lr) override { options_.lr = lr; }

 private:
  std::vector<std::string> buffer_names() const override { return {"sum"}; }
  AdagradOptions options_;
};

}  // namespace kiln::optim
#endif  // KILN_OPTIM_INCLUDE_KILN_OPTIM_H_
