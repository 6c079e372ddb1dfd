// Fused scaled dot-product attention on CPU (kiln/meta/attention.h), FlashAttention's schedule:
// the forward walks 64-row query blocks over 64-key blocks with an online softmax (running max
// and sum per row, the accumulator rescaled when the max grows), so it keeps O(block * (E + Ev))
// per thread and never an [L, S] matrix; it saves each row's logsumexp. The backward recomputes
// each block's probabilities from the logsumexp: dV += P^T dO, dS = P * (dO V^T - rowsum(dO * O)),
// dQ += scale dS K, dK += scale dS^T Q. Work is split over the batch (each thread owns whole
// batch entries, so the sums run in one fixed order). Block products are OpenBLAS calls;
// 16-bit inputs compute on float32 copies (the mask is read as given, through its strides).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>
#include "gemm.h"
#include "kernel_utils.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/_scaled_dot_product_attention_fused.h"
#include "kiln/gen/kernels/cpu/_scaled_dot_product_attention_fused_backward.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kBlock = 64;

// The attention mask of one batch entry: is (i, j) visible, and what does it add to the score?
template <typename M>
struct MaskView {
  const meta::AttentionPlan& plan;
  const M* base;  // null: no explicit mask
  // score of (i, j) after masking: -inf when hidden
  template <typename C>
  C apply(C score, int64_t i, int64_t j) const {
    if (plan.is_causal && j > i) return -std::numeric_limits<C>::infinity();
    if (!base) return score;
    const M m = base[i * plan.mask_stride_l + j * plan.mask_stride_s];
    if constexpr (std::is_same_v<M, bool>) return m ? score : -std::numeric_limits<C>::infinity();
    else return score + C(m);
  }
};

template <typename C>
MatRef<C> rows(const C* data, int64_t first, int64_t width) {
  return {data + first * width, width, 1};
}
template <typename C>
MatRef<C> rows_transposed(const C* data, int64_t first, int64_t width) {  // the block's transpose
  return {data + first * width, 1, width};
}

// The keys a query block may see: all, or (causal) those up to its last row.
int64_t key_end(const meta::AttentionPlan& p, int64_t i1) { return p.is_causal ? std::min(p.S, i1) : p.S; }

template <typename C, typename M>
void forward_one(const meta::AttentionPlan& p, const MaskView<M>& mask, const C* q, const C* k, const C* v, C* out,
                 C* lse, std::vector<C>& scores, std::vector<C>& acc) {
  const C inf = std::numeric_limits<C>::infinity();
  for (int64_t i0 = 0; i0 < p.L; i0 += kBlock) {
    const int64_t bq = std::min(kBlock, p.L - i0);
    std::vector<C> m(size_t(bq), -inf), l(size_t(bq), C(0));
    std::fill(acc.begin(), acc.begin() + bq * p.Ev, C(0));
    const int64_t j_end = key_end(p, i0 + bq);
    for (int64_t j0 = 0; j0 < j_end; j0 += kBlock) {
      const int64_t bk = std::min(kBlock, j_end - j0);
      gemm<C>(bq, bk, p.E, Scalar(p.scale), rows(q, i0, p.E), rows_transposed(k, j0, p.E), Scalar(0), scores.data(),
              bk);
      for (int64_t r = 0; r < bq; ++r) {
        C* s = scores.data() + r * bk;
        C row_max = -inf;
        for (int64_t c = 0; c < bk; ++c) {
          s[c] = mask.apply(s[c], i0 + r, j0 + c);
          row_max = std::max(row_max, s[c]);
        }
        const C m_new = std::max(m[size_t(r)], row_max);
        if (m_new == -inf) {  // nothing visible yet: no weight from this block
          std::fill(s, s + bk, C(0));
          continue;
        }
        const C correction = std::exp(m[size_t(r)] - m_new);  // 0 when the old max was -inf
        C sum = 0;
        for (int64_t c = 0; c < bk; ++c) sum += (s[c] = std::exp(s[c] - m_new));
        l[size_t(r)] = l[size_t(r)] * correction + sum;
        if (correction != C(1))
          for (int64_t c = 0; c < p.Ev; ++c) acc[size_t(r * p.Ev + c)] *= correction;
        m[size_t(r)] = m_new;
      }
      if (p.Ev > 0)
        gemm<C>(bq, p.Ev, bk, Scalar(1), MatRef<C>{scores.data(), bk, 1}, rows(v, j0, p.Ev), Scalar(1), acc.data(),
                p.Ev);
    }
    for (int64_t r = 0; r < bq; ++r) {
      // a row that sees no key: NaN, as softmax over nothing but -inf (PyTorch's math path);
      // no keys at all: 0, the empty product's
      const C norm = l[size_t(r)] > 0 ? C(1) / l[size_t(r)] : p.S == 0 ? C(0) : std::numeric_limits<C>::quiet_NaN();
      for (int64_t c = 0; c < p.Ev; ++c) out[(i0 + r) * p.Ev + c] = acc[size_t(r * p.Ev + c)] * norm;
      lse[i0 + r] = l[size_t(r)] > 0 ? m[size_t(r)] + std::log(l[size_t(r)]) : -inf;
    }
  }
}

template <typename C, typename M>
void backward_one(const meta::AttentionPlan& p, const MaskView<M>& mask, const C* q, const C* k, const C* v,
                  const C* out, const C* dout, const C* lse, C* dq, C* dk, C* dv, std::vector<C>& probs,
                  std::vector<C>& dprobs, std::vector<C>& delta) {
  for (int64_t i = 0; i < p.L; ++i) {  // rowsum(dO * O)
    C d = 0;
    for (int64_t c = 0; c < p.Ev; ++c) d += dout[i * p.Ev + c] * out[i * p.Ev + c];
    delta[size_t(i)] = d;
  }
  std::fill(dq, dq + p.L * p.E, C(0));
  std::fill(dk, dk + p.S * p.E, C(0));
  std::fill(dv, dv + p.S * p.Ev, C(0));
  const C scale = C(p.scale);
  for (int64_t j0 = 0; j0 < p.S; j0 += kBlock) {
    const int64_t bk = std::min(kBlock, p.S - j0);
    const int64_t i_start = p.is_causal ? j0 / kBlock * kBlock : 0;  // earlier query blocks see none of these keys
    for (int64_t i0 = i_start; i0 < p.L; i0 += kBlock) {
      const int64_t bq = std::min(kBlock, p.L - i0);
      gemm<C>(bq, bk, p.E, Scalar(p.scale), rows(q, i0, p.E), rows_transposed(k, j0, p.E), Scalar(0), probs.data(), bk);
      for (int64_t r = 0; r < bq; ++r)
        for (int64_t c = 0; c < bk; ++c) {
          C& s = probs[size_t(r * bk + c)];
          s = std::exp(mask.apply(s, i0 + r, j0 + c) - lse[i0 + r]);
        }
      // dV_j += P^T dO_i
      if (p.Ev > 0)
        gemm<C>(bk, p.Ev, bq, Scalar(1), MatRef<C>{probs.data(), 1, bk}, rows(dout, i0, p.Ev), Scalar(1),
                dv + j0 * p.Ev, p.Ev);
      // dP = dO_i V_j^T, then dS = P * (dP - delta)
      gemm<C>(bq, bk, p.Ev, Scalar(1), rows(dout, i0, p.Ev), rows_transposed(v, j0, p.Ev), Scalar(0), dprobs.data(),
              bk);
      for (int64_t r = 0; r < bq; ++r)
        for (int64_t c = 0; c < bk; ++c) {
          const size_t e = size_t(r * bk + c);
          dprobs[e] = probs[e] * (dprobs[e] - delta[size_t(i0 + r)]);
        }
      // dQ_i += scale dS K_j; dK_j += scale dS^T Q_i
      if (p.E == 0) continue;
      gemm<C>(bq, p.E, bk, Scalar(scale), MatRef<C>{dprobs.data(), bk, 1}, rows(k, j0, p.E), Scalar(1), dq + i0 * p.E,
              p.E);
      gemm<C>(bk, p.E, bq, Scalar(scale), MatRef<C>{dprobs.data(), 1, bk}, rows(q, i0, p.E), Scalar(1), dk + j0 * p.E,
              p.E);
    }
  }
}

// t as a dense tensor of compute type C (itself when it already is one).
template <typename C>
TensorBase dense_as(const TensorBase& t, const char* op) {
  const DType want = dtype_of<C>;
  if (t.dtype() == want) return t.contiguous();
  TensorBase d = kiln::detail::empty_dense(t.sizes(), want, t.device(), op);
  d.copy_(t);
  return d;
}

template <typename C>
const C* cptr(const TensorBase& t) {
  return static_cast<const C*>(t.data_ptr());
}

// fn(mask view for batch entry b) for the mask's element type.
template <typename T, typename Fn>
void with_mask(const meta::AttentionPlan& p, const TensorBase& attn_mask, int64_t b, const Fn& fn) {
  if (p.mask == meta::AttentionMask::Bool)
    fn(MaskView<bool>{p, static_cast<const bool*>(attn_mask.data_ptr()) + p.mask_offsets[size_t(b)]});
  else if (p.mask == meta::AttentionMask::Additive)
    fn(MaskView<T>{p, static_cast<const T*>(attn_mask.data_ptr()) + p.mask_offsets[size_t(b)]});
  else fn(MaskView<bool>{p, nullptr});
}

int threads_over_batch(const meta::AttentionPlan& p) {
  return kiln::detail::threads_for(p.B * p.L * p.S * (p.E + p.Ev), p.B);
}

}  // namespace

void _scaled_dot_product_attention_fused(const meta::AttentionPlan& plan, const TensorBase& output,
                                         const TensorBase& logsumexp, const TensorBase& query, const TensorBase& key,
                                         const TensorBase& value, const TensorBase& attn_mask) {
  if (output.numel() == 0 && logsumexp.numel() == 0) return;
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_like_v<T>) {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const char* op = "_scaled_dot_product_attention_fused";
      const TensorBase q = dense_as<C>(query, op), k = dense_as<C>(key, op), v = dense_as<C>(value, op);
      TensorBase out = output.dtype() == dtype_of<C>
                           ? output
                           : kiln::detail::empty_dense(output.sizes(), dtype_of<C>, output.device(), op);
      C* lse = static_cast<C*>(logsumexp.data_ptr());
      const int threads = threads_over_batch(plan);
#pragma omp parallel num_threads(threads) if (threads > 1)
      {
        std::vector<C> scores(size_t(kBlock * kBlock)), acc(size_t(kBlock * std::max<int64_t>(plan.Ev, 1)));
#pragma omp for schedule(static)
        for (int64_t b = 0; b < plan.B; ++b)
          with_mask<T>(plan, attn_mask, b, [&](const auto& mask) {
            forward_one<C>(plan, mask, cptr<C>(q) + b * plan.L * plan.E, cptr<C>(k) + b * plan.S * plan.E,
                           cptr<C>(v) + b * plan.S * plan.Ev, static_cast<C*>(out.data_ptr()) + b * plan.L * plan.Ev,
                           lse + b * plan.L, scores, acc);
          });
      }
      if (!out.is_same(output)) output.copy_(out);
    }
  });
}

void _scaled_dot_product_attention_fused_backward(const meta::AttentionPlan& plan, const TensorBase& grad_query,
                                                  const TensorBase& grad_key, const TensorBase& grad_value,
                                                  const TensorBase& grad_out, const TensorBase& query,
                                                  const TensorBase& key, const TensorBase& value,
                                                  const TensorBase& attn_mask, const TensorBase& output,
                                                  const TensorBase& logsumexp) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_like_v<T>) {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const char* op = "_scaled_dot_product_attention_fused_backward";
      const TensorBase q = dense_as<C>(query, op), k = dense_as<C>(key, op), v = dense_as<C>(value, op),
                       o = dense_as<C>(output, op), dout = dense_as<C>(grad_out, op), lse = dense_as<C>(logsumexp, op);
      auto result = [&](const TensorBase& r) {
        return r.dtype() == dtype_of<C> ? r : kiln::detail::empty_dense(r.sizes(), dtype_of<C>, r.device(), op);
      };
      TensorBase dq = result(grad_query), dk = result(grad_key), dv = result(grad_value);
      const int threads = threads_over_batch(plan);
#pragma omp parallel num_threads(threads) if (threads > 1)
      {
        std::vector<C> probs(size_t(kBlock * kBlock)), dprobs(size_t(kBlock * kBlock)), delta(size_t(plan.L));
#pragma omp for schedule(static)
        for (int64_t b = 0; b < plan.B; ++b)
          with_mask<T>(plan, attn_mask, b, [&](const auto& mask) {
            backward_one<C>(plan, mask, cptr<C>(q) + b * plan.L * plan.E, cptr<C>(k) + b * plan.S * plan.E,
                            cptr<C>(v) + b * plan.S * plan.Ev, cptr<C>(o) + b * plan.L * plan.Ev,
                            cptr<C>(dout) + b * plan.L * plan.Ev, cptr<C>(lse) + b * plan.L,
                            static_cast<C*>(dq.data_ptr()) + b * plan.L * plan.E,
                            static_cast<C*>(dk.data_ptr()) + b * plan.S * plan.E,
                            static_cast<C*>(dv.data_ptr()) + b * plan.S * plan.Ev, probs, dprobs, delta);
          });
      }
      for (const auto& [mine, theirs] :
           {std::pair<TensorBase, TensorBase>{dq, grad_query}, {dk, grad_key}, {dv, grad_value}})
        if (!mine.is_same(theirs)) theirs.copy_(mine);
    }
  });
}

}  // namespace kiln::cpu
