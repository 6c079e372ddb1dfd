// Fused scaled dot-product attention on CPU (kiln/meta/attention.h), FlashAttention's schedule:
// the forward walks 64-row query blocks over 64-key blocks with an online softmax (running max
// and sum per row, the accumulator rescaled when the max grows), so it keeps O(block * (E + Ev))
// per thread and never an [L, S] matrix; it saves each row's logsumexp. The backward recomputes
// each block's probabilities from the logsumexp: dV += P^T dO, dS = P * (dO V^T - rowsum(dO * O)),
// dQ += scale dS K, dK += scale dS^T Q. Under dropout (Z: 1 / (1 - p) where kept, else 0) the
// forward sums the undropped exponentials but multiplies V by P * Z; the backward takes
// dV += (P * Z)^T dO and dS = P * (dP * Z - delta), delta = rowsum(dO * O) still. Work is split
// over the batch (each thread owns whole batch entries, so the sums run in one fixed order).
// Block products are gemm calls (gemm.h).
// Inputs are read in place wherever their rows are unit-stride (the heads of a fused q/k/v
// projection are); 16-bit inputs compute on float32 copies (the mask is read as given, through
// its strides).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>
#include "gemm.h"
#include "kernel_utils.h"
#include "vec_math.h"
#include "kiln/common/attention_dropout.h"
#include "kiln/cpu/parallel.h"
#include "kiln/cpu/philox_words.h"
#include "kiln/philox.h"
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
  // Masks query row i's scores s[0, n) of keys j0, j0 + 1, ...: hidden ones become -inf. A causal
  // row's hidden keys are a suffix, filled at once, so the common cases have no branch per score.
  template <typename C>
  void apply(C* s, int64_t i, int64_t j0, int64_t n) const {
    const int64_t end = plan.is_causal ? std::clamp<int64_t>(i - j0 + 1, 0, n) : n;
    if (base) {
      const M* m = base + i * plan.mask_stride_l + j0 * plan.mask_stride_s;
      for (int64_t c = 0; c < end; ++c) {
        const M mc = m[c * plan.mask_stride_s];
        if constexpr (std::is_same_v<M, bool>) s[c] = mc ? s[c] : -std::numeric_limits<C>::infinity();
        else s[c] += C(mc);
      }
    }
    // a select over the whole row, not a fill of the tail: the vector loads that follow then read
    // whole vector stores (scalar stores under a vector load stall store forwarding)
    const C hidden = -std::numeric_limits<C>::infinity();
#pragma omp simd
    for (int64_t c = 0; c < n; ++c) s[c] = c < end ? s[c] : hidden;
  }
};

// One batch entry's [rows, width] matrix: row r at data + r * rs, unit-stride along the row.
template <typename C>
struct Mat {
  const C* data;
  int64_t rs;
};

template <typename C>
MatRef<C> rows(Mat<C> m, int64_t first) {
  return {m.data + first * m.rs, m.rs, 1};
}
template <typename C>
MatRef<C> rows_transposed(Mat<C> m, int64_t first) {  // the block's transpose
  return {m.data + first * m.rs, 1, m.rs};
}

// The dropout factors (attention_dropout.h) of probabilities n0 .. n0 + count - 1 (count <= kBlock)
// into z: the Philox blocks they read are drawn side by side first (kiln/cpu/philox_words.h), as
// rand's own fill draws them.
template <typename C>
void dropout_factors(const attention::Dropout& d, uint64_t n0, int64_t count, C* z) {
  constexpr int64_t kMaxBlocks = kBlock / 4 + 2;
  alignas(64) uint32_t words[4][kMaxBlocks];
  const uint64_t b0 = n0 / 4;
  const int64_t nb = int64_t((n0 + uint64_t(count) - 1) / 4 - b0) + 1;
  cpu::philox_words(d.seed, d.first_block + b0, nb, words);
  const int64_t lead = int64_t(n0 % 4);  // n0's word in its block
  const C kept = C(d.scale);
#pragma omp simd
  for (int64_t c = 0; c < count; ++c) {
    const int64_t w = lead + c;
    z[c] = philox::uniform_bits<24>(words[w & 3][w >> 2]) < d.keep_below ? kept : C(0);
  }
}

// The keys a query block may see: all, or (causal) those up to its last row.
int64_t key_end(const meta::AttentionPlan& p, int64_t i1) { return p.is_causal ? std::min(p.S, i1) : p.S; }

template <typename C, typename M>
void forward_one(const meta::AttentionPlan& p, const MaskView<M>& mask, const attention::Dropout& drop, int64_t b,
                 Mat<C> q, Mat<C> k, Mat<C> v, C* out, C* lse, std::vector<C>& scores, std::vector<C>& acc,
                 std::vector<C>& stats) {
  const C inf = std::numeric_limits<C>::infinity();
  C* m = stats.data();           // running max per row of the block
  C* l = stats.data() + kBlock;  // running sum of exp(score - max)
  for (int64_t i0 = 0; i0 < p.L; i0 += kBlock) {
    const int64_t bq = std::min(kBlock, p.L - i0);
    std::fill(m, m + bq, -inf);
    std::fill(l, l + bq, C(0));
    std::fill(acc.begin(), acc.begin() + bq * p.Ev, C(0));
    const int64_t j_end = key_end(p, i0 + bq);
    for (int64_t j0 = 0; j0 < j_end; j0 += kBlock) {
      const int64_t bk = std::min(kBlock, j_end - j0);
      gemm<C>(bq, bk, p.E, Scalar(p.scale), rows(q, i0), rows_transposed(k, j0), Scalar(0), scores.data(),
              bk);
      for (int64_t r = 0; r < bq; ++r) {
        C* s = scores.data() + r * bk;
        mask.apply(s, i0 + r, j0, bk);
        C row_max = -inf;
#pragma omp simd reduction(max : row_max)
        for (int64_t c = 0; c < bk; ++c) row_max = std::max(row_max, s[c]);
        const C m_new = std::max(m[r], row_max);
        if (m_new == -inf) {  // nothing visible yet: no weight from this block
          std::fill(s, s + bk, C(0));
          continue;
        }
        const C correction = std::exp(m[r] - m_new);  // 0 when the old max was -inf
        C sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t c = 0; c < bk; ++c) {
          const C e = exp_c(s[c] - m_new);
          s[c] = e;
          sum += e;
        }
        l[r] = l[r] * correction + sum;
        if (drop.active) {  // the normalizer keeps every exponential; V is weighed by the kept ones
          C* z = stats.data() + 2 * kBlock;
          dropout_factors(drop, uint64_t((b * p.L + i0 + r) * p.S + j0), bk, z);
#pragma omp simd
          for (int64_t c = 0; c < bk; ++c) s[c] *= z[c];
        }
        if (correction != C(1))
          for (int64_t c = 0; c < p.Ev; ++c) acc[size_t(r * p.Ev + c)] *= correction;
        m[r] = m_new;
      }
      if (p.Ev > 0)
        gemm<C>(bq, p.Ev, bk, Scalar(1), MatRef<C>{scores.data(), bk, 1}, rows(v, j0), Scalar(1), acc.data(),
                p.Ev);
    }
    for (int64_t r = 0; r < bq; ++r) {
      // a row that sees no key: NaN, as softmax over nothing but -inf (PyTorch's math path);
      // no keys at all: 0, the empty product's
      const C norm = l[r] > 0 ? C(1) / l[r] : p.S == 0 ? C(0) : std::numeric_limits<C>::quiet_NaN();
      for (int64_t c = 0; c < p.Ev; ++c) out[(i0 + r) * p.Ev + c] = acc[size_t(r * p.Ev + c)] * norm;
      lse[i0 + r] = l[r] > 0 ? m[r] + std::log(l[r]) : -inf;
    }
  }
}

template <typename C, typename M>
void backward_one(const meta::AttentionPlan& p, const MaskView<M>& mask, const attention::Dropout& drop, int64_t b,
                  Mat<C> q, Mat<C> k, Mat<C> v, Mat<C> out, Mat<C> dout, const C* lse, C* dq, C* dk, C* dv,
                  std::vector<C>& probs, std::vector<C>& dprobs, std::vector<C>& delta, std::vector<C>& dropped) {
  for (int64_t i = 0; i < p.L; ++i) {  // rowsum(dO * O)
    C d = 0;
    const C *dor = dout.data + i * dout.rs, *orow = out.data + i * out.rs;
    for (int64_t c = 0; c < p.Ev; ++c) d += dor[c] * orow[c];
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
      gemm<C>(bq, bk, p.E, Scalar(p.scale), rows(q, i0), rows_transposed(k, j0), Scalar(0), probs.data(), bk);
      for (int64_t r = 0; r < bq; ++r) {
        C* s = probs.data() + r * bk;
        mask.apply(s, i0 + r, j0, bk);
        const C row_lse = lse[i0 + r];
#pragma omp simd
        for (int64_t c = 0; c < bk; ++c) s[c] = exp_c(s[c] - row_lse);
      }
      // dV_j += P^T dO_i, or (dropout) (P * Z)^T dO_i: dropped holds Z, then P * Z after it
      C* z = dropped.data();
      C* pz = dropped.data() + kBlock * kBlock;
      if (drop.active)
        for (int64_t r = 0; r < bq; ++r) {
          dropout_factors(drop, uint64_t((b * p.L + i0 + r) * p.S + j0), bk, z + r * bk);
#pragma omp simd
          for (int64_t c = 0; c < bk; ++c) pz[r * bk + c] = probs[size_t(r * bk + c)] * z[r * bk + c];
        }
      if (p.Ev > 0)
        gemm<C>(bk, p.Ev, bq, Scalar(1), MatRef<C>{drop.active ? pz : probs.data(), 1, bk}, rows(dout, i0),
                Scalar(1), dv + j0 * p.Ev, p.Ev);
      // dP = dO_i V_j^T, then dS = P * (dP - delta), or (dropout) P * (dP * Z - delta)
      gemm<C>(bq, bk, p.Ev, Scalar(1), rows(dout, i0), rows_transposed(v, j0), Scalar(0), dprobs.data(),
              bk);
      for (int64_t r = 0; r < bq; ++r) {
        const C d = delta[size_t(i0 + r)];
        C* ds = dprobs.data() + r * bk;
        const C* pr = probs.data() + r * bk;
        if (drop.active) {
          const C* zr = z + r * bk;
#pragma omp simd
          for (int64_t c = 0; c < bk; ++c) ds[c] = pr[c] * (ds[c] * zr[c] - d);
        } else {
#pragma omp simd
          for (int64_t c = 0; c < bk; ++c) ds[c] = pr[c] * (ds[c] - d);
        }
      }
      // dQ_i += scale dS K_j; dK_j += scale dS^T Q_i
      if (p.E == 0) continue;
      gemm<C>(bq, p.E, bk, Scalar(scale), MatRef<C>{dprobs.data(), bk, 1}, rows(k, j0), Scalar(1), dq + i0 * p.E,
              p.E);
      gemm<C>(bk, p.E, bq, Scalar(scale), MatRef<C>{dprobs.data(), 1, bk}, rows(q, i0), Scalar(1), dk + j0 * p.E,
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

// An input read in place as B matrices [n, width]: in compute type C with unit stride along its
// rows (a permuted view such as a head split of a fused q/k/v projection qualifies), else a
// dense copy first. Entry b's matrix starts at offset[b]: the batch dims' strides, in order.
template <typename C>
struct Batched {
  TensorBase held;  // what is read: the input itself, or its copy
  std::vector<int64_t> offset;
  int64_t rs = 0;
  Mat<C> operator[](int64_t b) const { return {static_cast<const C*>(held.data_ptr()) + offset[size_t(b)], rs}; }
};

template <typename C>
Batched<C> batched(const TensorBase& t, int64_t B, const char* op) {
  const int64_t nd = t.dim(), width = t.size(nd - 1);
  Batched<C> r;
  if (t.dtype() == dtype_of<C> && (t.stride(nd - 1) == 1 || width <= 1)) {
    r.held = t;
  } else {
    r.held = kiln::detail::empty_dense(t.sizes(), dtype_of<C>, t.device(), op);
    r.held.copy_(t);
  }
  r.rs = r.held.size(nd - 2) <= 1 ? width : r.held.stride(nd - 2);
  r.offset.assign(size_t(B), 0);
  for (int64_t b = 0; b < B; ++b) {  // b's index over the batch dims, last fastest
    int64_t rest = b, off = 0;
    for (int64_t d = nd - 3; d >= 0; --d) {
      off += rest % r.held.size(d) * r.held.stride(d);
      rest /= r.held.size(d);
    }
    r.offset[size_t(b)] = off;
  }
  return r;
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
      const Batched<C> q = batched<C>(query, plan.B, op), k = batched<C>(key, plan.B, op),
                       v = batched<C>(value, plan.B, op);
      TensorBase out = output.dtype() == dtype_of<C>
                           ? output
                           : kiln::detail::empty_dense(output.sizes(), dtype_of<C>, output.device(), op);
      C* lse = static_cast<C*>(logsumexp.data_ptr());
      const attention::Dropout drop = attention::Dropout::make(plan.dropout_p, plan.philox_seed, plan.philox_offset);
      const int threads = threads_over_batch(plan);
#pragma omp parallel num_threads(threads) if (threads > 1)
      {
        std::vector<C> scores(size_t(kBlock * kBlock)), acc(size_t(kBlock * std::max<int64_t>(plan.Ev, 1))),
            stats(size_t(3 * kBlock));  // max, sum and one row's dropout factors
#pragma omp for schedule(static)
        for (int64_t b = 0; b < plan.B; ++b)
          with_mask<T>(plan, attn_mask, b, [&](const auto& mask) {
            forward_one<C>(plan, mask, drop, b, q[b], k[b], v[b],
                           static_cast<C*>(out.data_ptr()) + b * plan.L * plan.Ev, lse + b * plan.L, scores, acc,
                           stats);
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
      const Batched<C> q = batched<C>(query, plan.B, op), k = batched<C>(key, plan.B, op),
                       v = batched<C>(value, plan.B, op), o = batched<C>(output, plan.B, op),
                       dout = batched<C>(grad_out, plan.B, op);
      const TensorBase lse = dense_as<C>(logsumexp, op);
      auto result = [&](const TensorBase& r) {
        return r.dtype() == dtype_of<C> ? r : kiln::detail::empty_dense(r.sizes(), dtype_of<C>, r.device(), op);
      };
      TensorBase dq = result(grad_query), dk = result(grad_key), dv = result(grad_value);
      const attention::Dropout drop = attention::Dropout::make(plan.dropout_p, plan.philox_seed, plan.philox_offset);
      const int threads = threads_over_batch(plan);
#pragma omp parallel num_threads(threads) if (threads > 1)
      {
        std::vector<C> probs(size_t(kBlock * kBlock)), dprobs(size_t(kBlock * kBlock)), delta(size_t(plan.L)),
            dropped(drop.active ? size_t(2 * kBlock * kBlock) : 0);
#pragma omp for schedule(static)
        for (int64_t b = 0; b < plan.B; ++b)
          with_mask<T>(plan, attn_mask, b, [&](const auto& mask) {
            backward_one<C>(plan, mask, drop, b, q[b], k[b], v[b], o[b], dout[b], cptr<C>(lse) + b * plan.L,
                            static_cast<C*>(dq.data_ptr()) + b * plan.L * plan.E,
                            static_cast<C*>(dk.data_ptr()) + b * plan.S * plan.E,
                            static_cast<C*>(dv.data_ptr()) + b * plan.S * plan.Ev, probs, dprobs, delta, dropped);
          });
      }
      for (const auto& [mine, theirs] :
           {std::pair<TensorBase, TensorBase>{dq, grad_query}, {dk, grad_key}, {dv, grad_value}})
        if (!mine.is_same(theirs)) theirs.copy_(mine);
    }
  });
}

}  // namespace kiln::cpu
