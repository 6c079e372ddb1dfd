// Elementwise ops on 16M float32 elements: memory-bound (add, mul, relu) and
// transcendental (exp, tanh, sigmoid, gelu), allocating and into a preallocated output.
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include <functional>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kN = int64_t(1) << 24;
constexpr double kF = 4.0;  // bytes per float32

using KUnary = std::function<kiln::Tensor(const kiln::Tensor&)>;
using TUnary = std::function<at::Tensor(const at::Tensor&)>;
using KUnaryOut = std::function<void(kiln::Tensor&, const kiln::Tensor&)>;
using TUnaryOut = std::function<void(at::Tensor&, const at::Tensor&)>;

Case unary(const char* name, KUnary k, TUnary t) {
  return {std::string(name) + " 16M", "pointwise", 2 * kN * kF, 0, "", [k, t] {
    Twin x = twin_randn({kN});
    return Prepared{[x, k] { kiln::Tensor r = k(x.k); }, [x, t] { at::Tensor r = t(x.t); }};
  }};
}

Case unary_out(const char* name, KUnaryOut k, TUnaryOut t) {
  return {std::string(name) + " 16M, out=", "pointwise", 2 * kN * kF, 0, "", [k, t] {
    Twin x = twin_randn({kN}), out = twin_randn({kN});
    return Prepared{[x, out, k]() mutable { k(out.k, x.k); }, [x, out, t]() mutable { t(out.t, x.t); }};
  }};
}

Case add_alloc() {
  return {"add 16M", "pointwise", 3 * kN * kF, 0, "", [] {
    Twin x = twin_randn({kN}), y = twin_randn({kN});
    return Prepared{[x, y] { kiln::Tensor r = x.k + y.k; }, [x, y] { at::Tensor r = x.t + y.t; }};
  }};
}

Case add_out() {
  return {"add 16M, out=", "pointwise", 3 * kN * kF, 0, "", [] {
    Twin x = twin_randn({kN}), y = twin_randn({kN}), out = twin_randn({kN});
    return Prepared{[x, y, out]() mutable { kiln::add_out(out.k, x.k, y.k); },
                    [x, y, out]() mutable { at::add_out(out.t, x.t, y.t); }};
  }};
}

Case broadcast_add() {
  return {"broadcast add [4096,4096]+[4096]", "pointwise", 2 * kN * kF, 0, "", [] {
    Twin x = twin_randn({4096, 4096}), row = twin_randn({4096});
    return Prepared{[x, row] { kiln::Tensor r = x.k + row.k; }, [x, row] { at::Tensor r = x.t + row.t; }};
  }};
}

Case transposed_add() {
  return {"transposed add a.t()+b [4096,4096]", "pointwise", 3 * kN * kF, 0, "", [] {
    Twin a = twin_randn({4096, 4096}), b = twin_randn({4096, 4096});
    return Prepared{[a, b] { kiln::Tensor r = a.k.t() + b.k; }, [a, b] { at::Tensor r = a.t.t() + b.t; }};
  }};
}

}  // namespace

std::vector<Case> pointwise_cases() {
  std::vector<Case> c;
  c.push_back(add_alloc());
  c.push_back(add_out());
  c.push_back(unary("mul by scalar", [](const kiln::Tensor& x) { return x * 2.0; },
                    [](const at::Tensor& x) { return x * 2.0; }));
  c.push_back(unary_out("mul by scalar", [](kiln::Tensor& o, const kiln::Tensor& x) { kiln::mul_out(o, x, kiln::wrapped_scalar(2.0)); },
                        [](at::Tensor& o, const at::Tensor& x) { at::mul_out(o, x, at::scalar_tensor(2.0)); }));
#define KILN_BENCH_UNARY(op)                                                                        \
  c.push_back(unary(#op, [](const kiln::Tensor& x) { return kiln::op(x); },                          \
                    [](const at::Tensor& x) { return at::op(x); }));                                 \
  c.push_back(unary_out(#op, [](kiln::Tensor& o, const kiln::Tensor& x) { kiln::op##_out(o, x); }, \
                        [](at::Tensor& o, const at::Tensor& x) { at::op##_out(o, x); }));
  KILN_BENCH_UNARY(exp)
  KILN_BENCH_UNARY(tanh)
  KILN_BENCH_UNARY(sigmoid)
  KILN_BENCH_UNARY(gelu)
  KILN_BENCH_UNARY(relu)
#undef KILN_BENCH_UNARY
  c.push_back(broadcast_add());
  c.push_back(transposed_add());
  return c;
}

}  // namespace kiln_bench
