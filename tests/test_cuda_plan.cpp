// The CUDA launcher's arithmetic, proven on the host (kernels/cuda/plan/): the magic-number
// divider, the offset calculator against the CPU loops' own walk of the same geometry, the
// 32-bit indexing test, vector widths, grid shapes, and the Philox block each CUDA thread fills.
// The device evaluates exactly these functions (KILN_HOST_DEVICE), so what holds here holds there.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>
#include "kiln/common/random_blocks.h"
#include "kernels/cuda/plan/int_divider.h"
#include "kernels/cuda/plan/launch.h"
#include "kernels/cuda/plan/offset_calculator.h"
#include "kernels/cuda/plan/unravel.h"
#include "kiln/cpu/loops.h"
#include "kiln/core.h"
#include "kiln/gen/api/bernoulli.h"
#include "kiln/gen/api/div.h"
#include "kiln/gen/api/nonzero.h"
#include "kiln/gen/api/normal.h"

using namespace kiln;
using cuda_plan::IntDivider;

namespace {

Tensor iota(IntArrayRef shape) { return arange(numel_of(shape), TensorOptions(kFloat32)).reshape(shape); }

// Byte offsets of every operand for each element, in the order the CPU's for_each_run visits them.
std::vector<std::vector<int64_t>> cpu_walk(const StridedGeometry& g, int n) {
  std::vector<std::vector<int64_t>> out(size_t(g.numel), std::vector<int64_t>(size_t(n)));
  int64_t i = 0;
  cpu::for_each_run(g, n, 0, g.numel, [&](char** p, const int64_t* s, int64_t count) {
    for (int64_t j = 0; j < count; ++j, ++i)
      for (int k = 0; k < n; ++k) out[size_t(i)][size_t(k)] = (p[k] + j * s[k]) - g.base[k];
  });
  return out;
}

template <typename Index>
void check_against_walk(const StridedGeometry& g) {
  auto oc = cuda_plan::make_offset_calculator<3, Index>(g.ndim, g.sizes, g.strides);
  auto walk = cpu_walk(g, 3);
  for (int64_t i = 0; i < g.numel; ++i) {
    auto o = oc.get(Index(i));
    for (int k = 0; k < 3; ++k) REQUIRE(int64_t(o.bytes[k]) == walk[size_t(i)][size_t(k)]);
  }
}

}  // namespace

TEST_CASE("IntDivider: 32-bit magic division equals / and % for every divisor class") {
  std::vector<uint32_t> divisors = {1, 2, 3, 5, 7, 10, 12, 255, 256, 257, 1000, 65535, 65536, 65537,
                                    (1u << 20) + 1, 123456789, (1u << 30), (1u << 31) - 1};
  uint32_t lcg = 12345;
  for (uint32_t d : divisors) {
    IntDivider<uint32_t> div(d);
    std::vector<uint32_t> ns = {0, 1, d - 1, d, d + 1, 2 * d - 1, (1u << 31) - 1, (1u << 31) - 2};
    for (int r = 0; r < 200; ++r) {
      lcg = lcg * 1664525u + 1013904223u;
      ns.push_back(lcg >> 1);  // below 2^31
    }
    for (uint32_t n : ns) {
      if (n >= (1u << 31)) continue;
      auto qr = div.divmod(n);
      REQUIRE(qr.div == n / d);
      REQUIRE(qr.mod == n % d);
    }
  }
}

TEST_CASE("IntDivider: the 64-bit fallback divides plainly") {
  IntDivider<uint64_t> div(uint64_t(3) << 33);
  auto qr = div.divmod((uint64_t(7) << 34) + 5);
  CHECK(qr.div == ((uint64_t(7) << 34) + 5) / (uint64_t(3) << 33));
  CHECK(qr.mod == ((uint64_t(7) << 34) + 5) % (uint64_t(3) << 33));
}

TEST_CASE("OffsetCalculator: transposed and broadcast inputs match the CPU walk and read the right values") {
  Tensor a = iota({3, 4});           // a[i][j] = 4i + j
  Tensor out = empty({4, 3});
  Tensor at = a.t();                 // at[r][c] = a[c][r] = 4c + r
  Tensor row = iota({3}).expand({4, 3});  // broadcast along dim 0
  const TensorBase* ops[] = {&out, &at, &row};
  StridedGeometry g = make_geometry(ops, 3);
  REQUIRE(g.numel == 12);
  check_against_walk<uint32_t>(g);
  check_against_walk<uint64_t>(g);
  // out is contiguous, so the calculator's linear order is out's row-major order.
  auto oc = cuda_plan::make_offset_calculator<3, uint32_t>(g.ndim, g.sizes, g.strides);
  const float* av = a.data<float>();
  const float* rv = iota({3}).data<float>();
  for (uint32_t i = 0; i < 12; ++i) {
    auto o = oc.get(i);
    const int64_t r = i / 3, c = i % 3;
    CHECK(o.bytes[0] == int64_t(i) * 4);
    CHECK(av[o.bytes[1] / 4] == float(4 * c + r));
    CHECK(rv[o.bytes[2] / 4] == float(c));
  }
}

TEST_CASE("OffsetCalculator: a sliced 3-d view and a permuted operand match the CPU walk") {
  Tensor base = iota({4, 6, 5});
  Tensor sliced = base.slice(1, 1, 5, 2);  // [4, 2, 5], dim-1 stride 10
  Tensor permuted = iota({5, 2, 4}).permute({2, 1, 0});
  Tensor out = empty({4, 2, 5});
  const TensorBase* ops[] = {&out, &sliced, &permuted};
  StridedGeometry g = make_geometry(ops, 3);
  REQUIRE(g.numel == 40);
  check_against_walk<uint32_t>(g);
  check_against_walk<uint64_t>(g);
}

TEST_CASE("fits_in_32bit_indexing: numel and every operand's furthest byte below 2^31") {
  int64_t sizes[2] = {1000, 1000};
  int64_t ok[16][16] = {};
  ok[0][0] = 4, ok[0][1] = 4000;
  CHECK(cuda_plan::fits_in_32bit_indexing(2, sizes, ok, 1, 1000000));
  int64_t far[16][16] = {};
  far[0][0] = 4, far[0][1] = int64_t(1) << 22;  // 999 * 4 MiB > 2 GiB
  CHECK_FALSE(cuda_plan::fits_in_32bit_indexing(2, sizes, far, 1, 1000000));
  int64_t big[1] = {int64_t(1) << 31};
  int64_t unit[16][16] = {};
  unit[0][0] = 1;
  CHECK_FALSE(cuda_plan::fits_in_32bit_indexing(1, big, unit, 1, int64_t(1) << 31));
}

TEST_CASE("vector_width: the widest width every pointer is aligned to, at most 16 bytes") {
  alignas(64) static char buf[256];
  const void* aligned[2] = {buf, buf + 64};
  int f32[2] = {4, 4}, f64[2] = {8, 8}, i8[2] = {1, 1}, c128[2] = {16, 16}, mixed[2] = {1, 8};
  CHECK(cuda_plan::vector_width(aligned, f32, 2) == 4);
  CHECK(cuda_plan::vector_width(aligned, f64, 2) == 2);   // 4 doubles would be 32 bytes
  CHECK(cuda_plan::vector_width(aligned, i8, 2) == 4);
  CHECK(cuda_plan::vector_width(aligned, c128, 2) == 1);
  CHECK(cuda_plan::vector_width(aligned, mixed, 2) == 2);  // the int64 operand limits the bool one
  const void* off4[2] = {buf, buf + 4};
  CHECK(cuda_plan::vector_width(off4, f32, 2) == 1);
  const void* off8[2] = {buf + 8, buf};
  CHECK(cuda_plan::vector_width(off8, f32, 2) == 2);
}

TEST_CASE("elementwise_launch_shape: enough blocks for the data, capped for a grid-stride loop") {
  auto s = cuda_plan::elementwise_launch_shape(1000000, 4, 108);  // A100: 108 SMs
  CHECK(s.threads == 256);
  CHECK(s.blocks == 977);                                          // ceil(1e6 / 1024)
  CHECK(cuda_plan::elementwise_launch_shape(int64_t(1) << 30, 4, 132).blocks == 132 * 4 * 8);  // H100 cap
  CHECK(cuda_plan::elementwise_launch_shape(1, 1, 108).blocks == 1);
  CHECK(cuda_plan::elementwise_launch_shape(0, 1, 108).blocks == 0);
  CHECK(cuda_plan::elementwise_launch_shape(257, 1, 0).blocks == 2);  // unknown SM count: at least one wave
}

// Uniform draws match bit for bit; normal ones to a few ulp (the CPU's Box-Muller runs through
// libmvec's vector logf/sinf/cosf, the block functor through the scalar libm, CUDA through its own).
TEST_CASE("Philox fills: CUDA thread b's block reproduces CPU rand bit for bit and randn to a few ulp, in any order") {
  using namespace kiln::random_detail;
  const int64_t n = 1001;  // not a multiple of a block: the last thread writes a partial block
  manual_seed(123);
  Tensor normal_cpu = randn({n}, TensorOptions(kFloat32));
  Tensor uniform_cpu = rand({n}, TensorOptions(kFloat64));
  manual_seed(123);
  std::vector<float> normal(size_t(n), -1.0f);
  BlockRange r = reserve_blocks(default_generator(), n, NormalBlock<float>::kPerBlock);
  CHECK(r.num_blocks == 251);
  for (int64_t b = r.num_blocks - 1; b >= 0; --b) fill_block(normal.data(), n, r, b, NormalBlock<float>(0, 1));
  std::vector<double> uniform(size_t(n), -1.0);
  BlockRange u = reserve_blocks(default_generator(), n, UniformBlock<double>::kPerBlock);
  CHECK(u.num_blocks == 501);
  CHECK(u.first_block == r.first_block + 251);  // the second request starts where the first ended
  for (int64_t b = 0; b < u.num_blocks; ++b) fill_block(uniform.data(), n, u, b, UniformBlock<double>(0, 1));
  const float* nc = normal_cpu.data<float>();
  const double* uc = uniform_cpu.data<double>();
  for (int64_t i = 0; i < n; ++i) {
    REQUIRE(std::fabs(normal[size_t(i)] - nc[i]) <= 4e-7f * (1.0f + std::fabs(nc[i])));
    REQUIRE(uniform[size_t(i)] == uc[i]);
  }
}

TEST_CASE("Philox fills: randint and bernoulli blocks replayed in reverse reproduce the CPU ops") {
  using namespace kiln::random_detail;
  const int64_t n = 1003;
  manual_seed(7);
  Tensor small_cpu = randint(-5, 9, {n}, TensorOptions(kInt32));
  Tensor wide_cpu = randint(INT64_MIN / 2, INT64_MAX / 2, {n}, TensorOptions(kInt64));  // range > 2^32
  Tensor p = rand({n}, TensorOptions(kFloat32));
  Tensor p64 = rand({n}, TensorOptions(kFloat64));
  Tensor coin_cpu = bernoulli(p);
  Tensor coin64_cpu = bernoulli(p64);
  manual_seed(7);
  std::vector<int32_t> small(size_t(n), 99);
  BlockRange r = reserve_blocks(default_generator(), n, RandintBlock<int32_t, false>::kPerBlock);
  for (int64_t b = r.num_blocks - 1; b >= 0; --b) fill_block(small.data(), n, r, b, RandintBlock<int32_t, false>{-5, 14});
  std::vector<int64_t> wide(size_t(n), 0);
  const uint64_t wide_range = uint64_t(INT64_MAX / 2) - uint64_t(INT64_MIN / 2);
  r = reserve_blocks(default_generator(), n, RandintBlock<int64_t, true>::kPerBlock);
  for (int64_t b = r.num_blocks - 1; b >= 0; --b)
    fill_block(wide.data(), n, r, b, RandintBlock<int64_t, true>{INT64_MIN / 2, wide_range});
  (void)rand({n}, TensorOptions(kFloat32));  // the same draws of p as above
  (void)rand({n}, TensorOptions(kFloat64));
  std::vector<float> coin(size_t(n), -1.0f);
  r = reserve_blocks(default_generator(), n, BernoulliBlock<float>::kPerBlock);
  for (int64_t b = r.num_blocks - 1; b >= 0; --b) fill_block(coin.data(), n, r, b, BernoulliBlock<float>{p.data<float>()});
  std::vector<double> coin64(size_t(n), -1.0);
  r = reserve_blocks(default_generator(), n, BernoulliBlock<double>::kPerBlock);
  for (int64_t b = r.num_blocks - 1; b >= 0; --b)
    fill_block(coin64.data(), n, r, b, BernoulliBlock<double>{p64.data<double>()});
  int64_t heads = 0;
  for (int64_t i = 0; i < n; ++i) {
    REQUIRE(small[size_t(i)] == small_cpu.data<int32_t>()[i]);
    REQUIRE(small[size_t(i)] >= -5);
    REQUIRE(small[size_t(i)] < 9);
    REQUIRE(wide[size_t(i)] == wide_cpu.data<int64_t>()[i]);
    REQUIRE(coin[size_t(i)] == coin_cpu.data<float>()[i]);
    REQUIRE(coin64[size_t(i)] == coin64_cpu.data<double>()[i]);
    heads += coin[size_t(i)] == 1.0f;
  }
  CHECK(heads > n / 2 - 80);  // p is uniform on [0, 1): about half are heads
  CHECK(heads < n / 2 + 80);
}

TEST_CASE("Philox fills: randperm's keys replayed in reverse, stably sorted, give the CPU's permutation") {
  using namespace kiln::random_detail;
  const int64_t n = 777;  // odd: the last block holds one key
  manual_seed(42);
  std::vector<int64_t> want = randperm(n, TensorOptions(kInt64)).to_vector<int64_t>();
  manual_seed(42);
  std::vector<uint64_t> keys(size_t(n), 0);
  BlockRange r = reserve_blocks(default_generator(), n, PermKeyBlock::kPerBlock);
  CHECK(r.num_blocks == 389);
  for (int64_t b = r.num_blocks - 1; b >= 0; --b) fill_block(keys.data(), n, r, b, PermKeyBlock{});
  // The device sorts (key, index) pairs with a stable radix sort: equal keys keep index order.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[size_t(a)] < keys[size_t(b)]; });
  CHECK(order == want);
}

TEST_CASE("Philox fills: a probability outside [0, 1] draws NaN, never a plausible 0 or 1") {
  using namespace kiln::random_detail;
  const float p[4] = {0.5f, -0.25f, 1.5f, std::numeric_limits<float>::quiet_NaN()};
  float out[4] = {7, 7, 7, 7};
  BlockRange r;
  r.num_blocks = 1;
  fill_block(out, 4, r, 0, BernoulliBlock<float>{p});
  CHECK((out[0] == 0.0f || out[0] == 1.0f));
  CHECK(std::isnan(out[1]));
  CHECK(std::isnan(out[2]));
  CHECK(std::isnan(out[3]));
}

TEST_CASE("mask kernels' unravelling: a broadcast operand's offsets and nonzero's coordinates, as the CPU gives them") {
  // a mask of [3, 1, 4] over a [2, 3, 5, 4] result: strides (0, 4, 0, 1); iota's value is its offset
  const std::vector<int64_t> sizes{2, 3, 5, 4};
  const Tensor expanded = iota({3, 1, 4}).expand(sizes);
  const std::vector<int64_t> strides(expanded.strides().begin(), expanded.strides().end());
  const std::vector<float> want = expanded.contiguous().to_vector<float>();
  for (int64_t i = 0; i < int64_t(want.size()); ++i)
    CHECK(cuda_plan::unravel_offset(i, 4, sizes.data(), strides.data()) == int64_t(want[size_t(i)]));
  // nonzero's rows: the coordinates of each nonzero element's flat position
  std::vector<float> values(120);
  std::vector<int64_t> flat;
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = float(i % 3);
    if (values[i] != 0) flat.push_back(int64_t(i));
  }
  const std::vector<int64_t> rows = nonzero(from_vector(values, sizes)).to_vector<int64_t>();
  REQUIRE(rows.size() == flat.size() * 4);
  for (size_t r = 0; r < flat.size(); ++r) {
    int64_t coordinates[4];
    cuda_plan::unravel_coordinates(flat[r], 4, sizes.data(), coordinates);
    for (int d = 0; d < 4; ++d) CHECK(coordinates[d] == rows[r * 4 + size_t(d)]);
  }
}
