// Trains a 64-128-10 MLP on the UCI handwritten digits (1797 8x8 images shipped with Debian's
// python3-sklearn) with kiln's ops, autograd and Adam; prints the loss per epoch and the
// held-out accuracy, and exits non-zero below 95%.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>
#include "digits.h"
#include "kiln/kiln.h"
#include "kiln/optim.h"

using namespace kiln;
using namespace kiln::digits;

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
  try {
    Dataset data = load_digits(path);
    std::printf("digits: %lld images of 8x8 pixels from %s\n", (long long)data.size(), path.c_str());
    manual_seed(0);
    // Deterministic split: a shuffled order, the first 1500 to train, the rest held out.
    std::vector<int64_t> order = permutation(data.size());
    std::vector<int64_t> train(order.begin(), order.begin() + kTrain), test(order.begin() + kTrain, order.end());
    auto [x_test, y_test] = rows(data, test, 0, test.size());

    MLP model;
    optim::Adam opt(model.params(), {/*lr=*/0.005});
    auto start = std::chrono::steady_clock::now();
    for (int epoch = 1; epoch <= kEpochs; ++epoch) {
      const double loss = train_epoch(data, train, opt, [&](const Tensor& x, const Tensor& y) {
        return cross_entropy(model(x), y);
      });
      std::printf("epoch %2d  loss %.4f\n", epoch, loss);
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double acc = accuracy(model, x_test, y_test);
    std::printf("trained %d epochs in %.2f s; held-out accuracy %.2f%% (%lld images)\n", kEpochs, seconds, 100 * acc,
                (long long)y_test.numel());
    if (acc < kTargetAccuracy) {
      std::printf("FAILED: accuracy below %.0f%%\n", 100 * kTargetAccuracy);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "digits_mlp: %s\n", e.what());
    return 2;
  }
}
