// A program written from PyTorch habits, against PyTorch 1.13's values (python3-torch):
//   a = x @ W1 + b1; a.register_hook(lambda g: g.clamp(-3, 3)); h = a * 1
//   h[:, 0] = h[:, 0] * 2; buf = zeros(2, 3); buf[1] = h[0]
//   z = torch.complex(h, buf); loss = (z.abs() ** 2).sum() + torch.angle(z + 1).sum()
// (slice assignment under autograd, a gradient hook that clips, a complex loss), and the same
// with a checkpointed block. Autocast (issue 14, item 8) is not built yet.
#include <doctest/doctest.h>
#include <vector>
#include "test_helpers.h"
#include "kiln/autograd.h"
#include "kiln/autograd/checkpoint.h"
#include "kiln/gen/api/abs.h"
#include "kiln/gen/api/angle.h"
#include "kiln/gen/api/clamp.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/select.h"
#include "kiln/gen/api/stack.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/tanh.h"
#include "kiln/gen/api/view_as_complex.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

using D = std::vector<double>;
}  // namespace

TEST_CASE("a PyTorch-style program: slice assignment under autograd, a clipping hook, a complex loss") {
  Tensor W1 =
      from_vector<double>({0.5, -1, 0.25, 1.5, 0.5, -0.5, -1, 2, 1, 0.25, 0.75, -1.25}, {4, 3}).requires_grad_(true);
  Tensor b1 = from_vector<double>({0.1, -0.2, 0.3}, {3}).requires_grad_(true);
  Tensor x = from_vector<double>({1, 0.5, -0.5, 2, -1, 1, 0.25, 0.5}, {2, 4});

  Tensor a = matmul(x, W1) + b1;
  Tensor seen;
  a.register_hook([&seen](const Tensor& g) {
    seen = g.clone();
    return clamp(g, -3.0, 3.0);
  });
  Tensor h = a * 1;
  h.select(1, 0).copy_(h.select(1, 0) * 2);  // h[:, 0] = h[:, 0] * 2
  Tensor buf = zeros({2, 3}, kFloat64);
  buf.select(0, 1).copy_(h.select(0, 0));           // buf[1] = h[0]
  Tensor z = view_as_complex(stack({h, buf}, -1));  // torch.complex(h, buf)
  Tensor loss = sum(square(abs(z))) + sum(angle(z + 1));
  CHECK(loss.item<double>() == doctest::Approx(70.88376288309149).epsilon(1e-12));
  loss.backward();

  expect_close(seen, {37.791605098644155, -1.4912417188354707, -10.776094937249212, 7.4947308597872855,
                      4.393761016228043, -1.2811790318449587});
  expect_close(W1.grad(),
               {0.0, -4.491241718835471, -1.7188209681550413, 4.5, 2.2543791405822646, -2.7811790318449585, -0.75,
                1.4956208594177354, 1.1797052420387604, 7.5, -1.4824834376709415, -6.640589515922479});
  expect_close(b1.grad(), {6.0, 1.5087582811645293, -4.2811790318449585});
}

TEST_CASE("a PyTorch-style program with a checkpointed block") {
  // as above, with a = torch.utils.checkpoint.checkpoint(lambda t: tanh(t @ W1 + b1) * 3, x), x requiring grad
  Tensor W1 =
      from_vector<double>({0.5, -1, 0.25, 1.5, 0.5, -0.5, -1, 2, 1, 0.25, 0.75, -1.25}, {4, 3}).requires_grad_(true);
  Tensor b1 = from_vector<double>({0.1, -0.2, 0.3}, {3}).requires_grad_(true);
  Tensor x = from_vector<double>({1, 0.5, -0.5, 2, -1, 1, 0.25, 0.5}, {2, 4}).requires_grad_(true);

  Tensor a = autograd::checkpoint([&](const Tensor& t) { return tanh(matmul(t, W1) + b1) * 3; }, x);
  a.register_hook([](const Tensor& g) { return clamp(g, -3.0, 3.0); });
  Tensor h = a * 1;
  h.select(1, 0).copy_(h.select(1, 0) * 2);
  Tensor buf = zeros({2, 3}, kFloat64);
  buf.select(0, 1).copy_(h.select(0, 0));
  Tensor z = view_as_complex(stack({h, buf}, -1));
  Tensor loss = sum(square(abs(z))) + sum(angle(z + 1));
  CHECK(loss.item<double>() == doctest::Approx(128.17427402393568).epsilon(1e-12));
  loss.backward();
  expect_close(W1.grad(), {-3.6038793618508014, -7.850890416114343, 4.704364773155201, 4.086210553263891,
                           -3.246126180367883, -4.946071834339785, 0.8205813085605187, 3.8122253701089566,
                           -1.1358066830913696, 2.605824999947217, -14.569582452746538, -2.7550274885519066});
  expect_close(b1.grad(), {4.246987617068255, -6.9451317125286245, -5.026640854734645});
  expect_close(x.grad(), {7.518503617928416, -3.1361053203527907, -15.278714297041416, -5.266697215351778,
                          0.2934616894506743, 8.547341317058184, -7.885177599818734, 7.40289640364068});
}
