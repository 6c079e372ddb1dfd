#include "gradcheck.h"
#include <cmath>
#include <random>
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

// A tensor as the real numbers finite differences move: its values, or for a complex tensor
// each element's real and imaginary parts in turn (view_as_real's order).
std::vector<double> real_parameters(const Tensor& t) {
  if (!is_complex(t.dtype())) return t.to_vector<double>();
  std::vector<double> out;
  for (const complex<double>& z : t.to_vector<complex<double>>()) {
    out.push_back(z.re);
    out.push_back(z.im);
  }
  return out;
}

// The inverse: a tensor of `like`'s shape and dtype (float64 or complex128) from its parameters.
Tensor from_parameters(const Tensor& like, const std::vector<double>& p) {
  if (!is_complex(like.dtype())) return host_tensor(like.sizes(), DType::Float64, p);
  std::vector<double> re(p.size() / 2), im(p.size() / 2);
  for (size_t k = 0; k < re.size(); ++k) re[k] = p[2 * k], im[k] = p[2 * k + 1];
  return host_tensor(like.sizes(), DType::Complex128, re, im);
}

// Parameter `part` of element j of a one-hot gradient: 1, or i for the imaginary part. Seeding
// backward with it gives d Re(w_j) (or d Im(w_j)) / d x + i d(...) / d y for every input
// z = x + iy: PyTorch's convention, where backward(g) differentiates L = Re(sum(conj(g) * w)).
Tensor one_hot(const Tensor& out, int64_t j, int part) {
  std::vector<double> p(size_t(out.numel()) * (is_complex(out.dtype()) ? 2 : 1), 0.0);
  p[is_complex(out.dtype()) ? size_t(2 * j + part) : size_t(j)] = 1.0;
  return from_parameters(out, p);
}
}  // namespace

TensorList leaves_of(const TensorList& xs, Device device, size_t input, size_t index, double delta) {
  TensorList out;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> p = real_parameters(xs[i]);
    if (i == input) p[index] += delta;
    Tensor t = from_parameters(xs[i], p);
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
  // analytic[o][r][i][k] = d (real parameter r of outs[o]) / d (real parameter k of x[i])
  std::vector<std::vector<std::vector<std::vector<double>>>> analytic(outs.size());
  for (size_t o = 0; o < outs.size(); ++o) {
    const int parts = is_complex(outs[o].dtype()) ? 2 : 1;
    for (int64_t j = 0; j < outs[o].numel(); ++j) {
      for (int part = 0; part < parts; ++part) {
        TensorList grads(x0.size());
        if (outs[o].requires_grad()) {
          Tensor go = one_hot(outs[o], j, part);
          if (!device.is_cpu()) go = go.to(device);
          grads = autograd::grad({outs[o]}, leaves, {go}, /*retain_graph=*/true, /*create_graph=*/false,
                                 /*allow_unused=*/true);
        }
        std::vector<std::vector<double>>& row = analytic[o].emplace_back();
        for (size_t i = 0; i < x0.size(); ++i) {
          if (!grads[i].defined()) {
            row.emplace_back(real_parameters(x0[i]).size(), 0.0);
            continue;
          }
          if (!grads[i].sizes().equals(x0[i].sizes()) || grads[i].dtype() != leaves[i].dtype())
            return "gradient for " + names[i] + " is " + dtype_name(grads[i].dtype()) + grads[i].shape_str() +
                   ", expected " + dtype_name(leaves[i].dtype()) + x0[i].shape_str();
          row.push_back(real_parameters(grads[i]));
        }
      }
    }
  }
  for (size_t i = 0; i < x0.size(); ++i) {
    const size_t n = real_parameters(x0[i]).size();
    const char* part_name[2] = {".real", ".imag"};
    for (size_t k = 0; k < n; ++k) {
      TensorList plus = f(leaves_of(x0, device, i, k, kEps));
      TensorList minus = f(leaves_of(x0, device, i, k, -kEps));
      for (size_t o = 0; o < outs.size(); ++o) {
        std::vector<double> p = real_parameters(plus[o]), m = real_parameters(minus[o]);
        for (size_t r = 0; r < p.size(); ++r) {
          double numeric = (p[r] - m[r]) / (2 * kEps), a = analytic[o][r][i][k];
          ++compared;
          if (!(std::fabs(a - numeric) <= kAtol + kRtol * std::fabs(numeric))) {
            const bool out_complex = is_complex(outs[o].dtype()), in_complex = is_complex(x0[i].dtype());
            return "d output" + std::to_string(o) + "[" + std::to_string(out_complex ? r / 2 : r) + "]" +
                   (out_complex ? part_name[r % 2] : "") + " / d " + names[i] + "[" +
                   std::to_string(in_complex ? k / 2 : k) + "]" + (in_complex ? part_name[k % 2] : "") + ": autograd " +
                   fmt(a) + ", finite differences " + fmt(numeric);
          }
        }
      }
    }
  }
  return "";
}

namespace {
// A random tensor like `like` (float64 or complex128), parts uniform in [-1, 1].
Tensor random_like(const Tensor& like, std::mt19937_64& rng, Device device) {
  std::uniform_real_distribution<double> uni(-1, 1);
  std::vector<double> p(real_parameters(like).size());
  for (double& e : p) e = uni(rng);
  Tensor t = from_parameters(like, p);
  return device.is_cpu() ? t : t.to(device);
}

// Re(<a, b>): the real inner product of two tensors' real parameters.
double real_inner(const Tensor& a, const Tensor& b) {
  std::vector<double> pa = real_parameters(a), pb = real_parameters(b);
  double s = 0;
  for (size_t k = 0; k < pa.size() && k < pb.size(); ++k) s += pa[k] * pb[k];
  return s;
}
}  // namespace

std::string compare_jvp(const Fn& f, const TensorList& x0, const std::vector<std::string>& names, Device device,
                        uint64_t seed, size_t& compared) {
  std::mt19937_64 rng(seed);
  TensorList primals = leaves_of(x0, device), v;
  for (Tensor& p : primals) {
    p = p.detach();
    v.push_back(random_like(p, rng, device));
  }
  // Forward mode: one pass with dual inputs.
  TensorList jv;
  {
    autograd::forward_ad::DualLevel level;
    TensorList duals;
    for (size_t i = 0; i < primals.size(); ++i) duals.push_back(autograd::forward_ad::make_dual(primals[i], v[i]));
    for (const Tensor& out : f(duals)) {
      autograd::forward_ad::UnpackedDual u = autograd::forward_ad::unpack_dual(out);
      if (u.tangent.defined() && (!u.tangent.sizes().equals(out.sizes()) || u.tangent.dtype() != out.dtype()))
        return "the tangent of output" + std::to_string(jv.size()) + " is " + dtype_name(u.tangent.dtype()) +
               u.tangent.shape_str() + ", expected " + dtype_name(out.dtype()) + out.shape_str();
      jv.push_back(u.tangent.defined() ? u.tangent.clone() : zeros_like(out));
    }
  }
  // Central differences along v.
  TensorList plus, minus;
  {
    NoGradGuard plain;
    for (size_t i = 0; i < primals.size(); ++i) {
      plus.push_back(primals[i] + v[i] * kEps);
      minus.push_back(primals[i] - v[i] * kEps);
    }
  }
  TensorList fp = f(plus), fm = f(minus);
  for (size_t o = 0; o < jv.size(); ++o) {
    std::vector<double> a = real_parameters(jv[o]), p = real_parameters(fp[o]), m = real_parameters(fm[o]);
    for (size_t r = 0; r < a.size(); ++r) {
      const double numeric = (p[r] - m[r]) / (2 * kEps);
      ++compared;
      if (!(std::fabs(a[r] - numeric) <= kAtol + kRtol * std::fabs(numeric)))
        return "J v, output" + std::to_string(o) + " parameter " + std::to_string(r) + ": forward AD " + fmt(a[r]) +
               ", finite differences " + fmt(numeric);
    }
  }
  // Adjoint: <J v, u> = <v, J^T u>, J^T u from reverse mode.
  TensorList leaves = leaves_of(x0, device);
  TensorList outs = f(leaves), used, seeds;
  double lhs = 0;
  for (size_t o = 0; o < outs.size(); ++o) {
    Tensor u = random_like(outs[o], rng, device);
    lhs += real_inner(jv[o], u);
    if (outs[o].requires_grad()) used.push_back(outs[o]), seeds.push_back(u);
  }
  TensorList grads(leaves.size());
  if (!used.empty()) grads = autograd::grad(used, leaves, seeds, false, false, /*allow_unused=*/true);
  double rhs = 0;
  for (size_t i = 0; i < leaves.size(); ++i)
    if (grads[i].defined()) rhs += real_inner(v[i], grads[i]);
  ++compared;
  if (!(std::fabs(lhs - rhs) <= 1e-9 * (1 + std::fabs(lhs) + std::fabs(rhs))))
    return "<J v, u> = " + fmt(lhs) + " but <v, J^T u> = " + fmt(rhs) + " (inputs " + std::to_string(names.size()) +
           ")";
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
