// Fused LSTM and GRU gates on CPU (kiln/meta/rnn.h): one pass over each row's gates, the unit math
// shared with CUDA (kiln/common/rnn_cell.h), in float for 16-bit inputs. Threads split the batch
// rows; the LSTM bias gradient sums the rows in order afterwards, so results do not depend on the
// thread count.
#include <cstdint>
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
const T* data_or_null(const TensorBase& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}
template <typename T>
T* out_of(const TensorBase& t) {
  return static_cast<T*>(t.data_ptr());
}

// A possibly omitted operand's element in the compute type (omitted: zero).
template <typename Acc, typename T>
Acc at(const T* p, int64_t i) {
  return p ? Acc(p[i]) : Acc(0);
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
    const T *ig = data_or_null<T>(input_gates), *hg = data_or_null<T>(hidden_gates), *c = data_or_null<T>(cx);
    const T *ib = data_or_null<T>(input_bias), *hb = data_or_null<T>(hidden_bias);
    T *h_out = out_of<T>(hy), *c_out = out_of<T>(cy), *ws = out_of<T>(workspace);
    each_row(plan, [&](int64_t b) {
      const T *igr = ig + b * 4 * H, *hgr = hg + b * 4 * H;
      T* wsr = ws + b * 4 * H;
      for (int64_t u = 0; u < H; ++u) {
        Acc pre[4];
        for (int k = 0; k < 4; ++k) {
          const int64_t j = k * H + u;
          pre[k] = Acc(igr[j]) + Acc(hgr[j]) + at<Acc>(ib, j) + at<Acc>(hb, j);
        }
        const auto r = rnn::lstm_forward<Acc>(pre[0], pre[1], pre[2], pre[3], Acc(c[b * H + u]));
        h_out[b * H + u] = T(r.hy);
        c_out[b * H + u] = T(r.cy);
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
    const T *ghy = data_or_null<T>(grad_hy), *gcy = data_or_null<T>(grad_cy);
    const T *c = data_or_null<T>(cx), *cyp = data_or_null<T>(cy), *ws = data_or_null<T>(workspace);
    T *gg = out_of<T>(grad_gates), *gcx = out_of<T>(grad_cx);
    each_row(plan, [&](int64_t b) {
      const T* wsr = ws + b * 4 * H;
      T* ggr = gg + b * 4 * H;
      for (int64_t u = 0; u < H; ++u) {
        const int64_t e = b * H + u;
        const auto r = rnn::lstm_backward<Acc>(at<Acc>(ghy, e), at<Acc>(gcy, e), Acc(c[e]), Acc(cyp[e]), Acc(wsr[u]),
                                               Acc(wsr[H + u]), Acc(wsr[2 * H + u]), Acc(wsr[3 * H + u]));
        ggr[u] = T(r.gi);
        ggr[H + u] = T(r.gf);
        ggr[2 * H + u] = T(r.gg);
        ggr[3 * H + u] = T(r.go);
        gcx[e] = T(r.gcx);
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
    const T *ig = data_or_null<T>(input_gates), *hg = data_or_null<T>(hidden_gates), *h = data_or_null<T>(hx);
    const T *ib = data_or_null<T>(input_bias), *hb = data_or_null<T>(hidden_bias);
    T *h_out = out_of<T>(hy), *ws = out_of<T>(workspace);
    each_row(plan, [&](int64_t b) {
      const T *igr = ig + b * 3 * H, *hgr = hg + b * 3 * H;
      T* wsr = ws + b * 5 * H;
      for (int64_t u = 0; u < H; ++u) {
        Acc in[3], hid[3];
        for (int k = 0; k < 3; ++k) {
          const int64_t j = k * H + u;
          in[k] = Acc(igr[j]) + at<Acc>(ib, j);
          hid[k] = Acc(hgr[j]) + at<Acc>(hb, j);
        }
        const Acc hxv = Acc(h[b * H + u]);
        const auto s = rnn::gru_forward<Acc>(in[0], in[1], in[2], hid[0], hid[1], hid[2], hxv);
        h_out[b * H + u] = T(s.hy);
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
    const T *ghy = data_or_null<T>(grad_hy), *ws = data_or_null<T>(workspace);
    T *gi = out_of<T>(grad_input_gates), *gh = out_of<T>(grad_hidden_gates), *ghx = out_of<T>(grad_hx);
    each_row(plan, [&](int64_t b) {
      const T* wsr = ws + b * 5 * H;
      T *gir = gi + b * 3 * H, *ghr = gh + b * 3 * H;
      for (int64_t u = 0; u < H; ++u) {
        const auto s = rnn::gru_backward<Acc>(Acc(ghy[b * H + u]), Acc(wsr[u]), Acc(wsr[H + u]), Acc(wsr[2 * H + u]),
                                              Acc(wsr[3 * H + u]), Acc(wsr[4 * H + u]));
        gir[u] = ghr[u] = T(s.gr);
        gir[H + u] = ghr[H + u] = T(s.gz);
        gir[2 * H + u] = T(s.gn);
        ghr[2 * H + u] = T(s.ghn);
        ghx[b * H + u] = T(s.ghx);
      }
    });
  });
}

}  // namespace kiln::cpu
