// View and shape ops (runtime/src/composite): sizes, strides, offsets, values, storage sharing and
// errors. Expected geometry is PyTorch 1.13's (checked with torch), values derived by hand.
#include <doctest/doctest.h>

#include <string>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/diagonal_backward.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/select_backward.h"
#include "kiln/gen/api/slice_backward.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {

using F = std::vector<float>;

// 0, 1, ... numel-1 as float32 in `shape`.
Tensor iota(IntArrayRef shape) { return arange(numel_of(shape), TensorOptions(kFloat32)).reshape(shape); }

void check_geometry(const Tensor& t, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  CHECK(t.sizes().vec() == sizes);
  CHECK(t.strides().vec() == strides);
  CHECK(t.storage_offset() == offset);
}

bool shares_storage(const Tensor& a, const Tensor& b) { return a.storage().get() == b.storage().get(); }

}  // namespace

TEST_CASE("view: infers -1, shares storage, follows strides") {
  Tensor x = iota({3, 4});
  Tensor v = x.view({2, 6});
  check_geometry(v, {2, 6}, {6, 1}, 0);
  CHECK(shares_storage(v, x));
  check_geometry(x.view({-1}), {12}, {1}, 0);
  check_geometry(x.view({-1, 3}), {4, 3}, {3, 1}, 0);
  // a non-contiguous tensor can be viewed when no new dim spans two of its chunks
  Tensor tv = x.t().view({2, 2, 3});
  check_geometry(tv, {2, 2, 3}, {2, 1, 4}, 0);
  CHECK(tv.to_vector<float>() == F{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  Tensor cols = x.slice(1, 0, 2);
  check_geometry(cols.view({3, 2, 1}), {3, 2, 1}, {4, 1, 1}, 0);
  check_geometry(zeros({0, 3}).view({3, 0}), {3, 0}, {1, 1}, 0);
  check_geometry(scalar_tensor(5.0, TensorOptions(kFloat32)).view({1}), {1}, {1}, 0);
  check_geometry(zeros({1}).view({}), {}, {}, 0);
  // writes through the view reach the base
  v.select(0, 1).fill_(-1);
  CHECK(x.to_vector<float>() == F{0, 1, 2, 3, 4, 5, -1, -1, -1, -1, -1, -1});
}

TEST_CASE("view: errors") {
  Tensor x = iota({3, 4});
  std::string msg = error_text<ShapeError>([&] { x.t().view({12}); });
  CHECK(has(msg, "kiln::view: argument 'size': view size [12] is not compatible with input tensor's size [4, 3]"));
  CHECK(has(msg, "Use .reshape(...) instead."));
  CHECK(error_text<ShapeError>([&] { x.view({5, -1}); }) ==
        "kiln::view: argument 'size': shape [5, -1] is invalid for input of size 12");
  CHECK_THROWS_AS(x.view({-1, -1}), ValueError);
  CHECK_THROWS_AS(x.view({-2, 6}), ValueError);
  CHECK_THROWS_AS(zeros({0, 3}).view({0, -1}), ShapeError);  // -1 would be ambiguous
}

TEST_CASE("reshape: a view when possible, else a contiguous copy") {
  Tensor x = iota({3, 4});
  Tensor r = x.reshape({4, 3});
  CHECK(shares_storage(r, x));
  check_geometry(r, {4, 3}, {3, 1}, 0);
  Tensor c = x.t().reshape({12});
  CHECK_FALSE(shares_storage(c, x));
  check_geometry(c, {12}, {1}, 0);
  CHECK(c.to_vector<float>() == F{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  check_geometry(iota({2, 3, 4}).reshape({-1, 4}), {6, 4}, {4, 1}, 0);
  CHECK_THROWS_AS(x.reshape({5, 3}), ShapeError);
}

TEST_CASE("transpose, t, permute") {
  Tensor y = iota({2, 3, 4});
  Tensor tr = y.transpose(-1, 0);
  check_geometry(tr, {4, 3, 2}, {1, 4, 12}, 0);
  CHECK(shares_storage(tr, y));
  CHECK(tr.to_vector<float>() == F{0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23});
  check_geometry(y.transpose(1, 1), {2, 3, 4}, {12, 4, 1}, 0);
  CHECK_THROWS_AS(y.transpose(0, 3), IndexError);

  check_geometry(iota({3, 4}).t(), {4, 3}, {1, 4}, 0);
  check_geometry(iota({4}).t(), {4}, {1}, 0);
  check_geometry(scalar_tensor(1.0, TensorOptions(kFloat32)).t(), {}, {}, 0);
  CHECK_THROWS_AS(y.t(), ShapeError);

  Tensor p = y.permute({2, 0, 1});
  check_geometry(p, {4, 2, 3}, {1, 12, 4}, 0);
  CHECK(p.to_vector<float>() == F{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  check_geometry(y.permute({-1, 1, 0}), {4, 3, 2}, {1, 4, 12}, 0);
  CHECK_THROWS_AS(y.permute({0, 1}), ShapeError);
  CHECK_THROWS_AS(y.permute({0, 1, 1}), ValueError);
  CHECK_THROWS_AS(y.permute({0, 1, 3}), IndexError);
}

TEST_CASE("expand: stride 0 on broadcast dims, -1 keeps, new leading dims") {
  Tensor col = tensor<float>({1, 2, 3}).reshape({3, 1});
  Tensor e = col.expand({2, 3, 4});
  check_geometry(e, {2, 3, 4}, {0, 1, 0}, 0);
  CHECK(shares_storage(e, col));
  CHECK(e.select(0, 1).to_vector<float>() == F{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  check_geometry(col.expand({-1, 5}), {3, 5}, {1, 0}, 0);
  check_geometry(col.expand({1, 3, 4}), {1, 3, 4}, {3, 1, 0}, 0);  // a new size-1 dim keeps a real stride
  check_geometry(col.expand({2, 1, 3, 4}), {2, 1, 3, 4}, {0, 3, 1, 0}, 0);
  check_geometry(scalar_tensor(2.0, TensorOptions(kFloat32)).expand({2, 3}), {2, 3}, {0, 0}, 0);

  CHECK(error_text<ShapeError>([&] { col.expand({2, 4}); }) ==
        "kiln::expand: argument 'size': the expanded size of the tensor (2) must match the existing size (3) at "
        "non-singleton dimension 0.  Target sizes: [2, 4].  Tensor sizes: [3, 1]");
  CHECK_THROWS_AS(col.expand({4}), ShapeError);         // fewer sizes than dims
  CHECK_THROWS_AS(col.expand({-1, 3, 4}), ShapeError);  // -1 in a new leading dim
}

TEST_CASE("squeeze, unsqueeze, flatten") {
  Tensor x = iota({3, 1, 4, 1});
  check_geometry(x.squeeze(), {3, 4}, {4, 1}, 0);
  check_geometry(x.squeeze(1), {3, 4, 1}, {4, 1, 1}, 0);
  check_geometry(x.squeeze(0), {3, 1, 4, 1}, {4, 4, 1, 1}, 0);  // not size 1: unchanged
  check_geometry(x.squeeze(-1), {3, 1, 4}, {4, 4, 1}, 0);
  CHECK(shares_storage(x.squeeze(), x));
  check_geometry(scalar_tensor(1.0, TensorOptions(kFloat32)).squeeze(0), {}, {}, 0);

  Tensor m = iota({3, 4});
  check_geometry(m.unsqueeze(1), {3, 1, 4}, {4, 4, 1}, 0);
  check_geometry(m.unsqueeze(-1), {3, 4, 1}, {4, 1, 1}, 0);
  check_geometry(m.unsqueeze(0), {1, 3, 4}, {12, 4, 1}, 0);
  check_geometry(m.t().unsqueeze(1), {4, 1, 3}, {1, 12, 4}, 0);
  check_geometry(scalar_tensor(1.0, TensorOptions(kFloat32)).unsqueeze(-1), {1}, {1}, 0);
  CHECK_THROWS_AS(m.unsqueeze(3), IndexError);

  check_geometry(iota({2, 3, 4}).flatten(), {24}, {1}, 0);
  check_geometry(iota({2, 3, 4, 5}).flatten(1, 2), {2, 12, 5}, {60, 5, 1}, 0);
  check_geometry(scalar_tensor(1.0, TensorOptions(kFloat32)).flatten(), {1}, {1}, 0);
  Tensor ft = m.t().flatten();  // not viewable: copied
  CHECK_FALSE(shares_storage(ft, m));
  CHECK(ft.to_vector<float>() == F{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK_THROWS_AS(iota({2, 3, 4}).flatten(2, 1), ValueError);
}

TEST_CASE("narrow and slice") {
  Tensor x = iota({5, 4});
  Tensor n = x.narrow(0, 1, 3);
  check_geometry(n, {3, 4}, {4, 1}, 4);
  CHECK(shares_storage(n, x));
  Tensor n2 = x.narrow(1, -2, 2);
  check_geometry(n2, {5, 2}, {4, 1}, 2);
  CHECK(n2.to_vector<float>() == F{2, 3, 6, 7, 10, 11, 14, 15, 18, 19});
  check_geometry(x.narrow(0, 5, 0), {0, 4}, {4, 1}, 20);
  check_geometry(x.narrow(0, -5, 5), {5, 4}, {4, 1}, 0);
  CHECK(error_text<IndexError>([&] { x.narrow(0, 2, 4); }) ==
        "kiln::narrow: argument 'length': start (2) + length (4) exceeds dimension size (5)");
  CHECK_THROWS_AS(x.narrow(0, 6, 0), IndexError);
  CHECK_THROWS_AS(x.narrow(0, -6, 1), IndexError);
  CHECK_THROWS_AS(x.narrow(0, 1, -1), ValueError);

  Tensor y = iota({6, 4});
  Tensor s = y.slice(0, 1, 5, 2);
  check_geometry(s, {2, 4}, {8, 1}, 4);
  CHECK(s.to_vector<float>() == F{4, 5, 6, 7, 12, 13, 14, 15});
  check_geometry(y.slice(1, -3), {6, 3}, {4, 1}, 1);
  check_geometry(y.slice(0, -100, 100), {6, 4}, {4, 1}, 0);  // clamped like Python
  check_geometry(y.slice(0, 4, 2), {0, 4}, {4, 1}, 16);     // end before start: empty
  check_geometry(y.slice(0, std::nullopt, std::nullopt, 4), {2, 4}, {16, 1}, 0);
  check_geometry(y.slice(1, 1, -1, 2), {6, 1}, {4, 2}, 1);
  CHECK_THROWS_AS(y.slice(0, 0, 6, 0), ValueError);
  CHECK_THROWS_AS(y.slice(2), IndexError);
}

TEST_CASE("select") {
  Tensor x = iota({3, 4});
  Tensor row = x.select(0, 1);
  check_geometry(row, {4}, {1}, 4);
  CHECK(row.to_vector<float>() == F{4, 5, 6, 7});
  Tensor col = x.select(1, -1);
  check_geometry(col, {3}, {4}, 3);
  CHECK(col.to_vector<float>() == F{3, 7, 11});
  CHECK(shares_storage(col, x));
  check_geometry(x.select(0, 2).select(0, 3), {}, {}, 11);
  CHECK(error_text<IndexError>([&] { x.select(0, 3); }) ==
        "kiln::select: argument 'index': index 3 is out of range for tensor of size [3, 4] at dimension 0");
  CHECK_THROWS_AS(x.select(1, -5), IndexError);
  CHECK_THROWS_AS(scalar_tensor(1.0, TensorOptions(kFloat32)).select(0, 0), IndexError);
  // writing through a select changes the base
  col.fill_(0);
  CHECK(x.to_vector<float>() == F{0, 1, 2, 0, 4, 5, 6, 0, 8, 9, 10, 0});
}

TEST_CASE("diagonal") {
  Tensor sq = iota({4, 4});
  Tensor d = sq.diagonal();
  check_geometry(d, {4}, {5}, 0);
  CHECK(d.to_vector<float>() == F{0, 5, 10, 15});
  CHECK(shares_storage(d, sq));
  Tensor up = iota({3, 5}).diagonal(1);
  check_geometry(up, {3}, {6}, 1);
  CHECK(up.to_vector<float>() == F{1, 7, 13});
  Tensor low = iota({2, 4, 3}).diagonal(-1, 1, 2);
  check_geometry(low, {2, 3}, {12, 4}, 3);
  CHECK(low.to_vector<float>() == F{3, 7, 11, 15, 19, 23});
  Tensor swapped = iota({3, 5}).diagonal(0, 1, 0);  // dims in either order
  check_geometry(swapped, {3}, {6}, 0);
  check_geometry(iota({3, 5}).diagonal(7), {0}, {6}, 0);  // off the end: empty, offset untouched
  check_geometry(iota({3, 5}).diagonal(-9), {0}, {6}, 0);
  CHECK_THROWS_AS(sq.diagonal(0, 0, 0), ValueError);
  CHECK_THROWS_AS(iota({4}).diagonal(), IndexError);
}

TEST_CASE("view backward functions scatter into zeros") {
  Tensor g = iota({2, 4}) + 1;
  Tensor s = slice_backward(g, {6, 4}, 0, 1, 5, 2);
  CHECK(s.sizes().equals({6, 4}));
  CHECK(s.to_vector<float>() == F{0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0});
  // narrow's gradient passes end = INT64_MAX-style bounds and negative starts through slice's rules
  Tensor s2 = slice_backward(tensor<float>({7, 8}), {4}, 0, -2, INT64_MAX, 1);
  CHECK(s2.to_vector<float>() == F{0, 0, 7, 8});

  Tensor sel = select_backward(tensor<float>({1, 2, 3}), {3, 3}, 1, -1);
  CHECK(sel.to_vector<float>() == F{0, 0, 1, 0, 0, 2, 0, 0, 3});

  Tensor dg = diagonal_backward(tensor<float>({1, 2, 3}), {3, 5}, 1, 0, 1);
  CHECK(dg.to_vector<float>() == F{0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0});
  Tensor gd = tensor<double>({1, 2});
  CHECK(diagonal_backward(gd, {2, 2}, 0, 0, 1).dtype() == kFloat64);
  CHECK_THROWS_AS(select_backward(tensor<float>({1, 2}), {3, 3}, 0, 0), ShapeError);
}

TEST_CASE("contiguous, clone, to") {
  Tensor x = iota({3, 4});
  CHECK(x.contiguous().is_same(x));
  Tensor c = x.t().contiguous();
  CHECK_FALSE(shares_storage(c, x));
  check_geometry(c, {4, 3}, {3, 1}, 0);
  CHECK(c.to_vector<float>() == F{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});

  Tensor k = x.slice(1, 1, 3).clone();
  CHECK_FALSE(shares_storage(k, x));
  check_geometry(k, {3, 2}, {2, 1}, 0);
  CHECK(k.to_vector<float>() == F{1, 2, 5, 6, 9, 10});

  CHECK(x.to(kFloat32).is_same(x));
  Tensor copied = x.to(kFloat32, false, true);
  CHECK_FALSE(shares_storage(copied, x));
  Tensor i = (x * 0.5).to(kInt32);
  CHECK(i.dtype() == kInt32);
  CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5});
}

TEST_CASE("cat: promotion, legacy empty tensors, shape checks") {
  Tensor a = arange(6, TensorOptions(kInt32)).reshape({2, 3});
  Tensor b = tensor<float>({0.5f, 1.5f, 2.5f}).reshape({1, 3});
  Tensor r = cat({a, b});
  CHECK(r.dtype() == kFloat32);
  check_geometry(r, {3, 3}, {3, 1}, 0);
  CHECK(r.to_vector<float>() == F{0, 1, 2, 3, 4, 5, 0.5f, 1.5f, 2.5f});

  Tensor c = cat({iota({2, 3}), iota({2, 1}), iota({2, 2})}, 1);
  check_geometry(c, {2, 6}, {6, 1}, 0);
  CHECK(c.to_vector<float>() == F{0, 1, 2, 0, 0, 1, 3, 4, 5, 1, 2, 3});
  CHECK(cat({iota({2, 3}), iota({2, 1})}, -1).sizes().equals({2, 4}));

  // a 1-D empty tensor is skipped whatever its shape, but still takes part in promotion
  Tensor legacy = empty({0}, TensorOptions(kFloat64));
  Tensor skipped = cat({a, legacy});
  CHECK(skipped.dtype() == kFloat64);
  CHECK(skipped.sizes().equals({2, 3}));
  CHECK(cat({legacy, legacy}).sizes().equals({0}));
  CHECK(cat({zeros({0, 3}), iota({2, 3})}).sizes().equals({2, 3}));
  Tensor bools = cat({zeros({1, 3}, TensorOptions(kBool)), zeros({1, 3}, TensorOptions(kUInt8))});
  CHECK(bools.dtype() == kUInt8);

  // non-contiguous inputs are read through their strides
  Tensor nc = cat({iota({3, 2}).t(), iota({2, 1})}, 1);
  CHECK(nc.to_vector<float>() == F{0, 2, 4, 0, 1, 3, 5, 1});

  CHECK_THROWS_AS(cat({}), ValueError);
  CHECK(error_text<ShapeError>([&] { cat({a, zeros({2, 4})}); }) ==
        "kiln::cat: argument 'tensors': sizes of tensors must match except in dimension 0: expected size 3 but got "
        "size 4 for tensor 1 in the list (dimension 1)");
  CHECK_THROWS_AS(cat({a, zeros({2})}), ShapeError);
  CHECK(error_text<ShapeError>([&] { cat({a, scalar_tensor(1, TensorOptions(kInt32))}); }) ==
        "kiln::cat: argument 'tensors': zero-dimensional tensor (at position 1) cannot be concatenated");
  CHECK_THROWS_AS(cat({a, a}, 2), IndexError);
  CHECK_THROWS_AS(cat({zeros({2, 0}), a}), ShapeError);
}

TEST_CASE("matmul: every rank combination") {
  Tensor a = iota({2, 3}), b = iota({3, 2}), v = iota({3});
  Tensor mm_ = matmul(a, b);
  CHECK(mm_.sizes().equals({2, 2}));
  CHECK(mm_.to_vector<float>() == F{10, 13, 28, 40});
  Tensor dot_ = matmul(v, v);
  CHECK(dot_.dim() == 0);
  CHECK(dot_.item<float>() == 5);
  CHECK(matmul(a, v).to_vector<float>() == F{5, 14});
  Tensor vm = matmul(iota({2}), a);
  CHECK(vm.sizes().equals({3}));
  CHECK(vm.to_vector<float>() == F{3, 4, 5});

  // batched @ matrix folds into one mm
  Tensor bm = matmul(iota({2, 3, 4}), iota({4, 5}));
  CHECK(bm.sizes().equals({2, 3, 5}));
  CHECK(bm.to_vector<float>() == F{70, 76, 82, 88, 94, 190, 212, 234, 256, 278, 310, 348, 386, 424, 462,
                                   430, 484, 538, 592, 646, 550, 620, 690, 760, 830, 670, 756, 842, 928, 1014});
  Tensor bv = matmul(iota({2, 3, 4}), iota({4}));
  CHECK(bv.sizes().equals({2, 3}));
  CHECK(bv.to_vector<float>() == F{14, 38, 62, 86, 110, 134});
  Tensor vb = matmul(iota({4}), iota({2, 4, 3}));
  CHECK(vb.sizes().equals({2, 3}));
  CHECK(vb.to_vector<float>() == F{42, 48, 54, 114, 120, 126});

  // broadcast batch dims: [2, 1] with [5] -> [2, 5]
  Tensor bb = matmul(iota({2, 1, 3, 4}), iota({5, 4, 2}));
  CHECK(bb.sizes().equals({2, 5, 3, 2}));
  CHECK(bb.select(0, 0).select(0, 0).to_vector<float>() == F{28, 34, 76, 98, 124, 162});
  CHECK(bb.select(0, 1).select(0, 3).to_vector<float>() == F{1468, 1522, 1900, 1970, 2332, 2418});
  CHECK(bb.sum().item<double>() == 54420);

  // a transposed operand is read through its strides
  CHECK(matmul(iota({3, 2}).t(), b).to_vector<float>() == F{20, 26, 26, 35});

  CHECK(error_text<ShapeError>([&] { matmul(a, a); }) ==
        "kiln::matmul: argument 'other': shapes [2, 3] and [2, 3] cannot be multiplied (2x3 and 2x3)");
  CHECK_THROWS_AS(matmul(scalar_tensor(1.0, TensorOptions(kFloat32)), v), ShapeError);
  CHECK_THROWS_AS(matmul(iota({2, 2, 3}), iota({3, 3, 2})), ShapeError);  // batch 2 vs 3
}

TEST_CASE("as_strided: storage-relative views, PyTorch's checks, gradients where places repeat") {
  const Tensor x = iota({3, 4});
  // PyTorch: x.t().as_strided((2, 2), (1, 2)) reads the storage, not the transposed values
  expect_values(x.t().as_strided({2, 2}, {1, 2}), {2, 2}, {0, 2, 1, 3});
  // the offset defaults to self's own (4 for x[1:]), and an explicit one is absolute
  const Tensor rows = x.narrow(0, 1, 2);
  expect_values(rows.as_strided({2}, {1}), {2}, {4, 5});
  check_geometry(rows.as_strided({2}, {1}, 0), {2}, {1}, 0);
  CHECK(x.as_strided({0, 3}, {1, 1}, 100).numel() == 0);  // an empty view needs no storage
  // writes go through to the storage
  Tensor z = zeros({6});
  z.as_strided({2}, {3}, 1).fill_(7.0);
  expect_values(z, {6}, {0, 7, 0, 0, 7, 0});
  CHECK(has(error_text<ShapeError>([&] { x.as_strided({2, 2}, {1}); }), "mismatch in length of strides and shape"));
  CHECK(has(error_text<ShapeError>([&] { x.as_strided({2}, {-1}); }), "Negative strides are not supported"));
  CHECK(has(error_text<ValueError>([&] { x.as_strided({2}, {1}, -1); }), "invalid storage offset -1"));
  CHECK(has(error_text<ShapeError>([&] {
              x.as_strided({4, 4}, {4, 1});
            }),
            "requiring a storage size of 64 are out of bounds for storage of size 48"));
  const int64_t big = int64_t(1) << 62;  // sizes and strides whose span wraps 64 bits
  CHECK(has(error_text<ShapeError>([&] { x.as_strided({big, big}, {big, big}); }), "more than 2^63"));
  // PyTorch: arange(6).as_strided((3, 2), (1, 1)) weighted by 1..6 -> grad [1, 5, 9, 6, 0, 0]
  Tensor a = arange(6, TensorOptions(kFloat64)).requires_grad_();
  (a.as_strided({3, 2}, {1, 1}) * arange(1, 7, 1, TensorOptions(kFloat64)).reshape({3, 2})).sum().backward();
  expect_values(a.grad(), {6}, {1, 5, 9, 6, 0, 0});
  // self's own elements share places (an expanded input): each gets an equal share, as PyTorch's
  Tensor b = arange(3, TensorOptions(kFloat64)).requires_grad_();
  Tensor e = b.unsqueeze(1).expand({3, 2});
  (e.as_strided({2, 2}, {1, 0}) * from_vector<double>({1, 2, 3, 4}, {2, 2})).sum().backward();
  expect_values(b.grad(), {3}, {3, 7, 0});
}
