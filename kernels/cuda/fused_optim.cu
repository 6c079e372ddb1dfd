// The fused optimizer steps on CUDA (ops/optim.yaml): one launch per group of tensors, as
// PyTorch's multi-tensor apply. A launch's table, passed by value as the kernel's argument
// (under 4 KB), names up to kMaxTensors tensors and kMaxBlocks blocks, each block a chunk of
// kChunk elements of one tensor; a tensor larger than what is left of a table continues in the
// next launch. found_inf is read on the device (a step with an inf skips without a host sync),
// and so are grad_scale and each parameter's step. The arithmetic is kiln/common/fused_optim.h's,
// the CPU kernels' too.
#include <cuda_runtime.h>
#include <algorithm>
#include <memory>
#include <vector>
#include "kiln/common/fused_optim.h"
#include "kiln/cuda/check.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/fused_adam.h"
#include "kiln/gen/kernels/cuda/fused_adamw.h"
#include "kiln/gen/kernels/cuda/fused_sgd.h"
#include "kiln/kernel/foreach_dense.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using foreach_dense::DenseGroup;
using namespace fused_optim;  // math_t, the DenseGroup slots

constexpr int kMaxTensors = 24;
constexpr int kMaxBlocks = 320;
constexpr int64_t kChunk = 65536;
constexpr int kThreads = 512;

template <int Lists>
struct Table {
  void* ptrs[Lists][kMaxTensors];
  const float* steps[kMaxTensors];  // Adam's state_steps; unused by SGD
  int64_t numel[kMaxTensors];
  int16_t block_tensor[kMaxBlocks];
  int32_t block_chunk[kMaxBlocks];
};
static_assert(sizeof(Table<5>) <= 4096, "a launch's table is a kernel argument");

struct AdamOptions {
  double lr, beta1, beta2, weight_decay, eps;
  bool decoupled, amsgrad, maximize;
};

template <typename T>
__device__ T* slot(void* p) {
  return static_cast<T*>(p);
}

template <typename T>
__global__ void adam_kernel(Table<5> table, AdamOptions o, const float* grad_scale, const float* found_inf) {
  using M = math_t<T>;
  if (found_inf && *found_inf == 1.0f) return;
  const int t = table.block_tensor[blockIdx.x];
  __shared__ fused_optim::AdamStep<M> s;  // one parameter's step: its bias corrections once per block
  if (threadIdx.x == 0)
    s = fused_optim::adam_step<M>(o.lr, o.beta1, o.beta2, o.weight_decay, o.eps, double(*table.steps[t]), o.decoupled,
                                  o.amsgrad, o.maximize);
  __syncthreads();
  T* p = slot<T>(table.ptrs[kParam][t]);
  T* g = slot<T>(table.ptrs[kGrad][t]);
  T* m = slot<T>(table.ptrs[kState0][t]);
  T* v = slot<T>(table.ptrs[kState1][t]);
  T* max_v = slot<T>(table.ptrs[kState2][t]);
  const M divisor = grad_scale ? M(*grad_scale) : M(1);
  const int64_t begin = int64_t(table.block_chunk[blockIdx.x]) * kChunk;
  const int64_t end = begin + kChunk < table.numel[t] ? begin + kChunk : table.numel[t];
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    M grad = M(g[i]);
    if (grad_scale) {
      grad /= divisor;
      g[i] = T(grad);
    }
    M param = M(p[i]), mean = M(m[i]), square = M(v[i]), peak = max_v ? M(max_v[i]) : M(0);
    fused_optim::adam_update(s, param, grad, mean, square, peak);
    p[i] = T(param), m[i] = T(mean), v[i] = T(square);
    if (max_v) max_v[i] = T(peak);
  }
}

template <typename T>
__global__ void sgd_kernel(Table<3> table, fused_optim::SgdStep<math_t<T>> s, const float* grad_scale,
                           const float* found_inf) {
  using M = math_t<T>;
  if (found_inf && *found_inf == 1.0f) return;
  const int t = table.block_tensor[blockIdx.x];
  T* p = slot<T>(table.ptrs[kParam][t]);
  T* g = slot<T>(table.ptrs[kGrad][t]);
  T* buf = slot<T>(table.ptrs[kState0][t]);
  const M divisor = grad_scale ? M(*grad_scale) : M(1);
  const int64_t begin = int64_t(table.block_chunk[blockIdx.x]) * kChunk;
  const int64_t end = begin + kChunk < table.numel[t] ? begin + kChunk : table.numel[t];
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    M grad = M(g[i]);
    if (grad_scale) {
      grad /= divisor;
      g[i] = T(grad);
    }
    M param = M(p[i]), momentum = buf ? M(buf[i]) : M(0);
    fused_optim::sgd_update(s, param, grad, momentum);
    p[i] = T(param);
    if (buf) buf[i] = T(momentum);
  }
}

// Fills tables with the chunks of `groups` (one dtype) and calls launch(table, blocks) for each
// full table and the last one.
template <int Lists, typename Launch>
void for_each_launch(const std::vector<DenseGroup*>& groups, const std::vector<const float*>& steps,
                     const Launch& launch) {
  Table<Lists> table{};
  int tensors = 0, blocks = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const int64_t n = groups[g]->numel();
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    for (int64_t c = 0; c < chunks; ++c) {
      if (c == 0 || blocks == 0) {  // the tensor enters this table (again, when it continues)
        for (int k = 0; k < Lists; ++k) table.ptrs[k][tensors] = groups[g]->template data<void>(k);
        table.steps[tensors] = steps.empty() ? nullptr : steps[g];
        table.numel[tensors] = n;
        ++tensors;
      }
      table.block_tensor[blocks] = int16_t(tensors - 1);
      table.block_chunk[blocks] = int32_t(c);
      ++blocks;
      const bool last_chunk = c + 1 == chunks;
      if (blocks == kMaxBlocks || (tensors == kMaxTensors && last_chunk)) {
        launch(table, blocks);
        tensors = blocks = 0;
      }
    }
  }
  if (blocks > 0) launch(table, blocks);
}

const float* device_scalar(const TensorBase& t) {
  return t.defined() ? static_cast<const float*>(t.data_ptr()) : nullptr;
}

// Runs fn(dtype, groups, steps) once per dtype among the parameters, over their dense groups.
template <typename Fn>
void by_dtype(std::vector<std::unique_ptr<DenseGroup>>& groups, const TensorBaseList& self,
              const TensorBaseList* state_steps, const Fn& fn) {
  std::vector<DType> dtypes;
  for (const TensorBase& p : self)
    if (std::find(dtypes.begin(), dtypes.end(), p.dtype()) == dtypes.end()) dtypes.push_back(p.dtype());
  for (DType dtype : dtypes) {
    std::vector<DenseGroup*> of_dtype;
    std::vector<const float*> steps;
    for (size_t i = 0; i < self.size(); ++i) {
      if (self[i].dtype() != dtype || groups[i]->numel() == 0) continue;
      of_dtype.push_back(groups[i].get());
      if (state_steps) steps.push_back(static_cast<const float*>((*state_steps)[i].data_ptr()));
    }
    if (!of_dtype.empty()) fn(dtype, of_dtype, steps);
  }
}

void adam(bool decoupled, const meta::ForeachPlan& plan, const TensorBaseList& self, const TensorBaseList& grads,
          const TensorBaseList& exp_avgs, const TensorBaseList& exp_avg_sqs, const TensorBaseList& max_exp_avg_sqs,
          const TensorBaseList& state_steps, const TensorBase& grad_scale, const TensorBase& found_inf, double lr,
          double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize) {
  const char* op = decoupled ? "_fused_adamw_" : "_fused_adam_";
  if (plan.length == 0) return;
  detail::check_device(plan.device.index, op);
  DeviceGuard guard(plan.device.index);
  cudaStream_t stream = detail::current_cuda_stream(plan.device.index);
  std::vector<std::unique_ptr<DenseGroup>> groups;
  for (int64_t i = 0; i < plan.length; ++i)
    groups.push_back(
        std::make_unique<DenseGroup>(op,
                                     std::array<TensorBase, 5>{self[i], grads[i], exp_avgs[i], exp_avg_sqs[i],
                                                               amsgrad ? max_exp_avg_sqs[i] : TensorBase()},
                                     std::array<bool, 5>{true, grad_scale.defined(), true, true, true}));
  const AdamOptions o{lr, beta1, beta2, weight_decay, eps, decoupled, amsgrad, maximize};
  by_dtype(groups, self, &state_steps, [&](DType dtype, const std::vector<DenseGroup*>& of_dtype, const auto& steps) {
    visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_floating(dtype_of<T>)) {  // the entry admits floating dtypes only
        for_each_launch<5>(of_dtype, steps, [&](const Table<5>& table, int blocks) {
          adam_kernel<T>
              <<<blocks, kThreads, 0, stream>>>(table, o, device_scalar(grad_scale), device_scalar(found_inf));
          KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
        });
      }
    });
  });
  for (auto& g : groups) g->finish();
}

}  // namespace

void fused_adam(const meta::ForeachPlan& plan, const TensorBaseList& self, const TensorBaseList& grads,
                const TensorBaseList& exp_avgs, const TensorBaseList& exp_avg_sqs,
                const TensorBaseList& max_exp_avg_sqs, const TensorBaseList& state_steps, const TensorBase& grad_scale,
                const TensorBase& found_inf, double lr, double beta1, double beta2, double weight_decay, double eps,
                bool amsgrad, bool maximize) {
  adam(false, plan, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale, found_inf, lr, beta1,
       beta2, weight_decay, eps, amsgrad, maximize);
}

void fused_adamw(const meta::ForeachPlan& plan, const TensorBaseList& self, const TensorBaseList& grads,
                 const TensorBaseList& exp_avgs, const TensorBaseList& exp_avg_sqs,
                 const TensorBaseList& max_exp_avg_sqs, const TensorBaseList& state_steps, const TensorBase& grad_scale,
                 const TensorBase& found_inf, double lr, double beta1, double beta2, double weight_decay, double eps,
                 bool amsgrad, bool maximize) {
  adam(true, plan, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale, found_inf, lr, beta1,
       beta2, weight_decay, eps, amsgrad, maximize);
}

void fused_sgd(const meta::ForeachPlan& plan, const TensorBaseList& self, const TensorBaseList& grads,
               const TensorBaseList& momentum_buffer_list, const TensorBase& grad_scale, const TensorBase& found_inf,
               double weight_decay, double momentum, double lr, double dampening, bool nesterov, bool maximize,
               bool is_first_step) {
  const char* op = "_fused_sgd_";
  if (plan.length == 0) return;
  detail::check_device(plan.device.index, op);
  DeviceGuard guard(plan.device.index);
  cudaStream_t stream = detail::current_cuda_stream(plan.device.index);
  const bool with_momentum = momentum != 0;
  std::vector<std::unique_ptr<DenseGroup>> groups;
  for (int64_t i = 0; i < plan.length; ++i)
    groups.push_back(std::make_unique<DenseGroup>(
        op,
        std::array<TensorBase, 5>{self[i], grads[i], with_momentum ? momentum_buffer_list[i] : TensorBase(),
                                  TensorBase(), TensorBase()},
        std::array<bool, 5>{true, grad_scale.defined(), true, false, false}));
  by_dtype(groups, self, nullptr, [&](DType dtype, const std::vector<DenseGroup*>& of_dtype, const auto& steps) {
    visit_dtype(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_floating(dtype_of<T>)) {
        using M = math_t<T>;
        const fused_optim::SgdStep<M> s{M(lr),    M(weight_decay), M(momentum),  M(dampening),
                                        nesterov, maximize,        is_first_step};
        for_each_launch<3>(of_dtype, steps, [&](const Table<3>& table, int blocks) {
          sgd_kernel<T><<<blocks, kThreads, 0, stream>>>(table, s, device_scalar(grad_scale), device_scalar(found_inf));
          KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
        });
      }
    });
  });
  for (auto& g : groups) g->finish();
}

}  // namespace kiln::cuda
