#ifndef KILN_TOOLS_DEMO_DIGITS_H_
#define KILN_TOOLS_DEMO_DIGITS_H_
// The UCI handwritten digits (1797 8x8 images shipped with Debian's python3-sklearn) and the
// 64-128-10 MLP that the demo (digits_mlp.cpp) and the mixed-precision test train on them, and
// the epoch loop they and the CNN demo share.
// Needs zlib.
#include <zlib.h>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#include "kiln/core.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/eq.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/relu.h"
#include "kiln/optim.h"

namespace kiln::digits {

constexpr int kPixels = 64, kHidden = 128, kClasses = 10, kTrain = 1500;
constexpr int kEpochs = 30, kBatch = 50;
constexpr double kTargetAccuracy = 0.95;

struct Dataset {
  std::vector<float> pixels;  // rows of 64 values scaled to [0, 1]
  std::vector<int64_t> labels;
  int64_t size() const { return int64_t(labels.size()); }
};

// digits.csv.gz: one image per line, 64 pixel values in 0..16 then the label.
inline Dataset load_digits(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    throw std::runtime_error("cannot open " + path + " (Debian package python3-sklearn; tools/kiln setup installs it)");
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
    if (v.size() != kPixels + 1)
      throw std::runtime_error(path + ": expected 65 values per line, got " + std::to_string(v.size()));
    for (int i = 0; i < kPixels; ++i) d.pixels.push_back(float(v[size_t(i)] / 16.0));
    d.labels.push_back(int64_t(v[kPixels]));
  }
  return d;
}

// The rows `order[begin, end)` of `d` as an [n, 64] float tensor and an [n] int64 tensor.
inline std::pair<Tensor, Tensor> rows(const Dataset& d, const std::vector<int64_t>& order, size_t begin, size_t end) {
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

inline double accuracy(const MLP& model, const Tensor& x, const Tensor& y) {
  NoGradGuard no_grad;
  Tensor correct = eq(argmax(model(x), 1), y).sum();
  return double(correct.item<int64_t>()) / double(y.numel());
}

inline std::vector<int64_t> permutation(int64_t n) { return randperm(n).to_vector<int64_t>(); }

// One epoch over the rows `train` in a fresh random order, batches of kBatch: loss_of(x, y), its
// backward and an optimizer step per batch. Returns the mean of the batches' losses.
template <typename LossOf>
double train_epoch(const Dataset& data, const std::vector<int64_t>& train, optim::Optimizer& opt,
                   const LossOf& loss_of) {
  std::vector<int64_t> shuffled = permutation(int64_t(train.size()));
  for (int64_t& i : shuffled) i = train[size_t(i)];
  double total = 0;
  int batches = 0;
  for (size_t b = 0; b < shuffled.size(); b += kBatch, ++batches) {
    auto [x, y] = rows(data, shuffled, b, std::min(b + kBatch, shuffled.size()));
    Tensor loss = loss_of(x, y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    total += loss.item<double>();
  }
  return batches > 0 ? total / batches : 0.0;
}

}  // namespace kiln::digits
#endif  // KILN_TOOLS_DEMO_DIGITS_H_
