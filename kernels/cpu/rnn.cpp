// Fused LSTM and GRU gates on CPU (kiln/meta/rnn.h): one pass over each row's gates, the unit math
// shared with CUDA (kiln/common/rnn_cell.h), in float for 16-bit inputs. Each row's units run as
// one `omp simd` loop without branches (an omitted bias or gradient reads a row of zeros), so the
// sigmoids and tanhs go through libmvec's vector functions: scalar libm calls made the kernel the
// LSTM's bottleneck. Threads split the batch rows; the LSTM bias gradient sums the rows in order
// afterwards, so results do not depend on the thread count.
#include <cstdint>
#include <vector>
#include "kiln/common/rnn_cell.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/_thnn_fused_gru_cell.h"
#include "kiln/gen/kernels/cpu/_thnn_fused_gru_cell_backward_impl.h"
#include "kiln/gen/kernels/cpu/_thnn_fused_lstm_cell.h"
#include "kiln/gen/kernels/cpu/_thnn_fused_lstm_cell_backward_impl.h"
#include "kernel_utils.h"

namespace kiln::cpu {
namespace {

// Runs fn(T tag) for the plan's floating dtype (the registry admits floating dtypes only).
template <typename F>
void visit_floating(DType dtype, const F& fn) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) fn(tag);
  });
}

template <typename T>
const T* data_of(const TensorBase& t) {
  return static_cast<const T*>(t.data_ptr());
}
template <typename T>
T* out_of(const TensorBase& t) {
  return static_cast<T*>(t.data_ptr());
}

// A possibly omitted operand: its data, or `zeros` (at least as long) in its place, with the
// stride between rows (0 for the zeros, so every row reads them).
template <typename T>
struct Operand {
  const T* data;
  int64_t row_stride;
  const T* row(int64_t b) const { return data + b * row_stride; }
};
template <typename T>
Operand<T> operand_or(const TensorBase& t, const std::vector<T>& zeros, int64_t row_stride) {
  return t.defined() ? Operand<T>{data_of<T>(t), row_stride} : Operand<T>{zeros.data(), 0};
}

// fn(row) for every batch row, rows split among threads (`work`: elements per row).
template <typename F>
void each_row(const meta::RnnCellPlan& plan, const F& fn) {
  if (plan.batch == 0 || plan.hidden == 0) return;
  kiln::detail::parallel_items(plan.batch, plan.hidden * 16, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) fn(b);
  });
}

}  // namespace

void _thnn_fused_lstm_cell(const meta::RnnCellPlan& plan, const TensorBase& hy, const TensorBase& cy,
                           const TensorBase& workspace, const TensorBase& input_gates, const TensorBase& hidden_gates,
                           const TensorBase& cx, const TensorBase& input_bias, const TensorBase& hidden_bias) {
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = opmath_t<T>;
    const int64_t H = plan.hidden;
    const std::vector<T> zeros(size_t(4 * H), T(0));
    const T *ig = data_of<T>(input_gates), *hg = data_of<T>(hidden_gates), *c = data_of<T>(cx);
    const T *ib = operand_or(input_bias, zeros, 0).data, *hb = operand_or(hidden_bias, zeros, 0).data;
    T *h_out = out_of<T>(hy), *c_out = out_of<T>(cy), *ws = out_of<T>(workspace);
    each_row(plan, [&](int64_t b) {
      const T *igr = ig + b * 4 * H, *hgr = hg + b * 4 * H, *cr = c + b * H;
      T *wsr = ws + b * 4 * H, *hr = h_out + b * H, *cyr = c_out + b * H;
#pragma omp simd
      for (int64_t u = 0; u < H; ++u) {
        const auto r = rnn::lstm_forward<Acc>(
            Acc(igr[u]) + Acc(hgr[u]) + Acc(ib[u]) + Acc(hb[u]),
            Acc(igr[H + u]) + Acc(hgr[H + u]) + Acc(ib[H + u]) + Acc(hb[H + u]),
            Acc(igr[2 * H + u]) + Acc(hgr[2 * H + u]) + Acc(ib[2 * H + u]) + Acc(hb[2 * H + u]),
            Acc(igr[3 * H + u]) + Acc(hgr[3 * H + u]) + Acc(ib[3 * H + u]) + Acc(hb[3 * H + u]), Acc(cr[u]));
        hr[u] = T(r.hy);
        cyr[u] = T(r.cy);
        wsr[u] = T(r.i);
        wsr[H + u] = T(r.f);
        wsr[2 * H + u] = T(r.g);
        wsr[3 * H + u] = T(r.o);
      }
    });
  });
}

void _thnn_fused_lstm_cell_backward_impl(const meta::RnnCellPlan& plan, const TensorBase& grad_gates,
                                         const TensorBase& grad_cx, const TensorBase& grad_bias,
                                         const TensorBase& grad_hy, const TensorBase& grad_cy, const TensorBase& cx,
                                         const TensorBase& cy, const TensorBase& workspace) {
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = opmath_t<T>;
    const int64_t H = plan.hidden;
    const std::vector<T> zeros(size_t(H), T(0));
    const Operand<T> ghy = operand_or(grad_hy, zeros, H), gcy = operand_or(grad_cy, zeros, H);
    const T *c = data_of<T>(cx), *cyp = data_of<T>(cy), *ws = data_of<T>(workspace);
    T *gg = out_of<T>(grad_gates), *gcx = out_of<T>(grad_cx);
    each_row(plan, [&](int64_t b) {
      const T *wsr = ws + b * 4 * H, *ghr = ghy.row(b), *gcr = gcy.row(b), *cr = c + b * H, *cyr = cyp + b * H;
      T *ggr = gg + b * 4 * H, *gcxr = gcx + b * H;
#pragma omp simd
      for (int64_t u = 0; u < H; ++u) {
        const auto r = rnn::lstm_backward<Acc>(Acc(ghr[u]), Acc(gcr[u]), Acc(cr[u]), Acc(cyr[u]), Acc(wsr[u]),
                                               Acc(wsr[H + u]), Acc(wsr[2 * H + u]), Acc(wsr[3 * H + u]));
        ggr[u] = T(r.gi);
        ggr[H + u] = T(r.gf);
        ggr[2 * H + u] = T(r.gg);
        ggr[3 * H + u] = T(r.go);
        gcxr[u] = T(r.gcx);
      }
    });
    if (!plan.has_bias) return;
    // the bias's gradient: each column summed over the rows in order (of the stored gradients)
    T* gb = out_of<T>(grad_bias);
    const int64_t cols = 4 * H;
    kiln::detail::parallel_items(cols, plan.batch, [&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j) {
        Acc s = 0;
        for (int64_t b = 0; b < plan.batch; ++b) s += Acc(gg[b * cols + j]);
        gb[j] = T(s);
      }
    });
  });
}

void _thnn_fused_gru_cell(const meta::RnnCellPlan& plan, const TensorBase& hy, const TensorBase& workspace,
                          const TensorBase& input_gates, const TensorBase& hidden_gates, const TensorBase& hx,
                          const TensorBase& input_bias, const TensorBase& hidden_bias) {
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = opmath_t<T>;
    const int64_t H = plan.hidden;
    const std::vector<T> zeros(size_t(3 * H), T(0));
    const T *ig = data_of<T>(input_gates), *hg = data_of<T>(hidden_gates), *h = data_of<T>(hx);
    const T *ib = operand_or(input_bias, zeros, 0).data, *hb = operand_or(hidden_bias, zeros, 0).data;
    T *h_out = out_of<T>(hy), *ws = out_of<T>(workspace);
    each_row(plan, [&](int64_t b) {
      const T *igr = ig + b * 3 * H, *hgr = hg + b * 3 * H, *hr = h + b * H;
      T *wsr = ws + b * 5 * H, *hyr = h_out + b * H;
#pragma omp simd
      for (int64_t u = 0; u < H; ++u) {
        const Acc hxv = Acc(hr[u]);
        const auto s = rnn::gru_forward<Acc>(
            Acc(igr[u]) + Acc(ib[u]), Acc(igr[H + u]) + Acc(ib[H + u]), Acc(igr[2 * H + u]) + Acc(ib[2 * H + u]),
            Acc(hgr[u]) + Acc(hb[u]), Acc(hgr[H + u]) + Acc(hb[H + u]), Acc(hgr[2 * H + u]) + Acc(hb[2 * H + u]), hxv);
        hyr[u] = T(s.hy);
        wsr[u] = T(s.r);
        wsr[H + u] = T(s.z);
        wsr[2 * H + u] = T(s.n);
        wsr[3 * H + u] = T(hxv);
        wsr[4 * H + u] = T(s.hn);
      }
    });
  });
}

void _thnn_fused_gru_cell_backward_impl(const meta::RnnCellPlan& plan, const TensorBase& grad_input_gates,
                                        const TensorBase& grad_hidden_gates, const TensorBase& grad_hx,
                                        const TensorBase& grad_hy, const TensorBase& workspace) {
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = opmath_t<T>;
    const int64_t H = plan.hidden;
    const T *ghy = data_of<T>(grad_hy), *ws = data_of<T>(workspace);
    T *gi = out_of<T>(grad_input_gates), *gh = out_of<T>(grad_hidden_gates), *ghx = out_of<T>(grad_hx);
    each_row(plan, [&](int64_t b) {
      const T *wsr = ws + b * 5 * H, *gr = ghy + b * H;
      T *gir = gi + b * 3 * H, *ghr = gh + b * 3 * H, *ghxr = ghx + b * H;
#pragma omp simd
      for (int64_t u = 0; u < H; ++u) {
        const auto s = rnn::gru_backward<Acc>(Acc(gr[u]), Acc(wsr[u]), Acc(wsr[H + u]), Acc(wsr[2 * H + u]),
                                              Acc(wsr[3 * H + u]), Acc(wsr[4 * H + u]));
        gir[u] = ghr[u] = T(s.gr);
        gir[H + u] = ghr[H + u] = T(s.gz);
        gir[2 * H + u] = T(s.gn);
        ghr[2 * H + u] = T(s.ghn);
        ghxr[u] = T(s.ghx);
      }
    });
  });
}

}  // namespace kiln::cpu
