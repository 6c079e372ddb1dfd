// The learning-rate schedulers against torch.optim.lr_scheduler (PyTorch 1.13): the lr after
// construction and after each step, bit for bit (the same recursive arithmetic in double).
#include <doctest/doctest.h>
#include <vector>
#include "kiln/core.h"
#include "kiln/lr_scheduler.h"

using namespace kiln;

namespace {

Tensor weight() {
  Tensor w = zeros({1});
  w.requires_grad_(true);
  return w;
}

// The optimizer's lr now and after each of steps() scheduler steps.
template <typename Sched>
std::vector<double> lrs(optim::Optimizer& opt, Sched& sched, int steps) {
  std::vector<double> out{opt.lr()};
  for (int i = 0; i < steps; ++i) {
    sched.step();
    out.push_back(opt.lr());
    CHECK(sched.get_last_lr() == opt.lr());
  }
  return out;
}

void check_exact(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == want[i]);
  }
}

}  // namespace

TEST_CASE("lr_scheduler: StepLR halves every 3 epochs") {
  Tensor w = weight();
  optim::SGD opt({w}, {0.5});
  optim::StepLR sched(opt, 3, 0.5);
  check_exact(lrs(opt, sched, 8), {0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125});
  CHECK(sched.last_epoch() == 8);
  CHECK_THROWS_AS(optim::StepLR(opt, 0), ValueError);
}

TEST_CASE("lr_scheduler: CosineAnnealingLR goes down to eta_min and back up, as torch") {
  Tensor w = weight();
  optim::SGD opt({w}, {0.1});
  optim::CosineAnnealingLR sched(opt, 4, 0.01);
  check_exact(lrs(opt, sched, 10),
              {0.1, 0.08681980515339464, 0.05500000000000001, 0.023180194846605363, 0.01, 0.023180194846605363,
               0.05500000000000002, 0.08681980515339469, 0.10000000000000006, 0.0868198051533947, 0.05500000000000005});
}

TEST_CASE("lr_scheduler: LinearLR warms up over total_iters and then holds") {
  Tensor w = weight();
  optim::SGD opt({w}, {0.1});
  optim::LinearLR sched(opt, {/*start_factor=*/0.25, /*end_factor=*/1.0, /*total_iters=*/4});
  check_exact(lrs(opt, sched, 6), {0.025, 0.043750000000000004, 0.06250000000000001, 0.08125000000000002,
                                   0.10000000000000002, 0.10000000000000002, 0.10000000000000002});
  CHECK_THROWS_AS(optim::LinearLR(opt, {/*start_factor=*/0.0}), ValueError);
  CHECK_THROWS_AS(optim::LinearLR(opt, {0.5, /*end_factor=*/1.5}), ValueError);
}

TEST_CASE("lr_scheduler: OneCycleLR cycles lr and Adam's beta1, two and three phases") {
  Tensor w = weight();
  optim::Adam opt({w}, {0.1});
  std::vector<double> beta1{};
  optim::OneCycleLR sched(opt, {/*max_lr=*/0.1, /*total_steps=*/10});
  std::vector<double> lr{opt.lr()};
  beta1.push_back(opt.options().beta1);
  for (int i = 0; i < 9; ++i) {
    sched.step();
    lr.push_back(opt.lr());
    beta1.push_back(opt.options().beta1);
  }
  check_exact(lr, {0.0040000000000000036, 0.052000000000000005, 0.1, 0.09504846320134738, 0.0811745653949763,
                   0.06112620219362893, 0.03887419780637107, 0.0188258346050237, 0.004951936798652629, 4e-07});
  check_exact(beta1, {0.95, 0.8999999999999999, 0.85, 0.854951556604879, 0.8688255099070633, 0.8888739533021842,
                      0.9111260466978157, 0.9311744900929366, 0.945048443395121, 0.95});
  sched.step();  // step 10 of 10 is allowed, as torch; the next raises
  CHECK_THROWS_AS(sched.step(), ValueError);

  Tensor v = weight();
  optim::Adam opt3({v}, {0.1});
  optim::OneCycleLROptions three{0.1, 10};
  three.three_phase = true, three.anneal_strategy = "linear";
  optim::OneCycleLR sched3(opt3, three);
  std::vector<double> lr3{opt3.lr()}, beta3{opt3.options().beta1};
  for (int i = 0; i < 9; ++i) {
    sched3.step();
    lr3.push_back(opt3.lr());
    beta3.push_back(opt3.options().beta1);
  }
  check_exact(lr3, {0.004, 0.052000000000000005, 0.1, 0.052000000000000005, 0.0040000000000000036, 0.00320008,
                    0.00240016, 0.0016002400000000002, 0.0008003200000000002, 4.0000000000022656e-07});
  check_exact(beta3, {0.95, 0.8999999999999999, 0.85, 0.8999999999999999, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95});

  optim::Adagrad no_momentum({v}, {0.1});
  CHECK_THROWS_AS(optim::OneCycleLR(no_momentum, {0.1, 10}), ValueError);
  optim::OneCycleLROptions bad{0.1, 10};
  bad.anneal_strategy = "exp";
  CHECK_THROWS_AS(optim::OneCycleLR(opt3, bad), ValueError);
}
