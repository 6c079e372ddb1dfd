// embedding, embedding_dense_backward and embedding_bag beyond the generated tests: padding_idx,
// scale_grad_by_freq, int32 indices and PyTorch's errors. Expected gradients from PyTorch 1.13
// (F.embedding / F.embedding_bag + backward).
#include <doctest/doctest.h>

#include <vector>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/embedding.h"
#include "kiln/gen/api/embedding_bag.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {
Tensor table() { return arange(12, DType::Float64).reshape({6, 2}); }
}  // namespace

TEST_CASE("embedding: rows by index in indices' shape, int32 indices too") {
  Tensor idx = from_vector<int64_t>({0, 5, 5, 5, 2, 0}, {3, 2});
  Tensor y = embedding(table(), idx);
  expect_values(y, {3, 2, 2}, {0, 1, 10, 11, 10, 11, 10, 11, 4, 5, 0, 1}, 0);
  expect_values(embedding(table(), idx.to(DType::Int32)), {3, 2, 2}, y.to_vector<double>(), 0);
  expect_values(embedding(table(), from_vector<int64_t>({3}, {1})), {1, 2}, {6, 7}, 0);
}

TEST_CASE("embedding backward: padding_idx's row gets nothing, scale_grad_by_freq divides by the count") {
  Tensor w = table().requires_grad_(true);
  Tensor idx = from_vector<int64_t>({0, 5, 5, 5, 2, 0}, {3, 2});
  Tensor y = embedding(w, idx, /*padding_idx=*/2, /*scale_grad_by_freq=*/true);
  y.backward(arange(12, DType::Float64).reshape({3, 2, 2}) + 1.0);
  expect_values(w.grad(), {6, 2}, {6, 7, 0, 0, 0, 0, 0, 0, 0, 0, 5, 6}, 1e-15);
  // without scaling: plain sums, in index order
  Tensor w2 = table().requires_grad_(true);
  embedding(w2, idx).backward(ones({3, 2, 2}, DType::Float64));
  expect_values(w2.grad(), {6, 2}, {2, 2, 0, 0, 1, 1, 0, 0, 0, 0, 3, 3}, 0);
}

TEST_CASE("embedding: errors name the argument") {
  CHECK(has(error_text<IndexError>([&] { embedding(table(), from_vector<int64_t>({6}, {1})); }), "out of range"));
  CHECK(has(error_text<DTypeError>([&] { embedding(table(), from_vector<double>({1}, {1})); }),
            "'indices' to have one of the following scalar types: Long, Int"));
  CHECK(has(error_text<IndexError>([&] { embedding(table(), from_vector<int64_t>({1}, {1}), 6); }),
            "Padding_idx must be within num_embeddings"));
  CHECK(
      has(error_text<NotImplementedError>([&] { embedding(table(), from_vector<int64_t>({1}, {1}), -1, false, true); }),
          "sparse"));
  CHECK(has(error_text<ShapeError>([&] { embedding(zeros({6}), from_vector<int64_t>({1}, {1})); }), "must be 2-D"));
}

namespace {
// sin(arange(24) / 7) as [6, 4]: distinct values, so a max has no ties
Tensor bag_table() { return (arange(24, DType::Float64) / 7.0).sin().reshape({6, 4}).requires_grad_(true); }
Tensor i64(std::vector<int64_t> v) { return from_vector<int64_t>(v, {int64_t(v.size())}); }
}  // namespace

TEST_CASE("embedding_bag: mean with scale_grad_by_freq and max route gradients as PyTorch") {
  Tensor w = bag_table();
  auto [mean, offset2bag, bag_size, unused] = embedding_bag(w, i64({0, 5, 2, 2, 3, 2}), i64({0, 3}), true, 1);
  expect_values(mean, {2, 4},
                {0.39681743748516024, 0.41437677360627195, 0.4234938131879855, 0.42398281041486746, 0.9364562915806897,
                 0.9595197872207368, 0.9630345265233098, 0.9469289020206624},
                1e-15);
  expect_values(offset2bag, {6}, {0, 0, 0, 1, 1, 1}, 0);
  expect_values(bag_size, {2}, {3, 3}, 0);
  // Each row's gradient is divided by its index's count in the batch (the documented rule, and
  // embedding's). PyTorch 1.13's CPU embedding_bag misindexes its counts: rows 3 and 5, which
  // appear once, come out divided by 3 there (4/9 ... where this gives 4/3 ...).
  mean.backward(arange(8, DType::Float64).reshape({2, 4}));
  expect_values(w.grad(), {6, 4},
                {0,       1.0 / 3, 2.0 / 3, 1,       0, 0, 0, 0, 8.0 / 9, 11.0 / 9, 14.0 / 9, 17.0 / 9,
                 4.0 / 3, 5.0 / 3, 6.0 / 3, 7.0 / 3, 0, 0, 0, 0, 0,       1.0 / 3,  2.0 / 3,  3.0 / 3},
                1e-15);

  Tensor v = bag_table();
  auto [peak, o2b, size, max_indices] = embedding_bag(v, i64({0, 5, 2, 2, 3, 2}), i64({0, 3}), false, 2);
  expect_values(peak, {2, 4},
                {0.9098229129411239, 0.9596385829666849, 0.9899030763721239, 0.9999998001333683, 0.9897230488598214,
                 0.9596385829666849, 0.9899030763721239, 0.9999998001333683},
                1e-15);
  expect_values(max_indices, {2, 4}, {2, 2, 2, 2, 3, 2, 2, 2}, 0);
  peak.backward(arange(8, DType::Float64).reshape({2, 4}));
  expect_values(v.grad(), {6, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 8, 10, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0);
}

TEST_CASE("embedding_bag: padding_idx counts for nothing, empty bags give zeros, include_last_offset") {
  Tensor w = bag_table();
  // F.embedding_bag's 2-D input [[1, 2, 3], [4, 4, 0]] is these indices with offsets [0, 3]
  auto [sum, o2b, size, unused] =
      embedding_bag(w, i64({1, 2, 3, 4, 4, 0}), i64({0, 3}), false, 0, false, Tensor(), false, int64_t(4));
  expect_values(sum, {2, 4},
                {2.4403801751597767, 2.5739986758740443, 2.6551758683445383, 2.682257890736515, 0, 0.14237172979226365,
                 0.28184285212220994, 0.415571854993052},
                1e-15);
  expect_values(size, {2}, {3, 1}, 0);
  sum.backward(arange(8, DType::Float64).reshape({2, 4}));
  expect_values(w.grad(), {6, 4}, {4, 5, 6, 7, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0}, 0);

  // bags 1 and 3 are empty (offsets repeat, and the last bag starts at the end)
  for (int64_t mode : {0, 1, 2}) {
    auto [out, a, b, c] = embedding_bag(w, i64({1, 2, 3}), i64({0, 2, 2, 3}), false, mode);
    CAPTURE(mode);
    const std::vector<double> got = out.detach().to_vector<double>();
    for (int64_t i = 4; i < 8; ++i) CHECK(got[size_t(i)] == 0);
    for (int64_t i = 12; i < 16; ++i) CHECK(got[size_t(i)] == 0);
  }
  // include_last_offset: offsets end with the number of indices, one bag fewer
  auto [two, x, y, z] = embedding_bag(w, i64({1, 2, 3}), i64({0, 1, 3}), false, 0, false, Tensor(), true);
  CHECK(two.sizes().vec() == std::vector<int64_t>{2, 4});
}

TEST_CASE("embedding_bag: errors name the argument") {
  Tensor w = bag_table();
  CHECK(has(error_text<ValueError>([&] {
              embedding_bag(w, i64({1, 2}), i64({1}), false, 0);
            }),
            "offsets[0] has to be 0"));
  CHECK(has(error_text<IndexError>([&] { embedding_bag(w, i64({1, 6}), i64({0}), false, 0); }), "out of range"));
  CHECK(has(error_text<IndexError>([&] { embedding_bag(w, i64({1, 2}), i64({0, 3}), false, 0); }), "past the end"));
  CHECK(has(error_text<ValueError>([&] {
              embedding_bag(w, i64({1, 2}), i64({0, 1}), false, 0, false, Tensor(), true);
            }),
            "include_last_offset"));
  CHECK(has(error_text<ValueError>([&] {
              embedding_bag(w, i64({1, 2}), i64({0}), false, 1, false, ones({2}, kFloat64));
            }),
            "only supported for mode='sum'"));
  CHECK(has(error_text<ValueError>([&] { embedding_bag(w, i64({1, 2}), i64({0}), true, 2); }), "max mode"));
  CHECK(has(error_text<ValueError>([&] { embedding_bag(w, i64({1, 2}), i64({0}), false, 3); }), "mode"));
  CHECK(has(error_text<ShapeError>([&] { embedding_bag(w, i64({1, 2}).reshape({1, 2}), i64({0}), false, 0); }), "1D"));
  CHECK(has(error_text<DTypeError>([&] {
              embedding_bag(w, i64({1, 2}), i64({0}).to(kInt32), false, 0);
            }),
            "same dtype"));
  CHECK(has(error_text<NotImplementedError>([&] {
              embedding_bag(w, i64({1, 2}), i64({0}), false, 0, true);
            }),
            "sparse"));
}
