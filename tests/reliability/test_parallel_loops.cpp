// kiln's own parallel loops — the pointwise loops, copy_ of a transposed tensor, the reduction
// engine, the scan engine, softmax and the per-line gather — on 2 OpenMP threads must give
// exactly what 1 thread gives (results never depend on the thread count). Built under
// ThreadSanitizer with LLVM's OpenMP runtime and its Archer tool in CI (the tsan stage), so a
// data race between the threads of one of these loops fails the run.
#include <doctest/doctest.h>
#include <functional>
#include <string>
#include <tuple>
#include <vector>
#include "kiln/core.h"
#include "kiln/gen/api/_cummaxmin_backward.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/cummax.h"
#include "kiln/gen/api/cumsum.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/logcumsumexp.h"
#include "kiln/gen/api/logsumexp.h"
#include "kiln/gen/api/softmax.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/var.h"

using namespace kiln;

namespace {

// Large enough that every loop below splits its work over 2 threads.
Tensor input(std::vector<int64_t> shape, uint64_t seed) {
  Generator g(seed);
  return randn(shape, DType::Float32, &g);
}

std::vector<double> values_with_threads(int threads, const std::function<Tensor()>& fn) {
  set_num_threads(threads);
  Tensor t = fn();
  set_num_threads(1);
  return t.to_vector<double>();
}

}  // namespace

TEST_CASE("parallel loops give the one-thread result on two threads") {
  const Tensor a = input({512, 384}, 1), b = input({512, 384}, 2), sq = input({384, 384}, 3);
  const std::vector<std::pair<std::string, std::function<Tensor()>>> cases = {
      {"add", [&] { return a + b; }},
      {"add of a transposed operand", [&] { return sq.t() + sq; }},
      {"copy_ of a transposed tensor", [&] { return sq.t().contiguous(); }},
      {"sum over the last dim", [&] { return sum(a, {1}); }},
      {"sum over the first dim", [&] { return sum(a, {0}); }},
      {"sum of everything", [&] { return sum(a); }},
      {"argmax", [&] { return argmax(a, 1); }},
      {"var", [&] { return var(a, {0}); }},
      {"logsumexp", [&] { return logsumexp(a, {1}); }},
      {"cumsum along rows", [&] { return cumsum(a, 1); }},
      {"cumsum along columns", [&] { return cumsum(a, 0); }},
      {"logcumsumexp", [&] { return logcumsumexp(a, 1); }},
      {"cummax indices", [&] { return std::get<1>(cummax(a, 0)); }},
      {"softmax along rows", [&] { return softmax(a, 1); }},
      {"log_softmax along columns", [&] { return log_softmax(a, 0); }},
      {"cummax's gradient scatter", [&] {
         return _cummaxmin_backward(a.to(DType::Float64), std::get<1>(cummax(a, 1)), 1);
       }},
  };
  for (const auto& c : cases) {
    const std::string& name = c.first;
    CAPTURE(name);
    CHECK(values_with_threads(2, c.second) == values_with_threads(1, c.second));
  }
}
