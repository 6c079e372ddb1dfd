// Trains a 64-128-10 MLP on the UCI handwritten digits (1797 8x8 images shipped with Debian's
// python3-sklearn) with kiln's ops, autograd and Adam; prints the loss per epoch and the
// held-out accuracy, and exits non-zero below 95%.
#include <zlib.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include "kiln/kiln.h"
#include "kiln/optim.h"

using namespace kiln;

namespace {

constexpr int kPixels = 64, kHidden = 128, kClasses = 10, kTrain = 1500;
constexpr int kEpochs = 30, kBatch = 50;
constexpr double kTargetAccuracy = 0.95;

struct Dataset {
  std::vector<float> pixels;   // rows of 64 values scaled to [0, 1]
  std::vector<int64_t> labels;
  int64_t size() const { return int64_t(labels.size()); }
};

// digits.csv.gz: one image per line, 64 pixel values in 0..16 then the label.
Dataset load_digits(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path + " (Debian package python3-sklearn; tools/kiln setup installs it)");
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, size_t(n));
  gzclose(f);
  if (n < 0) throw std::runtime_error("cannot decompress " + path);
  Dataset d;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::vector<double> v;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) v.push_back(std::stod(cell));
    if (v.size() != kPixels + 1) throw std::runtime_error(path + ": expected 65 values per line, got " + std::to_string(v.size()));
    for (int i = 0; i < kPixels; ++i) d.pixels.push_back(float(v[size_t(i)] / 16.0));
    d.labels.push_back(int64_t(v[kPixels]));
  }
  return d;
}

// The rows `order[begin, end)` of `d` as an [n, 64] float tensor and an [n] int64 tensor.
std::pair<Tensor, Tensor> rows(const Dataset& d, const std::vector<int64_t>& order, size_t begin, size_t end) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (size_t i = begin; i < end; ++i) {
    int64_t r = order[i];
    x.insert(x.end(), d.pixels.begin() + r * kPixels, d.pixels.begin() + (r + 1) * kPixels);
    y.push_back(d.labels[size_t(r)]);
  }
  int64_t n = int64_t(end - begin);
  return {from_vector<float>(x, {n, kPixels}), from_vector<int64_t>(y, {n})};
}

// Like torch.nn.Linear: weight and bias uniform in +-1/sqrt(fan_in).
struct Linear {
  Tensor weight, bias;
  Linear(int64_t in, int64_t out) {
    double bound = 1.0 / std::sqrt(double(in));
    weight = (rand({out, in}) * 2.0 - 1.0) * bound;
    bias = (rand({out}) * 2.0 - 1.0) * bound;
    weight.requires_grad_(true);
    bias.requires_grad_(true);
  }
  Tensor operator()(const Tensor& x) const { return linear(x, weight, bias); }
};

struct MLP {
  Linear fc1{kPixels, kHidden}, fc2{kHidden, kClasses};
  Tensor operator()(const Tensor& x) const { return fc2(relu(fc1(x))); }
  TensorList params() const { return {fc1.weight, fc1.bias, fc2.weight, fc2.bias}; }
};

double accuracy(const MLP& model, const Tensor& x, const Tensor& y) {
  NoGradGuard no_grad;
  Tensor correct = eq(argmax(model(x), 1), y).sum();
  return double(correct.item<int64_t>()) / double(y.numel());
}

std::vector<int64_t> permutation(int64_t n) { return randperm(n).to_vector<int64_t>(); }

}  // namespace

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
      std::vector<int64_t> shuffled = permutation(kTrain);
      for (int64_t& i : shuffled) i = train[size_t(i)];
      double total = 0;
      int batches = 0;
      for (size_t b = 0; b < shuffled.size(); b += kBatch, ++batches) {
        auto [x, y] = rows(data, shuffled, b, std::min(b + kBatch, shuffled.size()));
        Tensor loss = cross_entropy(model(x), y);
        opt.zero_grad();
        loss.backward();
        opt.step();
        total += loss.item<double>();
      }
      std::printf("epoch %2d  loss %.4f\n", epoch, total / batches);
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
