#ifndef KILN_RUNTIME_INCLUDE_KILN_OPTIM_H_
#define KILN_RUNTIME_INCLUDE_KILN_OPTIM_H_
// Optimizers with PyTorch's update rules (torch.optim.SGD, torch.optim.Adam), so a training loop
// ported from Python takes the same steps:
//   kiln::optim::Adam opt(model_params, {/*lr=*/1e-3});
//   loss.backward(); opt.step(); opt.zero_grad();
#include <cstdint>
#include <vector>
#include "kiln/tensor.h"

namespace kiln::optim {

class Optimizer {
 public:
  // Every parameter must be a leaf that requires grad (kiln::ValueError otherwise).
  explicit Optimizer(TensorList params, const char* name);
  virtual ~Optimizer() = default;
  // Updates every parameter that has a gradient, without recording autograd history.
  virtual void step() = 0;
  // Drops the gradients (set_to_none, the cheaper default) or fills them with zeros.
  void zero_grad(bool set_to_none = true);
  const TensorList& params() const { return params_; }

 protected:
  TensorList params_;
};

struct SGDOptions {
  double lr;
  double momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
};

// p -= lr * d, where d is the gradient plus weight_decay * p, passed through a momentum buffer
// (buf = momentum * buf + (1 - dampening) * d; nesterov uses d + momentum * buf).
class SGD final : public Optimizer {
 public:
  SGD(TensorList params, SGDOptions options);
  void step() override;
  SGDOptions& options() { return options_; }  // e.g. to schedule lr

 private:
  SGDOptions options_;
  TensorList momentum_buffers_;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;  // L2 added to the gradient, as torch.optim.Adam
};

// Adam (Kingma & Ba) with bias correction: m and v are running means of g and g^2,
// p -= lr / (1 - beta1^t) * m / (sqrt(v / (1 - beta2^t)) + eps). Real floating parameters.
class Adam final : public Optimizer {
 public:
  Adam(TensorList params, AdamOptions options = {});
  void step() override;
  AdamOptions& options() { return options_; }

 private:
  AdamOptions options_;
  TensorList exp_avg_, exp_avg_sq_;
  std::vector<int64_t> steps_;  // per parameter: one without a gradient does not advance
};

}  // namespace kiln::optim
#endif  // KILN_RUNTIME_INCLUDE_KILN_OPTIM_H_
