// Fits y = 2x - 1 with a one-weight linear model, autograd and SGD: the smallest training loop
// a program linking kiln runs. Exits 1 unless it converges and BLAS runs on kiln's thread pool.
#include <kiln/kiln.h>
#include <kiln/optim.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdio>

// Which OpenBLAS the loader gave kiln: openblas_get_parallel() is 2 for the OpenMP build, the
// pool kiln's loops share. kiln::kiln links that build by path with an RPATH; Debian's default
// libopenblas.so.0 may be the pthread build, which would run a second pool beside OpenMP's.
// Looked up at run time: a shared kiln keeps OpenBLAS to itself, so this program cannot link it.
int openblas_threading() {
  using Fn = int (*)();
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  return fn ? fn() : -1;
}

int main() {
  using namespace kiln;
  manual_seed(0);
  Tensor x = linspace(-1, 1, 64).reshape({64, 1});
  Tensor y = x * 2.0 - 1.0 + randn({64, 1}) * 0.01;
  Tensor w = zeros({1, 1}).requires_grad_();
  Tensor b = zeros({1}).requires_grad_();
  optim::SGD opt({w, b}, {/*lr=*/0.5});
  double loss_value = 0;
  for (int step = 0; step < 100; ++step) {
    Tensor loss = mse_loss(matmul(x, w) + b, y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    loss_value = loss.item<double>();
  }
  const double slope = w.item<double>(), intercept = b.item<double>();
  std::printf("fit_line: y = %.3f x %+.3f, loss %.2e, %d threads\n", slope, intercept, loss_value, get_num_threads());
  const bool ok = std::fabs(slope - 2) < 0.02 && std::fabs(intercept + 1) < 0.02 && loss_value < 1e-3;
  if (openblas_threading() != 2) {
    std::printf("fit_line: OpenBLAS is not the OpenMP build (openblas_get_parallel() = %d)\n", openblas_threading());
    return 1;
  }
  return ok ? 0 : 1;
}
