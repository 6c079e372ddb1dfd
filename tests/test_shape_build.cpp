// flip, the triangles, diagonals, grids, splits, diff, clamp with Tensor bounds and one_hot
// beyond the generated value tests: 0-d and empty tensors, negative dims, views sharing
// storage, a failed in-place call leaving its operand alone, and errors naming op and argument.
#include <doctest/doctest.h>

#include <limits>
#include <vector>
#include "test_helpers.h"
#include "kiln/core.h"
#include "kiln/gen/api/block_diag.h"
#include "kiln/gen/api/broadcast_tensors.h"
#include "kiln/gen/api/cartesian_prod.h"
#include "kiln/gen/api/channel_shuffle.h"
#include "kiln/gen/api/clamp.h"
#include "kiln/gen/api/diag.h"
#include "kiln/gen/api/diag_embed.h"
#include "kiln/gen/api/diff.h"
#include "kiln/gen/api/flip.h"
#include "kiln/gen/api/fliplr.h"
#include "kiln/gen/api/flipud.h"
#include "kiln/gen/api/meshgrid.h"
#include "kiln/gen/api/one_hot.h"
#include "kiln/gen/api/real.h"
#include "kiln/gen/api/repeat_interleave.h"
#include "kiln/gen/api/roll.h"
#include "kiln/gen/api/split.h"
#include "kiln/gen/api/unbind.h"
#include "kiln/gen/api/chunk.h"
#include "kiln/gen/api/rot90.h"
#include "kiln/gen/api/tensor_split.h"
#include "kiln/gen/api/tile.h"
#include "kiln/gen/api/trace.h"
#include "kiln/gen/api/transpose.h"
#include "kiln/gen/api/tril.h"
#include "kiln/gen/api/triu.h"

using namespace kiln;
using namespace kiln::testing;

TEST_CASE("shape build: flip reverses, in every layout, and keeps 0-d and empty tensors") {
  Tensor x = arange(6, kFloat32).reshape({2, 3});
  expect_values(flip(x, {-1}), {2, 3}, {2, 1, 0, 5, 4, 3});
  expect_values(flip(x, {0, 1}), {2, 3}, {5, 4, 3, 2, 1, 0});
  expect_values(flip(x.t(), {0}), {3, 2}, {2, 5, 1, 4, 0, 3});  // a transposed input
  expect_values(flip(x, {}), {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor s = scalar_tensor(7.0);
  expect_values(flip(s, {0}), {}, {7});  // a 0-d tensor's one place is dim 0 or -1, as PyTorch
  CHECK(flip(zeros({0, 3}), {1}).sizes().vec() == std::vector<int64_t>{0, 3});
  Tensor c = arange(4, kInt64).to(kComplex128);
  expect_values(real(flip(c, {0})), {4}, {3, 2, 1, 0});
  Tensor b = arange(4, kInt64).eq(1);
  CHECK(flip(b, {0}).to_vector<bool>() == std::vector<bool>{false, false, true, false});
  expect_values(fliplr(x), {2, 3}, {2, 1, 0, 5, 4, 3});
  expect_values(flipud(x), {2, 3}, {3, 4, 5, 0, 1, 2});
  expect_values(rot90(x), {3, 2}, {2, 5, 1, 4, 0, 3});
  expect_values(rot90(x, -1), {3, 2}, {3, 0, 4, 1, 5, 2});
}

TEST_CASE("shape build: flip, rot90 and roll errors name the op and the argument") {
  Tensor x = zeros({2, 3});
  CHECK(has(error_text<ValueError>([&] { flip(x, {0, -2}); }), "argument 'dims': dim 0 appears multiple times"));
  CHECK(has(error_text<IndexError>([&] { flip(x, {2}); }), "flip"));
  CHECK(has(error_text<ShapeError>([] { fliplr(zeros({3})); }), "Input must be >= 2-d."));
  CHECK(has(error_text<ShapeError>([] { flipud(scalar_tensor(1.0)); }), "Input must be >= 1-d."));
  CHECK(has(error_text<ValueError>([&] { rot90(x, 1, {0}); }), "rotation dims == 2, but got dims = 1"));
  CHECK(has(error_text<ValueError>([&] { rot90(x, 1, {1, 1}); }), "dim0 = 1 and dim1 = 1"));
  CHECK(has(error_text<ShapeError>([] { rot90(zeros({3})); }), "expected total dims >= 2"));
  CHECK(has(error_text<ValueError>([&] { roll(x, {1, 2}, {0}); }), "shifts: 2, dims:1"));
  CHECK(has(error_text<ValueError>([&] { roll(x, {}, {}); }), "`shifts` required"));
}

TEST_CASE("shape build: roll, repeat, tile and repeat_interleave on edge shapes") {
  Tensor x = arange(6, kFloat32).reshape({2, 3});
  expect_values(roll(x, {1}), {2, 3}, {5, 0, 1, 2, 3, 4});  // the flattened tensor
  expect_values(roll(x, {-1}, {-1}), {2, 3}, {1, 2, 0, 4, 5, 3});
  expect_values(roll(scalar_tensor(2.0), {3}), {}, {2});
  CHECK(roll(zeros({0, 2}), {1}, {0}).numel() == 0);
  expect_values(x.repeat({1, 2}), {2, 6}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  CHECK(scalar_tensor(2.0).repeat({2, 3}).sizes().vec() == std::vector<int64_t>{2, 3});
  CHECK(x.repeat({0, 1}).numel() == 0);
  CHECK(has(error_text<ValueError>([&] { x.repeat({2}); }), "can not be smaller than number of dimensions"));
  CHECK(has(error_text<ValueError>([&] { x.repeat({2, -1}); }), "negative dimension -1"));
  CHECK(tile(x, {2}).sizes().vec() == std::vector<int64_t>{2, 6});
  expect_values(repeat_interleave(x, 2), {12}, {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5});
  expect_values(repeat_interleave(x, 2, -2), {4, 3}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  CHECK(has(error_text<ValueError>([&] { repeat_interleave(x, -1); }), "repeats can not be negative"));
  CHECK(has(error_text<ValueError>([&] { repeat_interleave(x, 2, 0, 5); }), "argument 'output_size'"));
}

TEST_CASE("shape build: tril and triu, in place and out=, and a failed tril_ changes nothing") {
  Tensor x = arange(1, 7, 1, kFloat32).reshape({2, 3});
  expect_values(tril(x), {2, 3}, {1, 0, 0, 4, 5, 0});
  expect_values(triu(x, 1), {2, 3}, {0, 2, 3, 0, 0, 6});
  expect_values(tril(x.t()), {3, 2}, {1, 0, 2, 5, 3, 6});  // a transposed input
  expect_values(tril(x, -5), {2, 3}, {0, 0, 0, 0, 0, 0});
  Tensor y = x.clone();
  y.tril_(-1);
  expect_values(y, {2, 3}, {0, 0, 0, 4, 0, 0});
  Tensor view = x.clone().t();  // in place through a non-contiguous tensor
  view.triu_();
  expect_values(view, {3, 2}, {1, 4, 0, 5, 0, 0});
  Tensor out = zeros({1});
  tril_out(out, x, 1);
  expect_values(out, {2, 3}, {1, 2, 0, 4, 5, 6});
  Tensor v = arange(3, kFloat32);
  CHECK(has(error_text<IndexError>([&] { v.tril_(); }), "tril"));
  expect_values(v, {3}, {0, 1, 2});  // unchanged
  CHECK(has(error_text<IndexError>([] { triu(scalar_tensor(1.0)); }), "triu"));
  CHECK(tril(zeros({0, 3})).numel() == 0);
  Tensor b = ones({2, 2}, kBool);
  CHECK(triu(b).to_vector<bool>() == std::vector<bool>{true, true, false, true});
  expect_values(tril_indices(3, 3), {2, 6}, {0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2});
  expect_values(triu_indices(2, 3, 1), {2, 3}, {0, 0, 1, 1, 2, 2});
  CHECK(tril_indices(3, 3).dtype() == kInt64);
  // offsets past a corner, and a huge empty result (the fuzzer's timeout): PyTorch's sizes
  const int64_t huge = int64_t(1) << 62;
  CHECK(tril_indices(3, 3, huge).sizes().vec() == std::vector<int64_t>{2, 9});
  CHECK(tril_indices(3, 3, -huge).sizes().vec() == std::vector<int64_t>{2, 0});
  CHECK(triu_indices(3, 3, -huge).sizes().vec() == std::vector<int64_t>{2, 9});
  CHECK(triu_indices(3, 3, huge).sizes().vec() == std::vector<int64_t>{2, 0});
  CHECK(triu_indices(huge, 0).sizes().vec() == std::vector<int64_t>{2, 0});
  CHECK(tril_indices(huge, 1, -huge).sizes().vec() == std::vector<int64_t>{2, 0});
  expect_values(tril_indices(3, 4, -1), {2, 3}, {1, 2, 2, 0, 0, 1});
  CHECK(has(error_text<ValueError>([&] { tril_indices(huge, 100); }), "overflows int64"));
  // a 0-d tensor has no dim to repeat along (PyTorch: IndexError); without dim it is flattened
  CHECK(has(error_text<IndexError>([] { repeat_interleave(scalar_tensor(5.0), 2, 0); }), "no dimensions"));
  expect_values(repeat_interleave(scalar_tensor(5.0), 2), {2}, {5, 5});
  CHECK(tril_indices(3, 3, 0, kInt32).dtype() == kInt32);
  CHECK(has(error_text<ValueError>([] { tril_indices(-1, 3); }), "argument 'row': row must be non-negative"));
  CHECK(has(error_text<ValueError>([] { triu_indices(3, -1); }), "argument 'col'"));
  CHECK(has(error_text<DTypeError>([] { tril_indices(3, 3, 0, kFloat32); }), "not implemented for"));
}

TEST_CASE("shape build: diagonals, trace and block_diag") {
  Tensor v = arange(1, 3, 1, kFloat32);
  expect_values(diag(v, 1), {3, 3}, {0, 1, 0, 0, 0, 2, 0, 0, 0});
  Tensor m = arange(6, kFloat32).reshape({2, 3});
  Tensor d = diag(m);
  expect_values(d, {2}, {0, 4});
  CHECK(d.storage() != m.storage());  // diag copies, as PyTorch
  CHECK(has(error_text<ShapeError>([] { diag(zeros({2, 2, 2})); }), "matrix or a vector expected"));
  CHECK(has(error_text<ShapeError>([] { diag(scalar_tensor(1.0)); }), "matrix or a vector expected"));
  CHECK(diag_embed(m, 0, 0, -1).sizes().vec() == std::vector<int64_t>{3, 2, 3});
  CHECK(has(error_text<ValueError>([&] { diag_embed(m, 0, 0, -3); }), "diagonal dimensions cannot be identical"));
  CHECK(has(error_text<IndexError>([] { diag_embed(scalar_tensor(1.0)); }), "diag_embed"));
  expect_values(diagflat(scalar_tensor(2.0)), {1, 1}, {2});
  expect_values(trace(m), {}, {4});
  CHECK(trace(ones({3, 3}, kInt32)).dtype() == kInt64);
  CHECK(has(error_text<ShapeError>([] { trace(zeros({3})); }), "expected a matrix, but got tensor with dim 1"));
  CHECK(has(error_text<DTypeError>([] { trace(zeros({2, 2}, kBool)); }), "trace"));
  Tensor bd = block_diag({ones({1, 2}), ones({2}, kInt32), scalar_tensor(5.0)});
  expect_values(bd, {3, 5}, {1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 5});
  CHECK(block_diag({}).sizes().vec() == std::vector<int64_t>{1, 0});
  CHECK(has(error_text<ShapeError>([] { block_diag({zeros({2, 2, 2})}); }), "Input 0 has 3 dimensions"));
}

TEST_CASE("shape build: meshgrid and broadcast_tensors return views, tensor_split too") {
  Tensor a = arange(2, kFloat32), b = arange(3, kFloat32);
  TensorList g = meshgrid({a, b}, "xy");
  REQUIRE(g.size() == 2);
  CHECK(g[0].sizes().vec() == std::vector<int64_t>{3, 2});
  CHECK(g[0].storage() == a.storage());
  CHECK(meshgrid({a, scalar_tensor(1.0)})[0].sizes().vec() == std::vector<int64_t>{2, 1});
  CHECK(has(error_text<ValueError>([&] { meshgrid({a}, "yx"); }), "argument 'indexing'"));
  CHECK(has(error_text<ShapeError>([] { meshgrid({zeros({2, 2})}); }), "Expected 0D or 1D tensor"));
  CHECK(has(error_text<DTypeError>([&] { meshgrid({a, arange(2, kInt64)}); }), "same dtype"));
  CHECK(has(error_text<ValueError>([] { meshgrid(TensorList{}); }), "non-empty TensorList"));
  expect_values(cartesian_prod({a, b}), {6, 2}, {0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2});
  CHECK(has(error_text<ShapeError>([] { cartesian_prod({zeros({2, 2})}); }), "Expect a 1D vector"));
  TensorList bt = broadcast_tensors({zeros({3, 1}), b});
  CHECK(bt[1].sizes().vec() == std::vector<int64_t>{3, 3});
  CHECK(bt[1].storage() == b.storage());
  CHECK(has(error_text<ShapeError>([] {
              broadcast_tensors({zeros({2, 3}), zeros({4})});
            }),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"));
  Tensor x = arange(5, kFloat32);
  TensorList parts = tensor_split(x, 3);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].numel() == 2);
  CHECK(parts[2].numel() == 1);
  CHECK(parts[1].storage() == x.storage());
  TensorList cut = tensor_split(x, {4, 2});
  CHECK(cut[1].numel() == 0);
  CHECK(cut[2].numel() == 3);
  CHECK(tensor_split(x, scalar_tensor(2, kInt64)).size() == 2);
  CHECK(has(error_text<ValueError>([&] { tensor_split(x, 0); }), "number of sections must be larger than 0"));
  CHECK(has(error_text<ShapeError>([] { tensor_split(scalar_tensor(1.0), 2); }), "at least a 1-dimensional"));
  CHECK(has(error_text<DTypeError>([&] { tensor_split(x, arange(2, kFloat32)); }), "dtype of long"));
}

TEST_CASE("shape build: diff, clamp with Tensor bounds and one_hot") {
  Tensor x = from_vector(std::vector<double>{1, 4, 9, 16}, {4});
  expect_values(diff(x), {3}, {3, 5, 7});
  expect_values(diff(x, 2), {2}, {2, 2});
  expect_values(diff(x, 9), {0}, {});
  expect_values(diff(x, 0), {4}, {1, 4, 9, 16});
  expect_values(diff(x, 1, -1, scalar_tensor(0.0).reshape({1})), {4}, {1, 3, 5, 7});
  CHECK(has(error_text<ShapeError>([] { diff(scalar_tensor(1.0)); }), "at least one-dimensional"));
  CHECK(has(error_text<ShapeError>([&] { diff(x, 1, 0, zeros({1, 1})); }), "argument 'prepend'"));
  Tensor lo = from_vector(std::vector<double>{0, NAN, 2, 0}, {4});
  expect_values(clamp(x, lo, scalar_tensor(10.0)), {4}, {1, NAN, 9, 10});
  CHECK(has(error_text<ValueError>([&] { clamp(x, Tensor(), Tensor()); }), "At least one of 'min' or 'max'"));
  {  // ties go to self, a bound below min goes to max (PyTorch: [0, 1, 0], 1, [0, 0, 1])
    Tensor v = from_vector(std::vector<double>{1, 2, 3}, {3}).requires_grad_();
    Tensor low = scalar_tensor(2.0, kFloat64).requires_grad_();
    Tensor high = from_vector(std::vector<double>{3, 3, 1}, {3}).requires_grad_();
    clamp(v, low, high).sum().backward();
    expect_values(v.grad(), {3}, {0, 1, 0});
    expect_values(low.grad(), {}, {1});
    expect_values(high.grad(), {3}, {0, 0, 1});
  }
  Tensor idx = from_vector(std::vector<int64_t>{2, 0}, {2});
  expect_values(one_hot(idx), {2, 3}, {0, 0, 1, 1, 0, 0});
  CHECK(one_hot(zeros({0}, kInt64), 4).sizes().vec() == std::vector<int64_t>{0, 4});
  CHECK(has(error_text<DTypeError>([] { one_hot(zeros({2}, kInt32)); }), "one_hot"));
  CHECK(has(error_text<ValueError>([&] { one_hot(idx, 2); }), "smaller than num_classes"));
  CHECK(has(error_text<ValueError>([&] { one_hot(idx.neg()); }), "must be non-negative"));
  CHECK(has(error_text<ValueError>([] { one_hot(zeros({0}, kInt64)); }), "Can not infer"));
}

TEST_CASE("channel_shuffle: channel i * groups + j is input channel j * (C / groups) + i, on any layout") {
  // [1, 6, 2] holding 10 * channel + position; groups 3: channels 0 2 4 1 3 5
  std::vector<double> v;
  for (int c = 0; c < 6; ++c)
    for (int s = 0; s < 2; ++s) v.push_back(10 * c + s);
  Tensor x = from_vector<double>(v, {1, 6, 2});
  expect_values(channel_shuffle(x, 3), {1, 6, 2}, {0, 1, 20, 21, 40, 41, 10, 11, 30, 31, 50, 51});
  // a non-contiguous input (the same values, stored transposed) gives the same result
  Tensor t = x.transpose(1, 2).contiguous().transpose(1, 2);
  CHECK_FALSE(t.is_contiguous());
  expect_values(channel_shuffle(t, 3), {1, 6, 2}, {0, 1, 20, 21, 40, 41, 10, 11, 30, 31, 50, 51});
  // groups and C / groups undo each other, which is the gradient
  Tensor w = x.clone().requires_grad_();
  Tensor y = channel_shuffle(w, 2);
  CHECK(same_values(channel_shuffle(y.detach(), 3), x));
  y.backward(x);
  CHECK(same_values(w.grad(), channel_shuffle(x, 3)));
  CHECK(channel_shuffle(zeros({0, 4, 3}), 2).sizes().vec() == std::vector<int64_t>{0, 4, 3});
}

TEST_CASE("channel_shuffle: PyTorch's errors, naming the argument") {
  CHECK(has(error_text<ShapeError>([] { channel_shuffle(zeros({2, 6}), 3); }),
            "channel_shuffle expects input with > 2 dims, but got input with sizes [2, 6]"));
  CHECK(has(error_text<ValueError>([] { channel_shuffle(zeros({2, 6, 2}), 0); }),
            "argument 'groups': Number of groups to divide channels in must be positive. Value of groups: 0"));
  CHECK(has(error_text<ValueError>([] { channel_shuffle(zeros({2, 5, 2}), 2); }),
            "Number of channels must be divisible by groups. Got 5 channels and 2 groups."));
}

TEST_CASE("split and chunk: a size near INT64_MAX gives one piece, an empty dim one empty piece") {
  // the fuzzer's finding: start + split_size overflowed, and split looped until memory ran out
  Tensor x = arange(5, kFloat32);
  const int64_t huge = std::numeric_limits<int64_t>::max();
  TensorList one = split(x, huge);
  REQUIRE(one.size() == 1);
  expect_values(one[0], {5}, {0, 1, 2, 3, 4});
  CHECK(chunk(x, huge).size() == 5);  // pieces of ceil(5 / huge) = 1 (PyTorch 1.13 overflows here and raises)
  TensorList parts = split(x, 2);
  REQUIRE(parts.size() == 3);
  expect_values(parts[2], {1}, {4});
  // a count no memory holds is a ValueError naming the argument (PyTorch runs out of memory)
  Tensor wide = empty({0, int64_t(1) << 40});
  CHECK(has(error_text<ValueError>([&] { split(wide, 1, 1); }), "argument 'split_size': split would return"));
  CHECK(has(error_text<ValueError>([&] { wide.unbind(1); }), "unbind would return 1099511627776 tensors"));
  TensorList empty = split(zeros({0, 3}), 0);
  REQUIRE(empty.size() == 1);
  CHECK(empty[0].sizes().vec() == std::vector<int64_t>{0, 3});
}
