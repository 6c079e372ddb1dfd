#ifndef KILN_BENCH_KILN_MLP_H_
#define KILN_BENCH_KILN_MLP_H_
// kiln's side of the MLP training-step case (784-256-256-10, relu, cross-entropy, SGD), shared
// by the CPU bench (cases_training.cpp, beside libtorch's) and the CUDA bench (cuda/).
#include <kiln/kiln.h>
#include <kiln/optim.h>

#include <memory>
#include <vector>

namespace kiln_bench {

struct KilnMlp {
  std::vector<kiln::Tensor> params;  // weight, bias of each of the three layers
  std::unique_ptr<kiln::optim::SGD> opt;
  kiln::Tensor x, y;
  void step() {
    kiln::Tensor h = kiln::linear(x, params[0], params[1]).relu();
    h = kiln::linear(h, params[2], params[3]).relu();
    kiln::Tensor loss = kiln::cross_entropy(kiln::linear(h, params[4], params[5]), y);
    opt->zero_grad(true);
    loss.backward();
    opt->step();
  }
};

}  // namespace kiln_bench
#endif  // KILN_BENCH_KILN_MLP_H_
