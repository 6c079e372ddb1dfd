// gather/scatter/index_*/take/put beyond the generated value tests: index errors name the op
// and argument and leave an in-place operand as it was, negative indices follow PyTorch per
// op, duplicates combine deterministically in index order, integer means floor, and the
// parallel CPU paths agree with a plain loop. Values marked "PyTorch:" come from torch 1.13.
#include <doctest/doctest.h>
#include <random>
#include "test_helpers.h"
#include "kiln/core.h"
#include "kiln/determinism.h"
#include "kiln/gen/api/gather.h"
#include "kiln/gen/api/index_add.h"
#include "kiln/gen/api/index_copy.h"
#include "kiln/gen/api/index_fill.h"
#include "kiln/gen/api/index_select.h"
#include "kiln/gen/api/put.h"
#include "kiln/gen/api/real.h"
#include "kiln/gen/api/all.h"
#include "kiln/gen/api/scatter.h"
#include "kiln/gen/api/scatter_add.h"
#include "kiln/gen/api/scatter_reduce.h"
#include "kiln/gen/api/take.h"
#include "kiln/gen/api/take_along_dim.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
Tensor i64(std::vector<int64_t> v, std::vector<int64_t> shape) { return from_vector(v, shape); }
Tensor f32(std::vector<float> v, std::vector<int64_t> shape) { return from_vector(v, shape); }
}  // namespace

TEST_CASE("indexing: an index out of range raises IndexError naming the op, before any write") {
  Tensor x = arange(12, kFloat32).reshape({3, 4});
  CHECK(has(error_text<IndexError>([&] { gather(x, 0, i64({3}, {1, 1})); }), "index 3 is out of bounds"));
  CHECK(has(error_text<IndexError>([&] { gather(x, 0, i64({-1}, {1, 1})); }), "gather"));
  CHECK(has(error_text<IndexError>([&] { x.index_select(0, i64({-1}, {1})); }), "index_select"));
  CHECK(has(error_text<IndexError>([&] { take(x, i64({12}, {1})); }), "take"));
  Tensor before = x.clone();
  // a bad index after good ones: nothing is written, in place or not
  CHECK(has(error_text<IndexError>([&] { x.scatter_(0, i64({0, 5}, {1, 2}), 7.0); }), "scatter"));
  CHECK(has(error_text<IndexError>([&] { x.index_add_(0, i64({1, 3}, {2}), ones({2, 4})); }), "index_add"));
  CHECK(has(error_text<IndexError>([&] { x.index_copy_(0, i64({0, -1}, {2}), ones({2, 4})); }), "index_copy"));
  CHECK(has(error_text<IndexError>([&] { x.index_fill_(1, i64({-5}, {1}), 1.0); }), "index_fill"));
  CHECK(has(error_text<IndexError>([&] { x.put_(i64({0, 12}, {2}), f32({1, 2}, {2})); }), "put"));
  CHECK(has(error_text<IndexError>([&] { x.scatter_add_(1, i64({0, 4}, {1, 2}), ones({1, 2})); }), "scatter_add"));
  CHECK(same_values(x, before));
}

TEST_CASE("indexing: dtypes and shapes are checked with PyTorch's rules") {
  Tensor x = zeros({3, 4});
  CHECK(has(error_text<DTypeError>([&] { gather(x, 0, zeros({1, 1}, kInt32)); }), "int64"));
  CHECK(has(error_text<DTypeError>([&] { x.scatter(0, zeros({1, 1}, kInt64), ones({1, 1}, kFloat64)); }), "src"));
  CHECK(has(error_text<ShapeError>([&] { gather(x, 0, zeros({4}, kInt64)); }), "same number of dimensions"));
  CHECK(has(error_text<ShapeError>([&] { gather(x, 0, zeros({2, 5}, kInt64)); }), "no larger than self"));
  CHECK(has(error_text<ShapeError>([&] { x.scatter(0, zeros({1, 2}, kInt64), ones({1, 1})); }), "src"));
  CHECK(has(error_text<ShapeError>([&] { x.index_select(0, zeros({1, 1}, kInt64)); }), "vector"));
  CHECK(has(error_text<DTypeError>([&] { x.index_select(0, zeros({1}, kFloat32)); }), "int32 or int64"));
  CHECK(has(error_text<DTypeError>([&] { x.index_copy(0, zeros({1}, kInt32), ones({1, 4})); }), "int64"));
  CHECK(has(error_text<ShapeError>([&] {
              x.index_add(0, zeros({1}, kInt64), ones({2, 4}));
            }),
            "Number of indices (1)"));
  CHECK(has(error_text<ShapeError>([&] { x.index_add(0, zeros({1}, kInt64), ones({1, 3})); }), "slice shapes"));
  CHECK(has(error_text<ShapeError>([&] { x.index_fill(0, zeros({1}, kInt64), ones({1})); }), "0-dimensional"));
  CHECK(has(error_text<ValueError>([&] {
              x.scatter_reduce(0, zeros({1, 1}, kInt64), ones({1, 1}), "max");
            }),
            "sum, prod, mean, amax or amin"));
  CHECK(has(error_text<DTypeError>(
                [&] { zeros({2}, kComplex64).scatter_reduce(0, zeros({1}, kInt64), ones({1}, kComplex64), "amax"); }),
            "complex"));
  CHECK(has(error_text<ShapeError>([&] { x.put(zeros({2}, kInt64), ones({1})); }), "same number of elements"));
  CHECK(has(error_text<IndexError>([&] { take(zeros({0}), zeros({1}, kInt64)); }), "empty"));
  // an empty index reads and writes nothing, whatever the other shapes (PyTorch too)
  CHECK(gather(x, 0, zeros({0, 5}, kInt64)).sizes().vec() == std::vector<int64_t>{0, 5});
  CHECK(same_values(x.scatter(0, zeros({0, 2}, kInt64), ones({5, 5})), x));
}

TEST_CASE("indexing: negative indices wrap where PyTorch wraps them") {
  Tensor x = arange(12, kFloat32).reshape({3, 4});
  expect_values(take(x, i64({-1, 11, 0}, {3})), {3}, {11, 11, 0});
  expect_values(x.put(i64({-1}, {1}), f32({9}, {1})).reshape({-1}).narrow(0, 8, 4), {4}, {8, 9, 10, 9});
  // PyTorch: index_fill(0, [-1], 7) fills the last row
  expect_values(x.index_fill(0, i64({-1}, {1}), 7.0), {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7});
}

TEST_CASE("indexing: duplicates combine in index order") {
  // scatter: the last write wins on the CPU; scatter_add and index_add sum
  Tensor self = zeros({3});
  expect_values(self.scatter(0, i64({1, 1, 1}, {3}), f32({5, 6, 7}, {3})), {3}, {0, 7, 0});
  expect_values(self.scatter_add(0, i64({1, 1, 0}, {3}), f32({5, 6, 7}, {3})), {3}, {7, 11, 0});
  // PyTorch: ones(3,2).index_add(0, [0,0], ones(2,2), alpha=2) -> [[5,5],[1,1],[1,1]]
  expect_values(ones({3, 2}).index_add(0, i64({0, 0}, {2}), ones({2, 2}), 2), {3, 2}, {5, 5, 1, 1, 1, 1});
  // PyTorch: put with accumulate sums duplicates
  expect_values(ones({3, 2}).put(i64({0, 0}, {2}), ones({2}), true), {3, 2}, {3, 1, 1, 1, 1, 1});
}

TEST_CASE("scatter_reduce: PyTorch's reductions, include_self, NaN and integer means") {
  Tensor self = from_vector(std::vector<int64_t>{1, 2, 3}, {3});
  Tensor index = i64({0, 0, 2}, {3});
  // PyTorch: [1,2,3].scatter_reduce(0, [0,0,2], [4,5,6], "mean") -> [3, 2, 4]
  expect_values(self.scatter_reduce(0, index, from_vector(std::vector<int64_t>{4, 5, 6}, {3}), "mean"), {3}, {3, 2, 4});
  // PyTorch: include_self=False with [-4,-5,6] -> [-5, 2, 6] (floor of -4.5)
  expect_values(self.scatter_reduce(0, index, from_vector(std::vector<int64_t>{-4, -5, 6}, {3}), "mean", false), {3},
                {-5, 2, 6});
  Tensor f = f32({1, 2, 3}, {3});
  // PyTorch: amax with a NaN among the values -> [nan, 2, 6]
  expect_values(f.scatter_reduce(0, index, f32({NAN, 5, 6}, {3}), "amax"), {3}, {NAN, 2, 6});
  expect_values(f.scatter_reduce(0, index, f32({4, 5, 6}, {3}), "amax", false), {3}, {5, 2, 6});
  expect_values(f.scatter_reduce(0, index, f32({4, 5, 6}, {3}), "prod"), {3}, {20, 2, 18});
  expect_values(f.scatter_reduce(0, index, f32({4, 5, 6}, {3}), "amin", false), {3}, {4, 2, 6});
}

TEST_CASE("scatter with reduce=: add and multiply, bool and complex, typed errors, backward raises as PyTorch's") {
  const Tensor index = i64({0, 1, 2, 0, 1, 1, 0, 2}, {2, 4});
  // PyTorch: torch.ones(3, 4, dtype=int64).scatter(0, index, 3, reduce="add")
  expect_values(ones({3, 4}, kInt64).scatter(0, index, Scalar(3), "add"), {3, 4}, {4, 1, 4, 4, 4, 7, 1, 1, 1, 1, 4, 4});
  Tensor src = arange(1, 9, 1, kFloat32).reshape({2, 4});
  // PyTorch: torch.full((3, 4), 2.).scatter(0, index, src, reduce="multiply")
  expect_values(full({3, 4}, 2.0).scatter(0, index, src, "multiply"), {3, 4}, {2, 2, 14, 8, 10, 24, 2, 2, 2, 2, 6, 16});
  Tensor x = ones({3, 4});
  x.scatter_(0, index, src, "add");
  expect_values(x, {3, 4}, {2, 1, 8, 5, 6, 9, 1, 1, 1, 1, 4, 9});
  // PyTorch: bool add is `or`; complex multiply: 1 * 2j * 2j = -4 where index meets twice
  CHECK(ones({3, 4}, kBool).scatter(0, index, Scalar(true), "add").all().item<bool>());
  Tensor c = ones({3, 4}, kComplex128).scatter(0, index, Scalar(kiln::complex<double>(0, 2)), "multiply");
  CHECK(kiln::real(c).select(1, 1).select(0, 1).item<double>() == -4.0);
  Tensor before = x.clone();
  CHECK(has(error_text<ValueError>([&] { x.scatter_(0, index, src, "mean"); }),
            "reduce argument must be either add or multiply"));
  CHECK(has(error_text<IndexError>([&] { x.scatter_(0, i64({0, 3}, {1, 2}), 1.0, "add"); }), "out of bounds"));
  CHECK(x.to_vector<float>() == before.to_vector<float>());
  // No formula in PyTorch either: the result has history, and backward through it raises.
  Tensor leaf = ones({3, 4}, kFloat64).requires_grad_();
  Tensor y = leaf.scatter(0, index, 2.0, "multiply");
  CHECK(y.requires_grad());
  CHECK(has(error_text<NotImplementedError>([&] { y.sum().backward(); }),
            "the derivative for 'scatter.value_reduce' is not implemented"));
  Tensor s = src.to(kFloat64).requires_grad_();
  CHECK(has(error_text<NotImplementedError>([&] {
              zeros({3, 4}, kFloat64).scatter(0, index, s, "add").sum().backward();
            }),
            "scatter.reduce"));
}

TEST_CASE("indexing: the parallel CPU paths agree with a plain loop") {
  // embedding-gradient shape: many rows added into few, along dim 0 (split by columns)
  const int64_t rows = 50, n = 40000, cols = 64;
  std::mt19937_64 rng(7);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (auto& v : idx) v = int64_t(rng() % rows);
  Tensor index = i64(idx, {n});
  Tensor source = randn({n, cols}, kFloat64);
  Tensor got = zeros({rows, cols}, kFloat64).index_add(0, index, source);
  std::vector<double> src = source.to_vector<double>(), want(size_t(rows * cols), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < cols; ++c) want[size_t(idx[size_t(i)] * cols + c)] += src[size_t(i * cols + c)];
  expect_values(got, {rows, cols}, want, 1e-12);
  // scatter_add along dim 0 with a [n, cols] index: the same sums place by place
  Tensor index2 = index.unsqueeze(1).expand({n, cols}).contiguous();
  expect_values(zeros({rows, cols}, kFloat64).scatter_add(0, index2, source), {rows, cols}, want, 1e-12);
  // gather and index_select read back what they name
  Tensor table = randn({rows, cols}, kFloat64);
  CHECK(same_values(gather(table, 0, index2), table.index_select(0, index)));
  CHECK(same_values(take_along_dim(table, index2, 0), table.index_select(0, index)));
}

TEST_CASE("take_along_dim: broadcasting apart from dim, and the flattened form") {
  Tensor x = arange(12, kFloat32).reshape({3, 4});
  // PyTorch: take_along_dim(x, [[0],[1],[3]], 1) -> [[0],[5],[11]]; [[2,0,1,2]] along 0 broadcasts
  expect_values(take_along_dim(x, i64({0, 1, 3}, {3, 1}), 1), {3, 1}, {0, 5, 11});
  CHECK(has(error_text<ShapeError>([&] { take_along_dim(x, i64({0, 1}, {2, 1}), 1); }), "broadcast"));
  expect_values(take_along_dim(x, i64({2, 0, 1, 2}, {1, 4}), 0), {1, 4}, {8, 1, 6, 11});
  expect_values(take_along_dim(x, i64({0, 1}, {1, 2})), {2}, {0, 1});
  CHECK(has(error_text<ShapeError>([&] { take_along_dim(x, i64({0}, {1}), 0); }), "same number of dimensions"));
}

TEST_CASE("indexing gradients: duplicates accumulate, overwritten places get none") {
  Tensor x = f32({1, 2, 3}, {3}).to(kFloat64).requires_grad_();
  Tensor y = gather(x, 0, i64({0, 0, 2}, {3}));
  y.sum().backward();
  expect_values(x.grad(), {3}, {2, 0, 1});
  Tensor s = zeros({3}, kFloat64).requires_grad_();
  Tensor src = ones({2}, kFloat64).requires_grad_();
  (s.scatter(0, i64({1, 2}, {2}), src) * f32({1, 2, 3}, {3}).to(kFloat64)).sum().backward();
  expect_values(s.grad(), {3}, {1, 0, 0});
  expect_values(src.grad(), {2}, {2, 3});
  // index_fill's 0-d value: each filled place once, however often index names it
  Tensor v = scalar_tensor(2.0, kFloat64).requires_grad_();
  zeros({3, 2}, kFloat64).index_fill(0, i64({1, 1, 2}, {3}), v).sum().backward();
  CHECK(v.grad().item<double>() == 4.0);
}

TEST_CASE("use_deterministic_algorithms: a process-wide flag, as PyTorch's") {
  CHECK_FALSE(are_deterministic_algorithms_enabled());
  use_deterministic_algorithms(true);
  CHECK(are_deterministic_algorithms_enabled());
  // the CPU kernels are deterministic either way
  expect_values(zeros({2}).index_add(0, i64({1, 1}, {2}), f32({1, 2}, {2})), {2}, {0, 3});
  use_deterministic_algorithms(false);
  CHECK_FALSE(are_deterministic_algorithms_enabled());
}

TEST_CASE("index_copy / index_add: slices with no elements write nothing (no storage to touch)") {
  // [3, 0] along dim 0: every slice is empty; [0, 3, 2] along dim 1: no outer slice
  Tensor empty_rows = zeros({3, 0});
  Tensor copied = empty_rows.index_copy(0, i64({0, 2}, {2}), zeros({2, 0}));
  CHECK(copied.sizes().vec() == std::vector<int64_t>{3, 0});
  Tensor added = index_add(zeros({0, 3, 2}), 1, i64({2, 1}, {2}), zeros({0, 2, 2}));
  CHECK(added.sizes().vec() == std::vector<int64_t>{0, 3, 2});
  // an index out of range is still an error (PyTorch 1.13 skips the check when nothing moves)
  CHECK(has(error_text<IndexError>([&] { empty_rows.index_copy(0, i64({3}, {1}), zeros({1, 0})); }), "index_copy"));
}
