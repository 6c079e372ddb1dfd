// SGD and Adam against torch.optim (PyTorch 1.13): parameters after each step, for a fixed
// gradient sequence g, 2g, 3g and for gradients coming from backward().
#include <doctest/doctest.h>
#include <vector>
#include "kiln/core.h"
#include "kiln/optim.h"

using namespace kiln;

namespace {
const std::vector<double> kW0 = {0.5, -1.0, 2.0, 1.5, 0.25, -0.75};
const std::vector<double> kG = {0.1, -0.2, 0.3, -0.4, 0.5, -0.6};

Tensor param(DType dtype = kFloat64) {
  Tensor w = from_vector<double>(kW0, {2, 3}).to(dtype);
  w.requires_grad_(true);
  return w;
}

void check_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-12) {
  std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol));
}

// Runs steps with gradient (s + 1) * g at step s, checking the parameter after each.
template <typename Opt>
void check_steps(Opt& opt, Tensor& w, const std::vector<std::vector<double>>& expected) {
  for (size_t s = 0; s < expected.size(); ++s) {
    w.set_grad(from_vector<double>(kG, {2, 3}) * double(s + 1));
    opt.step();
    CAPTURE(s);
    check_values(w, expected[s]);
  }
}
}  // namespace

TEST_CASE("optim: SGD with momentum and weight decay matches torch.optim.SGD") {
  Tensor w = param();
  optim::SGD opt({w}, {/*lr=*/0.1, /*momentum=*/0.9, /*dampening=*/0, /*weight_decay=*/0.01});
  check_steps(opt, w, {{0.4895, -0.979, 1.968, 1.5385, 0.19975, -0.68925},
                       {0.4595605, -0.919121, 1.877232, 1.6516115, 0.05432525, -0.51388575}});
}

TEST_CASE("optim: SGD nesterov and dampening match torch.optim.SGD") {
  Tensor w = param();
  optim::SGDOptions nesterov{0.05, 0.8};
  nesterov.nesterov = true;
  optim::SGD opt({w}, nesterov);
  check_steps(opt, w, {{0.491, -0.982, 1.973, 1.536, 0.205, -0.696}, {0.4698, -0.9396, 1.9094, 1.6208, 0.099, -0.5688}});

  Tensor v = param();
  optim::SGD damped({v}, {0.05, 0.8, /*dampening=*/0.3});
  check_steps(damped, v, {{0.495, -0.99, 1.985, 1.52, 0.225, -0.72}, {0.484, -0.968, 1.952, 1.564, 0.17, -0.654}});
}

TEST_CASE("optim: Adam matches torch.optim.Adam") {
  Tensor w = param();
  optim::Adam opt({w}, {/*lr=*/0.01});
  check_steps(opt, w,
              {{0.4900000009999999, -0.9900000005, 1.9900000003333334, 1.50999999975, 0.2400000002, -0.7400000001666667},
               {0.4803481813521253, -0.9803481805469539, 1.9803481802785634, 1.519651819855632, 0.23034818006385097,
                -0.7303481800101729},
               {0.47076816955448425, -0.970768168527642, 1.9707681681853613, 1.5292318319857792, 0.2207681679115366,
                -0.7207681678430805}});
}

TEST_CASE("optim: Adam with betas, eps and weight decay matches torch.optim.Adam") {
  Tensor w = param();
  optim::Adam opt({w}, {/*lr=*/0.02, /*beta1=*/0.8, /*beta2=*/0.99, /*eps=*/1e-6, /*weight_decay=*/0.1});
  check_steps(opt, w,
              {{0.48000013333244446, -0.9800000666664445, 1.98000003999992, 1.51999992000032, 0.23000003809516553,
                -0.7300000296295858},
               {0.4600722054298461, -0.9600769452275526, 1.9600318178114122, 1.5391493153229707, 0.2103093017641692,
                -0.7102563228840313}});
}

TEST_CASE("optim: Adam on gradients from backward() (loss = sum(w^3))") {
  Tensor w = param();
  optim::Adam opt({w}, {/*lr=*/0.1});
  for (int s = 0; s < 2; ++s) {
    opt.zero_grad();
    (w * w * w).sum().backward();
    opt.step();
  }
  check_values(w, {0.30344391188636666, -1.2000447323168109, 1.8003978896130486, 1.300594685865786,
                   0.061742165682914796, -0.9498779026393028});
  CHECK(w.is_leaf());
  CHECK_FALSE(w.grad_fn());
}

TEST_CASE("optim: SGD on float32 parameters (loss = sum(w^2))") {
  Tensor w = param(kFloat32);
  optim::SGD opt({w}, {0.1, 0.9});
  for (int s = 0; s < 2; ++s) {
    opt.zero_grad();
    (w * w).sum().backward();
    opt.step();
  }
  CHECK(w.dtype() == kFloat32);
  check_values(w, {0.23000000417232513, -0.46000000834465027, 0.9200000166893005, 0.690000057220459,
                   0.11500000208616257, -0.3450000286102295}, 1e-6);
}

TEST_CASE("optim: zero_grad drops or zeroes gradients; parameters without one are left alone") {
  Tensor w = param(), unused = param();
  optim::SGD opt({w, unused}, {0.5});
  (w * 2.0).sum().backward();
  opt.step();
  check_values(w, {-0.5, -2.0, 1.0, 0.5, -0.75, -1.75});
  check_values(unused, kW0);
  opt.zero_grad(/*set_to_none=*/false);
  REQUIRE(w.grad().defined());
  check_values(w.grad(), {0, 0, 0, 0, 0, 0});
  opt.zero_grad();
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("optim: parameters must be leaves that require grad") {
  Tensor w = param();
  CHECK_THROWS_AS(optim::SGD({w * 2.0}, {0.1}), ValueError);
  CHECK_THROWS_AS(optim::Adam({from_vector<double>(kW0, {6})}), ValueError);
  CHECK_THROWS_AS(optim::SGD({w}, {-1.0}), ValueError);
  CHECK_THROWS_AS(optim::Adam({w}, {0.1, /*beta1=*/1.0}), ValueError);
}
