// Fused LSTM and GRU gates on CUDA (kiln/meta/rnn.h): one thread per (row, hidden unit) reads
// that unit's gates once, with the unit math shared with the CPU (kiln/common/rnn_cell.h), in
// float for 16-bit inputs (double for double). The LSTM bias gradient is a second kernel, one
// thread per column summing the rows in order: deterministic, no atomics.
#include <cuda_runtime.h>
#include <cstdint>
#include "kiln/common/rnn_cell.h"
#include "kiln/cuda/check.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/_thnn_fused_gru_cell.h"
#include "kiln/gen/kernels/cuda/_thnn_fused_gru_cell_backward_impl.h"
#include "kiln/gen/kernels/cuda/_thnn_fused_lstm_cell.h"
#include "kiln/gen/kernels/cuda/_thnn_fused_lstm_cell_backward_impl.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

constexpr int kThreads = 256;

#define KILN_RNN_LOOP(i, n) \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

template <typename Acc, typename T>
__device__ inline Acc at(const T* p, int64_t i) {
  return p ? Acc(p[i]) : Acc(0);
}

template <typename T>
__global__ void lstm_forward_kernel(const T* ig, const T* hg, const T* cx, const T* ib, const T* hb, T* hy, T* cy,
                                    T* ws, int64_t H, int64_t total) {
  using Acc = opmath_t<T>;
  KILN_RNN_LOOP(e, total) {
    const int64_t b = e / H, u = e % H;
    Acc pre[4];
    for (int k = 0; k < 4; ++k) {
      const int64_t j = k * H + u, g = b * 4 * H + j;
      pre[k] = Acc(ig[g]) + Acc(hg[g]) + at<Acc>(ib, j) + at<Acc>(hb, j);
    }
    const auto r = rnn::lstm_forward<Acc>(pre[0], pre[1], pre[2], pre[3], Acc(cx[e]));
    hy[e] = T(r.hy);
    cy[e] = T(r.cy);
    T* w = ws + b * 4 * H + u;
    w[0] = T(r.i);
    w[H] = T(r.f);
    w[2 * H] = T(r.g);
    w[3 * H] = T(r.o);
  }
}

template <typename T>
__global__ void lstm_backward_kernel(const T* ghy, const T* gcy, const T* cx, const T* cy, const T* ws, T* gg, T* gcx,
                                     int64_t H, int64_t total) {
  using Acc = opmath_t<T>;
  KILN_RNN_LOOP(e, total) {
    const int64_t b = e / H, u = e % H;
    const T* w = ws + b * 4 * H + u;
    const auto r = rnn::lstm_backward<Acc>(at<Acc>(ghy, e), at<Acc>(gcy, e), Acc(cx[e]), Acc(cy[e]), Acc(w[0]),
                                           Acc(w[H]), Acc(w[2 * H]), Acc(w[3 * H]));
    T* g = gg + b * 4 * H + u;
    g[0] = T(r.gi);
    g[H] = T(r.gf);
    g[2 * H] = T(r.gg);
    g[3 * H] = T(r.go);
    gcx[e] = T(r.gcx);
  }
}

// out[j] = sum over rows of x[row][j], rows in order.
template <typename T>
__global__ void column_sum_kernel(const T* x, T* out, int64_t rows, int64_t cols) {
  using Acc = opmath_t<T>;
  KILN_RNN_LOOP(j, cols) {
    Acc s = 0;
    for (int64_t r = 0; r < rows; ++r) s += Acc(x[r * cols + j]);
    out[j] = T(s);
  }
}

template <typename T>
__global__ void gru_forward_kernel(const T* ig, const T* hg, const T* hx, const T* ib, const T* hb, T* hy, T* ws,
                                   int64_t H, int64_t total) {
  using Acc = opmath_t<T>;
  KILN_RNN_LOOP(e, total) {
    const int64_t b = e / H, u = e % H;
    Acc in[3], hid[3];
    for (int k = 0; k < 3; ++k) {
      const int64_t j = k * H + u, g = b * 3 * H + j;
      in[k] = Acc(ig[g]) + at<Acc>(ib, j);
      hid[k] = Acc(hg[g]) + at<Acc>(hb, j);
    }
    const Acc h = Acc(hx[e]);
    const auto s = rnn::gru_forward<Acc>(in[0], in[1], in[2], hid[0], hid[1], hid[2], h);
    hy[e] = T(s.hy);
    T* w = ws + b * 5 * H + u;
    w[0] = T(s.r);
    w[H] = T(s.z);
    w[2 * H] = T(s.n);
    w[3 * H] = T(h);
    w[4 * H] = T(s.hn);
  }
}

template <typename T>
__global__ void gru_backward_kernel(const T* ghy, const T* ws, T* gi, T* gh, T* ghx, int64_t H, int64_t total) {
  using Acc = opmath_t<T>;
  KILN_RNN_LOOP(e, total) {
    const int64_t b = e / H, u = e % H;
    const T* w = ws + b * 5 * H + u;
    const auto s =
        rnn::gru_backward<Acc>(Acc(ghy[e]), Acc(w[0]), Acc(w[H]), Acc(w[2 * H]), Acc(w[3 * H]), Acc(w[4 * H]));
    T *a = gi + b * 3 * H + u, *c = gh + b * 3 * H + u;
    a[0] = c[0] = T(s.gr);
    a[H] = c[H] = T(s.gz);
    a[2 * H] = T(s.gn);
    c[2 * H] = T(s.ghn);
    ghx[e] = T(s.ghx);
  }
}

unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return unsigned(blocks < 65535 * 16 ? blocks : 65535 * 16);  // the grid-stride loop covers the rest
}

template <typename T>
const T* ptr(const TensorBase& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}
template <typename T>
T* out(const TensorBase& t) {
  return static_cast<T*>(t.data_ptr());
}

// Runs launch(T tag, stream) for the plan's floating dtype on `like`'s device; nothing for no rows.
template <typename F>
void run(const char* op, const meta::RnnCellPlan& plan, const TensorBase& like, const F& launch) {
  if (plan.batch == 0 || plan.hidden == 0) return;
  const int dev = like.device().index;
  detail::check_device(dev, op);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {  // the registry admits floating dtypes only
      launch(tag, detail::current_cuda_stream(dev));
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
}

}  // namespace

void _thnn_fused_lstm_cell(const meta::RnnCellPlan& plan, const TensorBase& hy, const TensorBase& cy,
                           const TensorBase& workspace, const TensorBase& input_gates, const TensorBase& hidden_gates,
                           const TensorBase& cx, const TensorBase& input_bias, const TensorBase& hidden_bias) {
  const int64_t total = plan.batch * plan.hidden;
  run("_thnn_fused_lstm_cell", plan, cx, [&](auto tag, cudaStream_t stream) {
    using T = decltype(tag);
    lstm_forward_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
        ptr<T>(input_gates), ptr<T>(hidden_gates), ptr<T>(cx), ptr<T>(input_bias), ptr<T>(hidden_bias), out<T>(hy),
        out<T>(cy), out<T>(workspace), plan.hidden, total);
  });
}

void _thnn_fused_lstm_cell_backward_impl(const meta::RnnCellPlan& plan, const TensorBase& grad_gates,
                                         const TensorBase& grad_cx, const TensorBase& grad_bias,
                                         const TensorBase& grad_hy, const TensorBase& grad_cy, const TensorBase& cx,
                                         const TensorBase& cy, const TensorBase& workspace) {
  const int64_t total = plan.batch * plan.hidden, cols = 4 * plan.hidden;
  run("_thnn_fused_lstm_cell_backward_impl", plan, cx, [&](auto tag, cudaStream_t stream) {
    using T = decltype(tag);
    lstm_backward_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
        ptr<T>(grad_hy), ptr<T>(grad_cy), ptr<T>(cx), ptr<T>(cy), ptr<T>(workspace), out<T>(grad_gates),
        out<T>(grad_cx), plan.hidden, total);
    if (plan.has_bias)
      column_sum_kernel<T>
          <<<blocks_for(cols), kThreads, 0, stream>>>(ptr<T>(grad_gates), out<T>(grad_bias), plan.batch, cols);
  });
}

void _thnn_fused_gru_cell(const meta::RnnCellPlan& plan, const TensorBase& hy, const TensorBase& workspace,
                          const TensorBase& input_gates, const TensorBase& hidden_gates, const TensorBase& hx,
                          const TensorBase& input_bias, const TensorBase& hidden_bias) {
  const int64_t total = plan.batch * plan.hidden;
  run("_thnn_fused_gru_cell", plan, hx, [&](auto tag, cudaStream_t stream) {
    using T = decltype(tag);
    gru_forward_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
        ptr<T>(input_gates), ptr<T>(hidden_gates), ptr<T>(hx), ptr<T>(input_bias), ptr<T>(hidden_bias), out<T>(hy),
        out<T>(workspace), plan.hidden, total);
  });
}

void _thnn_fused_gru_cell_backward_impl(const meta::RnnCellPlan& plan, const TensorBase& grad_input_gates,
                                        const TensorBase& grad_hidden_gates, const TensorBase& grad_hx,
                                        const TensorBase& grad_hy, const TensorBase& workspace) {
  const int64_t total = plan.batch * plan.hidden;
  run("_thnn_fused_gru_cell_backward_impl", plan, grad_hy, [&](auto tag, cudaStream_t stream) {
    using T = decltype(tag);
    gru_backward_kernel<T>
        <<<blocks_for(total), kThreads, 0, stream>>>(ptr<T>(grad_hy), ptr<T>(workspace), out<T>(grad_input_gates),
                                                     out<T>(grad_hidden_gates), out<T>(grad_hx), plan.hidden, total);
  });
}

}  // namespace kiln::cuda
