// Trains a small CNN on the UCI handwritten digits (the MLP demo's data, as [1, 8, 8] images):
// conv3x3(1->16) - batch_norm - relu - max_pool2 - conv3x3(16->32) - batch_norm - relu - max_pool2
// - dropout(0.25) - linear(128->10), with Adam. Prints the loss and time per epoch and the
// held-out accuracy (batch_norm on its running statistics, dropout off), and exits non-zero
// below 98%.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
#include "digits.h"
#include "kiln/kiln.h"
#include "kiln/optim.h"

using namespace kiln;
using namespace kiln::digits;

namespace {

constexpr int kCnnEpochs = 30;
constexpr double kCnnTarget = 0.98;

// Like torch.nn.Conv2d's default initialization: weight and bias uniform in +-1/sqrt(fan_in).
struct Conv {
  Tensor weight, bias;
  Conv(int64_t in, int64_t out) {
    const double bound = 1.0 / std::sqrt(double(in * 9));
    weight = ((rand({out, in, 3, 3}) * 2.0 - 1.0) * bound).requires_grad_(true);
    bias = ((rand({out}) * 2.0 - 1.0) * bound).requires_grad_(true);
  }
  Tensor operator()(const Tensor& x) const { return conv2d(x, weight, bias, {1}, {1}); }
};

// torch.nn.BatchNorm2d: affine, running statistics updated in training (momentum 0.1).
struct BatchNorm {
  Tensor weight, bias, running_mean, running_var;
  explicit BatchNorm(int64_t channels)
      : weight(ones({channels}).requires_grad_(true)),
        bias(zeros({channels}).requires_grad_(true)),
        running_mean(zeros({channels})),
        running_var(ones({channels})) {}
  Tensor operator()(const Tensor& x, bool training) const {
    return batch_norm(x, weight, bias, running_mean, running_var, training, 0.1, 1e-5, true);
  }
};

struct CNN {
  Conv conv1{1, 16}, conv2{16, 32};
  BatchNorm bn1{16}, bn2{32};
  Linear fc{32 * 2 * 2, kClasses};
  Tensor operator()(const Tensor& pixels, bool training) const {
    Tensor x = pixels.reshape({-1, 1, 8, 8});
    x = max_pool2d(relu(bn1(conv1(x), training)), {2});  // [n, 16, 4, 4]
    x = max_pool2d(relu(bn2(conv2(x), training)), {2});  // [n, 32, 2, 2]
    return fc(dropout(x.flatten(1), 0.25, training));
  }
  TensorList params() const {
    return {conv1.weight, conv1.bias, bn1.weight, bn1.bias,  conv2.weight,
            conv2.bias,   bn2.weight, bn2.bias,   fc.weight, fc.bias};
  }
};

double accuracy(const CNN& model, const Tensor& x, const Tensor& y) {
  NoGradGuard no_grad;
  Tensor correct = eq(argmax(model(x, /*training=*/false), 1), y).sum();
  return double(correct.item<int64_t>()) / double(y.numel());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
  try {
    Dataset data = load_digits(path);
    std::printf("digits: %lld images of 8x8 pixels from %s\n", (long long)data.size(), path.c_str());
    manual_seed(0);
    // The MLP demo's split: a shuffled order, the first 1500 to train, the rest held out.
    std::vector<int64_t> order = permutation(data.size());
    std::vector<int64_t> train(order.begin(), order.begin() + kTrain), test(order.begin() + kTrain, order.end());
    auto [x_test, y_test] = rows(data, test, 0, test.size());

    CNN model;
    optim::Adam opt(model.params(), {/*lr=*/0.005});
    double total_seconds = 0;
    for (int epoch = 1; epoch <= kCnnEpochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      const double loss = train_epoch(data, train, opt, [&](const Tensor& x, const Tensor& y) {
        return cross_entropy(model(x, /*training=*/true), y);
      });
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      total_seconds += seconds;
      std::printf("epoch %2d  loss %.4f  %.3f s\n", epoch, loss, seconds);
    }
    const double acc = accuracy(model, x_test, y_test);
    std::printf("trained %d epochs in %.2f s (%.3f s per epoch); held-out accuracy %.2f%% (%lld images)\n", kCnnEpochs,
                total_seconds, total_seconds / kCnnEpochs, 100 * acc, (long long)y_test.numel());
    if (acc < kCnnTarget) {
      std::printf("FAILED: accuracy below %.0f%%\n", 100 * kCnnTarget);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "digits_cnn: %s\n", e.what());
    return 2;
  }
}
