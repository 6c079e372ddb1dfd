// embedding and embedding_dense_backward beyond the generated tests: padding_idx, scale_grad_by_freq,
// int32 indices and PyTorch's errors. Expected gradients from PyTorch 1.13 (F.embedding + backward).
#include <doctest/doctest.h>

#include <vector>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/embedding.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {
Tensor table() { return arange(12, DType::Float64).reshape({6, 2}); }
}  // namespace

TEST_CASE("embedding: rows by index in indices' shape; int32 indices too") {
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
