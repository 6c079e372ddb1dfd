// The optimizers against torch.optim (PyTorch 1.13): parameters after each step, for a fixed
// gradient sequence g, 2g, 3g and for gradients coming from backward(); their state saved and
// loaded mid-training resumes exactly.
#include <doctest/doctest.h>
#include <vector>
#include "kiln/core.h"
#include "kiln/gen/api/_fused_adam_.h"
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

// Bit-identical values.
void check_exact(const Tensor& t, const std::vector<double>& want) {
  std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == want[i]);
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
  check_steps(opt, w,
              {{0.4895, -0.979, 1.968, 1.5385, 0.19975, -0.68925},
               {0.4595605, -0.919121, 1.877232, 1.6516115, 0.05432525, -0.51388575}});
}

TEST_CASE("optim: SGD nesterov and dampening match torch.optim.SGD") {
  Tensor w = param();
  optim::SGDOptions nesterov{0.05, 0.8};
  nesterov.nesterov = true;
  optim::SGD opt({w}, nesterov);
  check_steps(opt, w,
              {{0.491, -0.982, 1.973, 1.536, 0.205, -0.696}, {0.4698, -0.9396, 1.9094, 1.6208, 0.099, -0.5688}});

  Tensor v = param();
  optim::SGD damped({v}, {0.05, 0.8, /*dampening=*/0.3});
  check_steps(damped, v, {{0.495, -0.99, 1.985, 1.52, 0.225, -0.72}, {0.484, -0.968, 1.952, 1.564, 0.17, -0.654}});
}

TEST_CASE("optim: Adam matches torch.optim.Adam") {
  Tensor w = param();
  optim::Adam opt({w}, {/*lr=*/0.01});
  check_steps(
      opt, w,
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
  check_values(w,
               {0.23000000417232513, -0.46000000834465027, 0.9200000166893005, 0.690000057220459, 0.11500000208616257,
                -0.3450000286102295},
               1e-6);
}

TEST_CASE("optim: zero_grad drops or zeroes gradients, parameters without one are left alone") {
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

TEST_CASE("optim: AdamW's decoupled weight decay matches torch.optim.AdamW") {
  Tensor w = param();
  optim::AdamW opt({w}, {/*lr=*/0.02, /*beta1=*/0.8, /*beta2=*/0.99, /*eps=*/1e-6, /*weight_decay=*/0.1});
  check_steps(opt, w,
              {{0.47900019999800003, -0.9780000999995, 1.9760000666664443, 1.516999950000125, 0.22950003999992,
                -0.7285000333332777},
               {0.4583955253348403, -0.9563973635017434, 1.952401309557069, 1.5336127174153262, 0.20939426640121825,
                -0.7073962556122401},
               {0.4376533304269886, -0.9346591191620232, 1.928671042073346, 1.550370964471059, 0.18915000080227665,
                -0.6861559829844915}});
  CHECK(optim::AdamW::defaults().weight_decay == 0.01);
}

TEST_CASE("optim: Adam with amsgrad, maximize and weight decay matches torch.optim.Adam") {
  Tensor w = param();
  optim::AdamOptions o{/*lr=*/0.02};
  o.amsgrad = true, o.maximize = true, o.weight_decay = 0.05;
  optim::Adam opt({w}, o);
  check_steps(opt, w,
              {{0.5199999973333337, -1.0199999986666668, 2.019999999, 1.4800000004210527, 0.2699999995897436,
                -0.7699999996444444},
               {0.5389705789912849, -1.038963884320073, 2.038798920693066, 1.4605254088314945, 0.28927850447048514,
                -0.7892346446029976},
               {0.5578261085430428, -1.057813916213431, 2.0575126087802413, 1.4411903727809843, 0.30841397117119107,
                -0.8083280290332605}});
  REQUIRE(opt.state()[0].buffers.count("max_exp_avg_sq"));
  CHECK(opt.state()[0].step.item<double>() == 3);
}

TEST_CASE("optim: SGD maximizing with nesterov and weight decay matches torch.optim.SGD") {
  Tensor w = param();
  optim::SGDOptions o{0.05, 0.9, 0, 0.01, /*nesterov=*/true};
  o.maximize = true;
  optim::SGD opt({w}, o);
  check_steps(opt, w,
              {{0.509025, -1.01805, 2.0266, 1.460575, 0.2972625, -0.8062875},
               {0.53138892625, -1.0627778525, 2.09301473, 1.3663799537499999, 0.412128850625, -0.943517776875},
               {0.5707407016450625, -1.141481403290125, 2.2102115930065, 1.2029636099189374, 0.6127508119044063,
                -1.1834915135494688}});
}

TEST_CASE("optim: RMSprop matches torch.optim.RMSprop, plain and centered with momentum") {
  Tensor w = param();
  optim::RMSprop opt({w}, {/*lr=*/0.01, /*alpha=*/0.9, /*eps=*/1e-6, /*weight_decay=*/0.1});
  check_steps(opt, w,
              {{0.4683778900509286, -0.968377556728136, 1.9683774233970512, 1.5316223766067434, 0.21837741387335938,
                -0.7183773715457703},
               {0.4409820096083523, -0.9409380635529807, 1.941204790777529, 1.5613121611520429, 0.18995157015731823,
                -0.6901327351068459},
               {0.41611434246926104, -0.9160349389126449, 1.9165605864782727, 1.5881145817850784, 0.16416642030857703,
                -0.6645035783521229}});
  Tensor v = param();
  optim::RMSpropOptions centered{/*lr=*/0.01};
  centered.momentum = 0.8, centered.centered = true;
  optim::RMSprop opt2({v}, centered);
  check_steps(opt2, v,
              {{0.3994963194840783, -0.899496268979104, 1.8994962521441012, 1.6005037562734024, 0.149496238676095,
                -0.6494962353090928},
               {0.2287481475474368, -0.728748036232828, 1.7287479991279362, 1.7712520194245143, -0.021252030555985516,
                -0.47874796202303294},
               {0.010755428501931574, -0.5107552574979257, 1.5107552004965588, 1.989244828004131, -0.23924484510454655,
                -0.2607551434951755}});
}

TEST_CASE("optim: Adagrad matches torch.optim.Adagrad (lr_decay, initial accumulator, maximize)") {
  Tensor w = param();
  optim::Adagrad opt({w}, {/*lr=*/0.1, /*lr_decay=*/0.05, /*weight_decay=*/0.01, /*initial_accumulator_value=*/0.2,
                           /*eps=*/1e-8});
  check_steps(opt, w,
              {{0.4771428364851926, -0.9574954525820978, 1.9418085636619364, 1.5652425231926677, 0.17529945529860763,
                -0.6694679642398615},
               {0.43836734874124283, -0.8967136347994107, 1.870587642152328, 1.6413469723179757, 0.09623370882083043,
                -0.5887114554722841},
               {0.39129800140408666, -0.8341379591542623, 1.8030689526666865, 1.7113240403019885, 0.02538134317774897,
                -0.5173081951542784}});
  Tensor v = param();
  optim::AdagradOptions o{/*lr=*/0.1};
  o.maximize = true;
  optim::Adagrad opt2({v}, o);
  check_steps(
      opt2, v,
      {{0.5999999999000001, -1.09999999995, 2.0999999999666668, 1.400000000025, 0.34999999998, -0.8499999999833333},
       {0.6894427189599917, -1.1894427190299917, 2.189442719053325, 1.3105572809350083, 0.43944271907199156,
        -0.9394427190766582},
       {0.7696210915122904, -1.2696210915930046, 2.2696210916199093, 1.230378908366638, 0.5196210916414332,
        -1.019621091646814}});
}

namespace {
// Trains w (loss = sum(w^3) + sum(w)) for `steps` steps with opt.
template <typename Opt>
void train(Opt& opt, Tensor& w, int steps) {
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    ((w * w * w).sum() + w.sum()).backward();
    opt.step();
  }
}

// Five steps at once equal two steps, the state saved and loaded into a new optimizer, three more.
template <typename Opt, typename Options>
void check_resume(const Options& options) {
  Tensor straight = param();
  Opt a({straight}, options);
  train(a, straight, 5);

  Tensor resumed = param();
  Opt b({resumed}, options);
  train(b, resumed, 2);
  std::vector<optim::ParamState> saved;
  for (const optim::ParamState& s : b.state()) {  // a snapshot, as torch.save(opt.state_dict())
    optim::ParamState copy{s.step.defined() ? s.step.clone() : Tensor(), {}};  // SGD counts no steps
    for (const auto& [key, t] : s.buffers) copy.buffers[key] = t.clone();
    saved.push_back(copy);
  }
  Tensor again = resumed.detach().clone();
  again.requires_grad_(true);
  train(b, resumed, 1);  // the live state moves on; the snapshot does not
  Opt d({again}, options);
  d.load_state(saved);
  train(d, again, 3);
  check_exact(again, straight.to_vector<double>());
}
}  // namespace

TEST_CASE("optim: state saved and loaded mid-training resumes bit-identically") {
  optim::AdamOptions amsgrad{0.05};
  amsgrad.amsgrad = true;
  check_resume<optim::Adam>(amsgrad);
  check_resume<optim::AdamW>(optim::AdamOptions{0.05});
  check_resume<optim::SGD>(optim::SGDOptions{0.05, 0.9});
  optim::RMSpropOptions centered{0.01};
  centered.centered = true, centered.momentum = 0.5;
  check_resume<optim::RMSprop>(centered);
  check_resume<optim::Adagrad>(optim::AdagradOptions{0.1, 0.01});
}

TEST_CASE("optim: load_state checks count, names and shapes and changes nothing on an error") {
  Tensor w = param();
  optim::Adam opt({w}, {0.1});
  train(opt, w, 1);
  const Tensor before = opt.state()[0].buffers.at("exp_avg").clone();
  CHECK_THROWS_AS(opt.load_state({}), ValueError);
  CHECK_THROWS_AS(opt.load_state({optim::ParamState{zeros({}), {{"momentum_buffer", zeros({2, 3})}}}}), ValueError);
  CHECK_THROWS_AS(opt.load_state({optim::ParamState{zeros({}), {{"exp_avg", zeros({3, 2})}}}}), ShapeError);
  check_exact(opt.state()[0].buffers.at("exp_avg"), before.to_vector<double>());
  // float32 parameters take float64 state as float32, as torch casts floating state
  Tensor f = param(kFloat32);
  optim::Adam fopt({f}, {0.1});
  fopt.load_state({optim::ParamState{full({}, 4.0), {{"exp_avg", ones({2, 3}, kFloat64)}}}});
  CHECK(fopt.state()[0].buffers.at("exp_avg").dtype() == kFloat32);
  CHECK(fopt.state()[0].step.dtype() == kFloat32);
}

TEST_CASE("optim: the fused step reads and writes state of any layout") {
  // exp_avg transposed and exp_avg_sq a strided slice: the kernel runs on contiguous copies and
  // writes them back, giving what the contiguous state gives
  Tensor p1 = from_vector<double>(kW0, {2, 3}), p2 = p1.clone();
  Tensor g = from_vector<double>(kG, {2, 3});
  Tensor m1 = full({2, 3}, 0.1, kFloat64), v1 = full({2, 3}, 0.2, kFloat64);
  Tensor m2 = full({3, 2}, 0.1, kFloat64).t(), v2 = full({2, 6}, 0.2, kFloat64).slice(1, 0, 6, 2);
  Tensor s = full({}, 3.0, kFloat32);
  _fused_adam_({p1}, {g}, {m1}, {v1}, {}, {s}, 0.1, 0.9, 0.99, 0.01, 1e-8, false, false);
  _fused_adam_({p2}, {g}, {m2}, {v2}, {}, {s}, 0.1, 0.9, 0.99, 0.01, 1e-8, false, false);
  check_exact(p2, p1.to_vector<double>());
  check_exact(m2.contiguous(), m1.to_vector<double>());
  check_exact(v2.contiguous(), v1.to_vector<double>());
  // a found_inf of 1 skips the step; grad_scale's gradient is stored back unscaled
  Tensor before = p1.clone();
  _fused_adam_({p1}, {g}, {m1}, {v1}, {}, {s}, 0.1, 0.9, 0.99, 0.0, 1e-8, false, false, Tensor(), ones({1}, kFloat32));
  check_exact(p1, before.to_vector<double>());
  Tensor scaled = g * 4.0;
  _fused_adam_({p1}, {scaled}, {m1}, {v1}, {}, {s}, 0.1, 0.9, 0.99, 0.0, 1e-8, false, false, full({1}, 4.0, kFloat32));
  check_exact(scaled, kG);
}

TEST_CASE("optim: fused ops refuse mismatched lists, naming the op and argument") {
  Tensor p = zeros({2, 3}, kFloat64), q = zeros({3}, kFloat64);
  Tensor s = ones({}, kFloat32);
  CHECK_THROWS_AS(_fused_adam_({p}, {p}, {p}, {p, p}, {}, {s}, 0.1, 0.9, 0.99, 0, 1e-8, false, false), ValueError);
  CHECK_THROWS_AS(_fused_adam_({p}, {q}, {p}, {p}, {}, {s}, 0.1, 0.9, 0.99, 0, 1e-8, false, false), ShapeError);
  CHECK_THROWS_AS(_fused_adam_({p}, {p.to(kFloat32)}, {p}, {p}, {}, {s}, 0.1, 0.9, 0.99, 0, 1e-8, false, false),
                  DTypeError);
  CHECK_THROWS_AS(_fused_adam_({p}, {p}, {p}, {p}, {}, {s.to(kFloat64)}, 0.1, 0.9, 0.99, 0, 1e-8, false, false),
                  DTypeError);
  try {
    _fused_adam_({p}, {p}, {p}, {p}, {}, {s}, 0.1, 0.9, 0.99, 0, 1e-8, /*amsgrad=*/true, false);
    FAIL("amsgrad without max_exp_avg_sqs was accepted");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()).find("max_exp_avg_sqs") != std::string::npos);
  }
}

TEST_CASE("optim: a refused step changes nothing, the step count included") {
  Tensor w = param(kFloat32);
  optim::Adam opt({w}, {0.1});
  w.mutable_grad() = from_vector<double>(kG, {2, 3});  // a float64 gradient for a float32 parameter
  const std::vector<double> before = w.to_vector<double>();
  CHECK_THROWS_AS(opt.step(), DTypeError);
  CHECK(opt.state()[0].step.item<double>() == 0);
  check_exact(w, before);
}
