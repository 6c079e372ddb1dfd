// The digits MLP (tools/demo/digits.h) trained under CPU autocast (bfloat16 products, float32
// loss, float32 weights and Adam) reaches the float32 run's held-out accuracy within 1 point.
#include <doctest/doctest.h>
#include <cstdio>
#include <optional>
#include "kiln/autocast.h"
#include "kiln/gen/api/cross_entropy.h"
#include "kiln/optim.h"
#include "tools/demo/digits.h"

#ifdef KILN_DIGITS_CSV
using namespace kiln;
using namespace kiln::digits;

namespace {

// Trains from seed 0 on the demo's split; returns the held-out accuracy.
double train(const Dataset& data, bool bf16) {
  manual_seed(0);
  std::vector<int64_t> order = permutation(data.size());
  std::vector<int64_t> train(order.begin(), order.begin() + kTrain), test(order.begin() + kTrain, order.end());
  auto [x_test, y_test] = rows(data, test, 0, test.size());
  MLP model;
  optim::Adam opt(model.params(), {/*lr=*/0.005});
  for (int epoch = 1; epoch <= kEpochs; ++epoch) {
    train_epoch(data, train, opt, [&](const Tensor& x, const Tensor& y) {
      Tensor loss;
      {
        std::optional<AutocastGuard> region;
        if (bf16) region.emplace(DeviceType::CPU);
        Tensor logits = model(x);
        if (bf16) CHECK(logits.dtype() == kBFloat16);
        loss = cross_entropy(logits, y);  // float32 under autocast too
      }
      CHECK(loss.dtype() == kFloat32);
      return loss;
    });
  }
  for (const Tensor& p : model.params()) CHECK(p.dtype() == kFloat32);
  std::optional<AutocastGuard> region;
  if (bf16) region.emplace(DeviceType::CPU);
  return accuracy(model, x_test, y_test);
}

}  // namespace

TEST_CASE("amp: the digits MLP under bfloat16 autocast is within 1 point of float32") {
  const Dataset data = load_digits(KILN_DIGITS_CSV);
  const double f32 = train(data, false);
  const double bf16 = train(data, true);
  std::printf("digits MLP held-out accuracy: float32 %.2f%%, bfloat16 autocast %.2f%%\n", 100 * f32, 100 * bf16);
  CHECK(f32 >= kTargetAccuracy);
  CHECK(std::abs(bf16 - f32) <= 0.01);
}
#endif
