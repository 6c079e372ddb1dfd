#include "gradcheck.h"
#include <cmath>
#include <sstream>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "tensor_json.h"

namespace kiln::testing {
namespace {
constexpr double kEps = 1e-6, kAtol = 1e-5, kRtol = 1e-3;

std::string fmt(double v) {
  std::ostringstream ss;
  ss.precision(10);
  ss << v;
  return ss.str();
}
}  // namespace

TensorList leaves_of(const TensorList& xs, Device device, size_t input, size_t index, double delta) {
  TensorList out;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> v = xs[i].to_vector<double>();
    if (i == input) v[index] += delta;
    Tensor t = host_tensor(xs[i].sizes(), DType::Float64, v);
    if (!device.is_cpu()) t = t.to(device);
    t.requires_grad_(true);
    out.push_back(t);
  }
  return out;
}


std::string compare_jacobians(const Fn& f, const TensorList& x0, const std::vector<std::string>& names, Device device,
                              size_t& compared) {
  TensorList leaves = leaves_of(x0, device);
  TensorList outs = f(leaves);
  // analytic[o][j][i] = d outs[o][j] / d x[i] (flattened)
  std::vector<std::vector<std::vector<std::vector<double>>>> analytic(outs.size());
  for (size_t o = 0; o < outs.size(); ++o) {
    int64_t n = outs[o].numel();
    analytic[o].resize(size_t(n));
    for (int64_t j = 0; j < n; ++j) {
      TensorList grads(x0.size());
      if (outs[o].requires_grad()) {
        std::vector<double> onehot(size_t(n), 0.0);
        onehot[size_t(j)] = 1.0;
        Tensor go = host_tensor(outs[o].sizes(), DType::Float64, onehot);
        if (!device.is_cpu()) go = go.to(device);
        grads = autograd::grad({outs[o]}, leaves, {go}, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
      }
      for (size_t i = 0; i < x0.size(); ++i) {
        if (!grads[i].defined()) {
          analytic[o][size_t(j)].emplace_back(size_t(x0[i].numel()), 0.0);
          continue;
        }
        if (!grads[i].sizes().equals(x0[i].sizes()) || grads[i].dtype() != DType::Float64)
          return "gradient for " + names[i] + " is " + dtype_name(grads[i].dtype()) + grads[i].shape_str() +
                 ", expected float64" + x0[i].shape_str();
        analytic[o][size_t(j)].push_back(grads[i].to_vector<double>());
      }
    }
  }
  for (size_t i = 0; i < x0.size(); ++i) {
    for (size_t k = 0; k < size_t(x0[i].numel()); ++k) {
      TensorList plus = f(leaves_of(x0, device, i, k, kEps));
      TensorList minus = f(leaves_of(x0, device, i, k, -kEps));
      for (size_t o = 0; o < outs.size(); ++o) {
        std::vector<double> p = plus[o].to_vector<double>(), m = minus[o].to_vector<double>();
        for (size_t j = 0; j < p.size(); ++j) {
          double numeric = (p[j] - m[j]) / (2 * kEps), a = analytic[o][j][i][k];
          ++compared;
          if (!(std::fabs(a - numeric) <= kAtol + kRtol * std::fabs(numeric)))
            return "d output" + std::to_string(o) + "[" + std::to_string(j) + "] / d " + names[i] + "[" +
                   std::to_string(k) + "]: autograd " + fmt(a) + ", finite differences " + fmt(numeric);
        }
      }
    }
  }
  return "";
}


Fn vjp_fn(const Fn& f, size_t nx) {
  return [f, nx](const TensorList& leaves) {
    TensorList xs(leaves.begin(), leaves.begin() + int64_t(nx)), vs(leaves.begin() + int64_t(nx), leaves.end());
    TensorList outs = f(xs), used, seeds;
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].requires_grad()) used.push_back(outs[i]), seeds.push_back(vs[i]);
    TensorList grads(nx);
    if (!used.empty()) grads = autograd::grad(used, xs, seeds, /*retain_graph=*/true, /*create_graph=*/true, /*allow_unused=*/true);
    for (size_t i = 0; i < nx; ++i)
      if (!grads[i].defined()) grads[i] = zeros_like(xs[i]);
    return grads;
  };
}

}  // namespace kiln::testing
