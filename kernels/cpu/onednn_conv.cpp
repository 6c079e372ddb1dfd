// float32 convolutions through oneDNN (see onednn_conv.h). Primitives let oneDNN pick its
// blocked layouts (format `any`): kiln's plain tensors are reordered in and out around them,
// as libtorch does. Primitives are cached per shape and thread count (creating one costs more
// than a small convolution); the cache is shared by threads under a mutex, and oneDNN's primitives
// may run concurrently.
#ifdef KILN_HAVE_ONEDNN
#include "onednn_conv.h"
#include "onednn_enabled.h"

#include <omp.h>

#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

namespace kiln::cpu::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Dims = memory::dims;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

struct Geometry {
  Dims src, weights, dst, strides, dilates, pad_l, pad_r;
  Tag src_tag = Tag::undef, weights_tag = Tag::undef;
};

// false where oneDNN cannot express the plan (windows that stop short of
// an image's end by more than the padding, as a transposed convolution's output_padding makes).
bool geometry(const meta::ConvPlan& p, Geometry& g) {
  static const Tag src_tags[] = {Tag::ncw, Tag::nchw, Tag::ncdhw};
  static const Tag plain_tags[] = {Tag::oiw, Tag::oihw, Tag::oidhw};
  static const Tag group_tags[] = {Tag::goiw, Tag::goihw, Tag::goidhw};
  const int64_t G = p.groups;
  g.src = {p.batch, p.image_channels};
  g.dst = {p.batch, p.small_channels};
  g.weights = G > 1 ? Dims{G, p.small_channels / G, p.image_channels / G} : Dims{p.small_channels, p.image_channels};
  for (int64_t d = 0; d < p.dims; ++d) {
    const size_t i = size_t(d);
    g.src.push_back(p.image_sizes[i]);
    g.dst.push_back(p.small_sizes[i]);
    g.weights.push_back(p.kernel[i]);
    g.strides.push_back(p.stride[i]);
    g.dilates.push_back(p.dilation[i] - 1);  // oneDNN counts the gaps
    g.pad_l.push_back(p.padding[i]);
    const int64_t right =
        (p.small_sizes[i] - 1) * p.stride[i] + (p.kernel[i] - 1) * p.dilation[i] + 1 - p.image_sizes[i] - p.padding[i];
    if (right < 0) return false;
    g.pad_r.push_back(right);
  }
  g.src_tag = src_tags[p.dims - 1];
  g.weights_tag = (G > 1 ? group_tags : plain_tags)[p.dims - 1];
  return true;
}

memory::desc any(const Dims& dims) { return memory::desc(dims, memory::data_type::f32, Tag::any); }

enum class Kind { Forward, ForwardBias, BackwardData, BackwardWeights };

struct Entry {
  dnnl::primitive primitive;
  memory::desc src, weights, dst;  // the layouts the primitive reads and writes
};

std::mutex cache_mutex;
std::map<std::vector<int64_t>, Entry> cache;

// oneDNN splits the work when a primitive is created, for the OpenMP threads of that moment: the
// thread count is part of the key (a primitive made for 1 thread runs on 1 thread).
std::vector<int64_t> key_of(Kind kind, const Geometry& g) {
  std::vector<int64_t> k{int64_t(kind), int64_t(omp_get_max_threads())};
  for (const Dims* v : {&g.src, &g.weights, &g.dst, &g.strides, &g.dilates, &g.pad_l, &g.pad_r}) {
    k.push_back(int64_t(v->size()));
    k.insert(k.end(), v->begin(), v->end());
  }
  return k;
}

Entry make_entry(Kind kind, const Geometry& g) {
  const auto algo = dnnl::algorithm::convolution_direct;
  const auto prop = dnnl::prop_kind::forward_training;
  if (kind == Kind::ForwardBias) {
    const memory::desc bias(Dims{g.dst[1]}, memory::data_type::f32, Tag::x);
    const dnnl::convolution_forward::desc fwd(prop, algo, any(g.src), any(g.weights), bias, any(g.dst), g.strides,
                                              g.dilates, g.pad_l, g.pad_r);
    const dnnl::convolution_forward::primitive_desc pd(fwd, engine());
    return {dnnl::convolution_forward(pd), pd.src_desc(), pd.weights_desc(), pd.dst_desc()};
  }
  const dnnl::convolution_forward::desc fwd(prop, algo, any(g.src), any(g.weights), any(g.dst), g.strides, g.dilates,
                                            g.pad_l, g.pad_r);
  const dnnl::convolution_forward::primitive_desc fwd_pd(fwd, engine());
  if (kind == Kind::Forward)
    return {dnnl::convolution_forward(fwd_pd), fwd_pd.src_desc(), fwd_pd.weights_desc(), fwd_pd.dst_desc()};
  if (kind == Kind::BackwardData) {
    const dnnl::convolution_backward_data::desc bwd(algo, any(g.src), any(g.weights), any(g.dst), g.strides, g.dilates,
                                                    g.pad_l, g.pad_r);
    const dnnl::convolution_backward_data::primitive_desc pd(bwd, engine(), fwd_pd);
    return {dnnl::convolution_backward_data(pd), pd.diff_src_desc(), pd.weights_desc(), pd.diff_dst_desc()};
  }
  const dnnl::convolution_backward_weights::desc bwd(algo, any(g.src), any(g.weights), any(g.dst), g.strides, g.dilates,
                                                     g.pad_l, g.pad_r);
  const dnnl::convolution_backward_weights::primitive_desc pd(bwd, engine(), fwd_pd);
  return {dnnl::convolution_backward_weights(pd), pd.src_desc(), pd.diff_weights_desc(), pd.diff_dst_desc()};
}

const Entry& entry_for(Kind kind, const Geometry& g) {
  const std::vector<int64_t> key = key_of(kind, g);
  std::lock_guard<std::mutex> lock(cache_mutex);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_entry(kind, g)).first;
  return it->second;  // std::map: the reference outlives later insertions
}

// A tensor in kiln's plain layout, and the memory the primitive uses for it (the same, or a
// reordered copy).
struct Operand {
  memory user, inner;
  Operand(const memory::desc& wanted, const Dims& dims, Tag tag, const float* data, bool read, dnnl::stream& s)
      : user(memory::desc(dims, memory::data_type::f32, tag), engine(), const_cast<float*>(data)) {
    if (wanted == user.get_desc()) {
      inner = user;
      return;
    }
    inner = memory(wanted, engine());
    if (read) dnnl::reorder(user, inner).execute(s, user, inner);
  }
  void write_back(dnnl::stream& s) {
    if (inner != user) dnnl::reorder(inner, user).execute(s, inner, user);
  }
};

bool run(Kind kind, const meta::ConvPlan& p, const float* src, const float* weights, const float* dst,
         const float* bias = nullptr) {
  Geometry g;
  if (!enabled() || p.batch == 0 || !geometry(p, g)) return false;
  try {
    const Entry& e = entry_for(kind, g);
    dnnl::stream s(engine());
    const bool forward = kind == Kind::Forward || kind == Kind::ForwardBias;
    Operand src_op(e.src, g.src, g.src_tag, src, kind != Kind::BackwardData, s);
    Operand weights_op(e.weights, g.weights, g.weights_tag, weights, kind != Kind::BackwardWeights, s);
    Operand dst_op(e.dst, g.dst, g.src_tag, dst, !forward, s);
    if (forward) {
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, src_op.inner}, {DNNL_ARG_WEIGHTS, weights_op.inner}, {DNNL_ARG_DST, dst_op.inner}};
      if (bias)
        args.emplace(DNNL_ARG_BIAS, memory(memory::desc(Dims{g.dst[1]}, memory::data_type::f32, Tag::x), engine(),
                                           const_cast<float*>(bias)));
      e.primitive.execute(s, args);
      dst_op.write_back(s);
    } else if (kind == Kind::BackwardData) {
      e.primitive.execute(
          s,
          {{DNNL_ARG_DIFF_SRC, src_op.inner}, {DNNL_ARG_WEIGHTS, weights_op.inner}, {DNNL_ARG_DIFF_DST, dst_op.inner}});
      src_op.write_back(s);
    } else {
      e.primitive.execute(
          s,
          {{DNNL_ARG_SRC, src_op.inner}, {DNNL_ARG_DIFF_WEIGHTS, weights_op.inner}, {DNNL_ARG_DIFF_DST, dst_op.inner}});
      weights_op.write_back(s);
    }
    s.wait();
    return true;
  } catch (const dnnl::error&) {  // a shape oneDNN has no implementation for: the im2col path
    return false;
  }
}

}  // namespace

bool small_from_image(const meta::ConvPlan& plan, float* small, const float* image, const float* weight,
                      const float* bias) {
  return run(bias ? Kind::ForwardBias : Kind::Forward, plan, image, weight, small, bias);
}

bool image_from_small(const meta::ConvPlan& plan, float* image, const float* small, const float* weight) {
  return run(Kind::BackwardData, plan, image, weight, small);
}

bool weight_grad(const meta::ConvPlan& plan, float* grad_weight, const float* small, const float* image) {
  return run(Kind::BackwardWeights, plan, image, grad_weight, small);
}

}  // namespace kiln::cpu::onednn
#endif  // KILN_HAVE_ONEDNN
