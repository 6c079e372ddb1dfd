// Random numbers: Philox4x32-10 known answers, the generator's state, the documented
// element-to-block mapping (the contract a CUDA kernel must reproduce), independence from the
// thread count, distribution statistics and argument errors.
#include <doctest/doctest.h>
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <thread>
#include <vector>
#include "kiln/core.h"
#include "kiln/philox.h"
#include "kiln/random.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/bernoulli.h"
#include "kiln/gen/api/multinomial.h"
#include "kiln/gen/api/normal_.h"
#include "kiln/gen/api/uniform_.h"

namespace {

using kiln::DType;
using kiln::Generator;
using kiln::Tensor;
using kiln::TensorOptions;

struct Moments {
  double mean = 0, std = 0, min = 0, max = 0;
};
Moments moments(const std::vector<double>& v) {
  Moments m;
  m.min = *std::min_element(v.begin(), v.end());
  m.max = *std::max_element(v.begin(), v.end());
  for (double x : v) m.mean += x;
  m.mean /= double(v.size());
  for (double x : v) m.std += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(m.std / double(v.size() - 1));
  return m;
}

// Restores OpenMP's thread count when a test changes it.
struct ThreadCount {
  int saved = omp_get_max_threads();
  ~ThreadCount() { omp_set_num_threads(saved); }
};

}  // namespace

TEST_CASE("philox: Philox4x32-10 matches the Random123 known-answer vectors") {
  using kiln::philox::Block;
  using kiln::philox::philox4x32_10;
  Block zero = philox4x32_10(Block{{0, 0, 0, 0}}, 0, 0);
  CHECK(zero.x[0] == 0x6627e8d5u);
  CHECK(zero.x[1] == 0xe169c58du);
  CHECK(zero.x[2] == 0xbc57ac4cu);
  CHECK(zero.x[3] == 0x9b00dbd8u);
  Block ones = philox4x32_10(Block{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu);
  CHECK(ones.x[0] == 0x408f276du);
  CHECK(ones.x[1] == 0x41c83b0eu);
  CHECK(ones.x[2] == 0xa20bc7c6u);
  CHECK(ones.x[3] == 0x6d5451fdu);
  Block pi = philox4x32_10(Block{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u);
  CHECK(pi.x[0] == 0xd16cfe09u);
  CHECK(pi.x[1] == 0x94fdccebu);
  CHECK(pi.x[2] == 0x5001e420u);
  CHECK(pi.x[3] == 0x24126ea1u);
  // block(seed, index): counter (index lo, index hi, 0, 0), key (seed lo, seed hi)
  Block b = kiln::philox::block(0xa4093822ull | (0x299f31d0ull << 32), 0x243f6a88ull | (0x85a308d3ull << 32));
  Block c = philox4x32_10(Block{{0x243f6a88u, 0x85a308d3u, 0, 0}}, 0xa4093822u, 0x299f31d0u);
  for (int i = 0; i < 4; ++i) CHECK(b.x[i] == c.x[i]);
}

TEST_CASE("philox: uniform conversions are exact and stay below 1") {
  using kiln::philox::uniform53;
  using kiln::philox::uniform_bits;
  CHECK(uniform_bits<24>(0) == 0.0f);
  CHECK(uniform_bits<24>(0xffffffffu) == 1.0f - 0x1p-24f);
  CHECK(uniform_bits<11>(0xffffffffu) == 1.0f - 0x1p-11f);
  CHECK(uniform_bits<8>(0x80000000u) == 0.5f);
  CHECK(uniform53(0, 0) == 0.0);
  CHECK(uniform53(0xffffffffu, 0xffffffffu) == 1.0 - 0x1p-53);
  CHECK(uniform53(0, 0x80000000u) == 0.5);
}

TEST_CASE("random: generator state, seeding and offsets") {
  Generator g;
  CHECK(g.seed() == Generator::kDefaultSeed);
  CHECK(g.offset() == 0);
  g.manual_seed(7);
  CHECK(g.seed() == 7);
  kiln::rand({5}, TensorOptions(DType::Float32), &g);  // 5 words, rounded to 2 blocks
  CHECK(g.offset() == 8);
  kiln::rand({5}, TensorOptions(DType::Float64), &g);  // 2 elements per block: 3 blocks
  CHECK(g.offset() == 20);
  kiln::randn({5}, TensorOptions(DType::Float32), &g);  // 2 Box-Muller pairs per block: 2 blocks
  CHECK(g.offset() == 28);
  kiln::randn({3}, TensorOptions(DType::Complex128), &g);  // 6 doubles: 3 blocks
  CHECK(g.offset() == 40);
  kiln::rand({0}, TensorOptions(DType::Float32), &g);  // nothing to draw
  CHECK(g.offset() == 40);
  kiln::GeneratorState s = g.get_state();
  CHECK(s.seed == 7);
  CHECK(s.offset == 40);
  g.manual_seed(7);  // restarts the stream
  CHECK(g.offset() == 0);
  g.set_state({11, 64});
  CHECK(g.seed() == 11);
  CHECK(g.offset() == 64);
  CHECK_THROWS_AS(g.set_state({11, 6}), kiln::ValueError);
  CHECK(g.reserve(1).offset == 64);
  CHECK(g.reserve(9).offset == 68);
  CHECK(g.offset() == 80);
}

// The mapping random.h documents: element i of a request starting at offset o reads block
// o/4 + i/4 (word i%4) for 32-bit draws and block o/4 + i/2 (words 2(i%2), 2(i%2)+1) for
// 53-bit ones. A CUDA kernel has to produce exactly these numbers.
TEST_CASE("random: rand follows the documented Philox mapping exactly") {
  Generator g(0x1234567890abcdefull);
  g.set_state({0x1234567890abcdefull, 32});
  std::vector<float> f = kiln::rand({10}, TensorOptions(DType::Float32), &g).to_vector<float>();
  for (int i = 0; i < 10; ++i) {
    kiln::philox::Block b = kiln::philox::block(0x1234567890abcdefull, 8 + i / 4);
    CHECK(f[size_t(i)] == float(b.x[i % 4] >> 8) * 0x1p-24f);
  }
  CHECK(g.offset() == 32 + 12);
  std::vector<double> d = kiln::rand({5}, TensorOptions(DType::Float64), &g).to_vector<double>();
  for (int i = 0; i < 5; ++i) {
    kiln::philox::Block b = kiln::philox::block(0x1234567890abcdefull, 11 + i / 2);
    uint64_t bits = (uint64_t(b.x[2 * (i % 2) + 1]) << 32) | b.x[2 * (i % 2)];
    CHECK(d[size_t(i)] == double(bits >> 11) * 0x1p-53);
  }
  // normals: Box-Muller on (1 - u(w0), u(w1)) and (1 - u(w2), u(w3)) of each block
  g.set_state({99, 0});
  std::vector<float> z = kiln::randn({4}, TensorOptions(DType::Float32), &g).to_vector<float>();
  kiln::philox::Block b = kiln::philox::block(99, 0);
  for (int p = 0; p < 2; ++p) {
    float z0, z1;
    kiln::philox::box_muller(1.0f - kiln::philox::uniform_bits<24>(b.x[2 * p]),
                             kiln::philox::uniform_bits<24>(b.x[2 * p + 1]), z0, z1);
    CHECK(z[size_t(2 * p)] == z0);
    CHECK(z[size_t(2 * p + 1)] == z1);
  }
}

TEST_CASE("random: manual_seed makes results reproducible and requests continue the stream") {
  kiln::manual_seed(42);
  CHECK(kiln::default_generator().seed() == 42);
  std::vector<float> a = kiln::rand({1000}).to_vector<float>();
  std::vector<double> an = kiln::randn({7}, TensorOptions(DType::Float64)).to_vector<double>();
  kiln::manual_seed(42);
  CHECK(kiln::rand({1000}).to_vector<float>() == a);
  CHECK(kiln::randn({7}, TensorOptions(DType::Float64)).to_vector<double>() == an);
  kiln::manual_seed(43);
  CHECK(kiln::rand({1000}).to_vector<float>() != a);
  // two requests of whole blocks read the same numbers as one request of their total size
  Generator g(5);
  std::vector<float> first = kiln::rand({8}, TensorOptions(DType::Float32), &g).to_vector<float>();
  std::vector<float> second = kiln::rand({12}, TensorOptions(DType::Float32), &g).to_vector<float>();
  g.manual_seed(5);
  std::vector<float> whole = kiln::rand({20}, TensorOptions(DType::Float32), &g).to_vector<float>();
  first.insert(first.end(), second.begin(), second.end());
  CHECK(first == whole);
}

TEST_CASE("random: saving and restoring the state replays the numbers") {
  Generator g(2024);
  kiln::rand({3}, TensorOptions(DType::Float32), &g);
  kiln::GeneratorState saved = g.get_state();
  std::vector<double> x = kiln::randn({50}, TensorOptions(DType::Float64), &g).to_vector<double>();
  std::vector<int64_t> p = kiln::randperm(20, TensorOptions(DType::Int64), &g).to_vector<int64_t>();
  g.set_state(saved);
  CHECK(kiln::randn({50}, TensorOptions(DType::Float64), &g).to_vector<double>() == x);
  CHECK(kiln::randperm(20, TensorOptions(DType::Int64), &g).to_vector<int64_t>() == p);
  // the default generator too
  kiln::GeneratorState d = kiln::default_generator().get_state();
  std::vector<float> y = kiln::rand({9}).to_vector<float>();
  kiln::default_generator().set_state(d);
  CHECK(kiln::rand({9}).to_vector<float>() == y);
}

TEST_CASE("random: results do not depend on the number of threads") {
  ThreadCount restore;
  const int64_t n = 100003;  // above the parallel grain, not a multiple of a block
  std::vector<std::vector<float>> u, z;
  std::vector<std::vector<double>> zd, b;
  std::vector<std::vector<int64_t>> r;
  Tensor p = kiln::full({n}, 0.5, TensorOptions(DType::Float64));
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    Generator g(77);
    u.push_back(kiln::rand({n}, TensorOptions(DType::Float32), &g).to_vector<float>());
    z.push_back(kiln::randn({n}, TensorOptions(DType::Float32), &g).to_vector<float>());
    zd.push_back(kiln::randn({n}, TensorOptions(DType::Float64), &g).to_vector<double>());
    r.push_back(kiln::randint(-5, 1000, {n}, TensorOptions(DType::Int64), &g).to_vector<int64_t>());
    b.push_back(kiln::bernoulli(p, &g).to_vector<double>());
  }
  for (size_t t = 1; t < 3; ++t) {
    CHECK(u[t] == u[0]);
    CHECK(z[t] == z[0]);
    CHECK(zd[t] == zd[0]);
    CHECK(r[t] == r[0]);
    CHECK(b[t] == b[0]);
  }
}

TEST_CASE("random: concurrent requests on one generator never share blocks") {
  Generator g(3);
  auto work = [&] {
    for (int i = 0; i < 200; ++i) kiln::rand({6}, TensorOptions(DType::Float32), &g);  // 2 blocks each
  };
  std::thread t1(work), t2(work);
  t1.join();
  t2.join();
  CHECK(g.offset() == 2 * 200 * 8);
}

TEST_CASE("random: uniform statistics and ranges") {
  Generator g(1);
  const int64_t n = 100000;
  for (DType dt : {DType::Float32, DType::Float64}) {
    CAPTURE(kiln::dtype_name(dt));
    Moments m = moments(kiln::rand({n}, TensorOptions(dt), &g).to_vector<double>());
    CHECK(m.min >= 0.0);
    CHECK(m.max < 1.0);
    CHECK(std::abs(m.mean - 0.5) < 0.005);               // sigma of the mean: 0.0009
    CHECK(std::abs(m.std - std::sqrt(1.0 / 12)) < 0.005);
  }
  Tensor t = kiln::empty({n}, TensorOptions(DType::Float32));
  kiln::uniform_(t, -2.0, 3.0, &g);
  Moments m = moments(t.to_vector<double>());
  CHECK(m.min >= -2.0);
  CHECK(m.max < 3.0);
  CHECK(std::abs(m.mean - 0.5) < 0.03);
  // float16 and bfloat16 draw only as many bits as they hold: exact, below 1
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    CAPTURE(kiln::dtype_name(dt));
    std::vector<double> h = kiln::rand({4096}, TensorOptions(dt), &g).to_vector<double>();
    int bits = dt == DType::Float16 ? 11 : 8;
    for (double v : h) {
      REQUIRE(v >= 0.0);
      REQUIRE(v < 1.0);
      REQUIRE(std::ldexp(v, bits) == std::floor(std::ldexp(v, bits)));
    }
    CHECK(std::abs(moments(h).mean - 0.5) < 0.03);
  }
  // from == to gives from
  Tensor c = kiln::empty({5}, TensorOptions(DType::Float64));
  kiln::uniform_(c, 1.5, 1.5, &g);
  for (double v : c.to_vector<double>()) CHECK(v == 1.5);
}

TEST_CASE("random: normal statistics") {
  Generator g(2);
  const int64_t n = 100000;
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
    CAPTURE(kiln::dtype_name(dt));
    Moments m = moments(kiln::randn({n}, TensorOptions(dt), &g).to_vector<double>());
    CHECK(std::abs(m.mean) < 0.015);  // sigma of the mean: 0.0032
    CHECK(std::abs(m.std - 1.0) < 0.015);
  }
  Tensor t = kiln::empty({n}, TensorOptions(DType::Float64));
  kiln::normal_(t, 5.0, 2.0, &g);
  Moments m = moments(t.to_vector<double>());
  CHECK(std::abs(m.mean - 5.0) < 0.03);
  CHECK(std::abs(m.std - 2.0) < 0.03);
  // about 95.45% within two standard deviations
  std::vector<double> v = t.to_vector<double>();
  double inside = double(std::count_if(v.begin(), v.end(), [](double x) { return std::abs(x - 5.0) < 4.0; })) / double(n);
  CHECK(std::abs(inside - 0.9545) < 0.005);
  // std 0 gives the mean
  Tensor c = kiln::empty({3}, TensorOptions(DType::Float32));
  kiln::normal_(c, -1.25, 0.0, &g);
  for (float x : c.to_vector<float>()) CHECK(x == -1.25f);
}

TEST_CASE("random: complex tensors fill real and imaginary parts") {
  Generator g(8);
  std::vector<kiln::complex<float>> c = kiln::rand({3}, TensorOptions(DType::Complex64), &g).to_vector<kiln::complex<float>>();
  g.manual_seed(8);
  std::vector<float> r = kiln::rand({6}, TensorOptions(DType::Float32), &g).to_vector<float>();
  for (size_t i = 0; i < 3; ++i) {
    CHECK(c[i].re == r[2 * i]);
    CHECK(c[i].im == r[2 * i + 1]);
  }
  // each part has variance 1/2, so E|z|^2 = 1 (torch.randn for complex)
  std::vector<kiln::complex<double>> z = kiln::randn({50000}, TensorOptions(DType::Complex128), &g).to_vector<kiln::complex<double>>();
  std::vector<double> re, im;
  for (auto v : z) {
    re.push_back(v.re);
    im.push_back(v.im);
  }
  CHECK(std::abs(moments(re).std - std::sqrt(0.5)) < 0.015);
  CHECK(std::abs(moments(im).std - std::sqrt(0.5)) < 0.015);
  CHECK(std::abs(moments(re).mean) < 0.015);
}

TEST_CASE("random: in-place fills of non-contiguous tensors follow logical order") {
  Tensor base = kiln::zeros({4, 6}, TensorOptions(DType::Float32));
  Tensor t = base.as_strided_view({6, 4}, {1, 6}, 0);  // a transposed view
  REQUIRE_FALSE(t.is_contiguous());
  Generator g(31);
  kiln::uniform_(t, 0.0, 1.0, &g);
  g.manual_seed(31);
  std::vector<float> want = kiln::rand({24}, TensorOptions(DType::Float32), &g).to_vector<float>();
  CHECK(t.to_vector<float>() == want);
  // the base saw the writes: base[j][i] == t[i][j]
  std::vector<float> b = base.to_vector<float>();
  CHECK(b[1] == want[4]);
  CHECK(b[6] == want[1]);
}

TEST_CASE("random: randint stays in low..high-1 and covers it") {
  Generator g(4);
  std::vector<int64_t> v = kiln::randint(-3, 7, {20000}, TensorOptions(DType::Int64), &g).to_vector<int64_t>();
  std::set<int64_t> seen(v.begin(), v.end());
  CHECK(*seen.begin() == -3);
  CHECK(*seen.rbegin() == 6);
  CHECK(seen.size() == 10);
  CHECK(std::abs(moments(std::vector<double>(v.begin(), v.end())).mean - 1.5) < 0.1);
  // other dtypes
  Tensor i8 = kiln::randint(-128, 128, {1000}, TensorOptions(DType::Int8), &g);
  CHECK(i8.dtype() == DType::Int8);
  Tensor f = kiln::randint(0, 5, {1000}, TensorOptions(DType::Float32), &g);
  for (float x : f.to_vector<float>()) CHECK((x >= 0 && x < 5 && x == std::floor(x)));
  std::vector<bool> bits = kiln::randint(0, 2, {200}, TensorOptions(DType::Bool), &g).to_vector<bool>();
  CHECK(std::count(bits.begin(), bits.end(), true) > 50);
  // ranges beyond 2^32 use 64-bit draws
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> wide = kiln::randint(lo, hi, {1000}, TensorOptions(DType::Int64), &g).to_vector<int64_t>();
  CHECK(std::count_if(wide.begin(), wide.end(), [](int64_t x) { return x < 0; }) > 400);
  CHECK(std::count_if(wide.begin(), wide.end(), [](int64_t x) { return x > (int64_t(1) << 40); }) > 400);
  uint64_t before = g.offset();
  kiln::randint(0, int64_t(1) << 33, {4}, TensorOptions(DType::Int64), &g);
  CHECK(g.offset() - before == 8);  // 2 per block
  // errors
  CHECK_THROWS_AS(kiln::randint(5, 5, {3}, TensorOptions(DType::Int64), &g), kiln::ValueError);
  CHECK_THROWS_AS(kiln::randint(0, 300, {3}, TensorOptions(DType::UInt8), &g), kiln::ValueError);
  CHECK_THROWS_AS(kiln::randint(0, 3, {3}, TensorOptions(DType::Complex64), &g), kiln::DTypeError);
}

TEST_CASE("random: randperm is a permutation") {
  Generator g(6);
  std::vector<int64_t> p = kiln::randperm(1000, TensorOptions(DType::Int64), &g).to_vector<int64_t>();
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) CHECK(sorted[size_t(i)] == i);
  int fixed = 0;
  for (int64_t i = 0; i < 1000; ++i) fixed += p[size_t(i)] == i;
  CHECK(fixed < 10);  // expected 1
  std::vector<float> pf = kiln::randperm(10, TensorOptions(DType::Float32), &g).to_vector<float>();
  std::sort(pf.begin(), pf.end());
  for (int i = 0; i < 10; ++i) CHECK(pf[size_t(i)] == float(i));
  CHECK(kiln::randperm(0, TensorOptions(DType::Int64), &g).numel() == 0);
  CHECK(kiln::randperm(1, TensorOptions(DType::Int32), &g).to_vector<int32_t>() == std::vector<int32_t>{0});
  CHECK_THROWS_AS(kiln::randperm(-1, TensorOptions(DType::Int64), &g), kiln::ValueError);
  CHECK_THROWS_AS(kiln::randperm(300, TensorOptions(DType::Int8), &g), kiln::ValueError);
  CHECK_THROWS_AS(kiln::randperm(3, TensorOptions(DType::Bool), &g), kiln::DTypeError);
}

TEST_CASE("random: bernoulli draws 1 with probability p") {
  Generator g(9);
  const int64_t n = 100000;
  Tensor p = kiln::full({n}, 0.3, TensorOptions(DType::Float32));
  Tensor b = kiln::bernoulli(p, &g);
  CHECK(b.dtype() == DType::Float32);
  std::vector<double> v = b.to_vector<double>();
  for (double x : v) REQUIRE((x == 0.0 || x == 1.0));
  CHECK(std::abs(moments(v).mean - 0.3) < 0.006);  // sigma: 0.0014
  // p = 0 and p = 1 are certain
  std::vector<double> edge = kiln::bernoulli(kiln::tensor<double>({0.0, 1.0, 0.0, 1.0}), &g).to_vector<double>();
  CHECK(edge == std::vector<double>{0.0, 1.0, 0.0, 1.0});
  CHECK_THROWS_AS(kiln::bernoulli(kiln::tensor<double>({0.5, 1.5}), &g), kiln::ValueError);
  CHECK_THROWS_AS(kiln::bernoulli(kiln::tensor<float>({-0.1f}), &g), kiln::ValueError);
  CHECK_THROWS_AS(kiln::bernoulli(kiln::tensor<int64_t>({0, 1}), &g), kiln::DTypeError);
}

TEST_CASE("random: multinomial draws in proportion to the weights, never a zero weight") {
  Generator g(12);
  Tensor w = kiln::tensor<double>({1.0, 0.0, 6.0, 3.0});  // unnormalized, as PyTorch allows
  const int64_t n = 40000;
  Tensor draws = kiln::multinomial(w, n, /*replacement=*/true, &g);
  CHECK(draws.dtype() == DType::Int64);
  CHECK(draws.sizes().equals({n}));
  std::vector<int64_t> count(4, 0);
  for (int64_t i : draws.to_vector<int64_t>()) ++count[size_t(i)];
  CHECK(count[1] == 0);
  for (int64_t i : {0, 2, 3})
    CHECK(std::abs(double(count[size_t(i)]) / n - w.to_vector<double>()[size_t(i)] / 10) < 0.01);

  // Without replacement: distinct indices per row and never a zero weight; the first draw
  // follows the weights, the second the weights left (after index 2: 1 : 3 for indices 0 and 3).
  Tensor rows = kiln::tensor<float>({1, 0, 6, 3, 1, 0, 6, 3}).reshape({2, 4});
  const int64_t trials = 20000;
  std::vector<int64_t> first(4, 0), second_after_2(4, 0);
  int64_t after_2 = 0;
  for (int64_t t = 0; t < trials; ++t) {
    std::vector<int64_t> r = kiln::multinomial(rows, 3, false, &g).to_vector<int64_t>();
    REQUIRE(r.size() == 6);
    for (int k = 0; k < 2; ++k) {
      std::set<int64_t> seen(r.begin() + 3 * k, r.begin() + 3 * k + 3);
      REQUIRE(seen == std::set<int64_t>{0, 2, 3});  // three nonzero weights, three samples
    }
    ++first[size_t(r[0])];
    if (r[0] == 2) ++after_2, ++second_after_2[size_t(r[1])];
  }
  CHECK(std::abs(double(first[2]) / trials - 0.6) < 0.015);
  CHECK(std::abs(double(first[3]) / trials - 0.3) < 0.015);
  CHECK(std::abs(double(second_after_2[3]) / after_2 - 0.75) < 0.02);  // 3 / (1 + 3) once 2 is gone

  // one seed, one result; the generator moves on
  Generator a(5), b(5);
  CHECK(kiln::multinomial(w, 7, true, &a).to_vector<int64_t>() ==
        kiln::multinomial(w, 7, true, &b).to_vector<int64_t>());
  CHECK(kiln::multinomial(rows, 4, true, &a).sizes().equals({2, 4}));
}

TEST_CASE("random: multinomial refuses what PyTorch refuses, naming the argument") {
  using kiln::testing::error_text;
  using kiln::testing::has;
  Tensor w = kiln::tensor<float>({0.5f, 0.0f, 0.5f});
  CHECK(has(error_text<kiln::ValueError>([&] { (void)kiln::multinomial(w, 3); }), "not enough non-negative category"));
  CHECK(has(error_text<kiln::ValueError>([&] { (void)kiln::multinomial(w, 4); }), "without replacement"));
  CHECK_NOTHROW(kiln::multinomial(w, 4, true));
  CHECK(has(error_text<kiln::ValueError>([&] { (void)kiln::multinomial(w, 0); }), "num_samples"));
  CHECK(has(error_text<kiln::ValueError>([&] {
              (void)kiln::multinomial(kiln::tensor<float>({0.5f, -0.1f}), 1);
            }),
            "element < 0"));
  CHECK(has(error_text<kiln::ValueError>([&] {
              (void)kiln::multinomial(kiln::tensor<float>({0.5f, std::nanf("")}), 1);
            }),
            "nan"));
  CHECK(has(error_text<kiln::ValueError>([&] {
              (void)kiln::multinomial(kiln::zeros({2, 3}), 1, true);
            }),
            "sum of probabilities"));
  CHECK(has(error_text<kiln::ShapeError>([&] { (void)kiln::multinomial(kiln::ones({2, 2, 2}), 1); }), "1 or 2 dim"));
  CHECK(has(error_text<kiln::DTypeError>([&] {
              (void)kiln::multinomial(kiln::tensor<int64_t>({1, 2}), 1);
            }),
            "multinomial"));
}

TEST_CASE("random: argument errors") {
  CHECK_THROWS_AS(kiln::rand({3}, TensorOptions(DType::Int64)), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::randn({3}, TensorOptions(DType::Bool)), kiln::DTypeError);
  Tensor i = kiln::zeros({3}, TensorOptions(DType::Int32));
  CHECK_THROWS_AS(kiln::uniform_(i), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::normal_(i), kiln::DTypeError);
  Tensor f = kiln::zeros({3}, TensorOptions(DType::Float32));
  CHECK_THROWS_AS(kiln::uniform_(f, 1.0, 0.0), kiln::ValueError);
  CHECK_THROWS_AS(kiln::uniform_(f, 0.0, std::numeric_limits<double>::infinity()), kiln::ValueError);
  CHECK_THROWS_AS(kiln::uniform_(f, std::nan(""), 1.0), kiln::ValueError);
  CHECK_THROWS_AS(kiln::normal_(f, 0.0, -1.0), kiln::ValueError);
  Tensor h = kiln::zeros({3}, TensorOptions(DType::Float16));
  CHECK_THROWS_AS(kiln::uniform_(h, 0.0, 1e6), kiln::ValueError);  // beyond float16's 65504
  CHECK_NOTHROW(kiln::uniform_(h, -100.0, 100.0));
}

TEST_CASE("random: autograd around in-place fills") {
  // a leaf that requires grad refuses in-place changes, as in PyTorch
  Tensor leaf = kiln::zeros({3}, TensorOptions(DType::Float32)).requires_grad_();
  CHECK_THROWS_AS(kiln::uniform_(leaf), kiln::AutogradError);
  {
    kiln::NoGradGuard no_grad;
    CHECK_NOTHROW(kiln::normal_(leaf));
  }
  // rand(requires_grad) makes a leaf
  Tensor r = kiln::rand({2}, TensorOptions(DType::Float64).with_requires_grad());
  CHECK(r.requires_grad());
  CHECK(r.is_leaf());
  // overwriting a non-leaf cuts its history: the gradient to what it was is zero
  Tensor x = kiln::ones({3}, TensorOptions(DType::Float64)).requires_grad_();
  Tensor y = x * 2.0;
  kiln::uniform_(y);
  REQUIRE(y.grad_fn());
  CHECK(std::string(y.grad_fn()->name()) == "UniformBackward");
  y.sum().backward();
  REQUIRE(x.grad().defined());
  CHECK(x.grad().to_vector<double>() == std::vector<double>{0.0, 0.0, 0.0});
}
