// copy_ and fill_ with a CUDA tensor on either side: host<->device transfers, peer copies, and
// the strided/broadcast/dtype-converting device copy through the generic elementwise launcher
// (the same cast rules as the CPU: kiln/common/convert.h).
#include <cuda_runtime.h>
#include "elementwise.cuh"
#include "kiln/common/convert.h"
#include "device_copy.h"
#include "kiln/cuda/context.h"
#include "elementwise_launch.h"
#include "kiln/strided_views.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda::detail {
namespace {

const char* const kCopyArgs[] = {"src"};
const PointwiseSpec kCopySpec{"copy_", kCopyArgs, 1, Promotion::SelfDType};
const PointwiseSpec kFillSpec{"fill_", nullptr, 0, Promotion::SelfDType};

template <typename D>
struct CastTo {
  template <typename S>
  __host__ __device__ D operator()(S v) const { return kiln::detail::convert<D>(v); }
};

template <typename T>
struct Constant {
  T value;
  __host__ __device__ T operator()() const { return value; }
};

// dst[i] = convert(src[i]) on one device; src is broadcast to dst's shape.
void copy_on_device(const TensorBase& dst, const TensorBase& src) {
  PointwiseCall call;
  call.spec = &kCopySpec;
  call.out = dst;
  if (src.sizes().equals(dst.sizes())) call.borrow_input(0, src);
  else call.hold_input(0, views::expanded(src, dst.sizes()));
  call.num_inputs = 1;
  call.compute_dtype = dst.dtype();
  ElementwiseLaunch launch(call);
  visit_dtype(dst.dtype(), [&](auto d) {
    using D = decltype(d);
    visit_dtype(src.dtype(), [&](auto s) {
      using S = decltype(s);
      launch_elementwise<D, S>(launch.args(), CastTo<D>{});
    });
  });
}

bool dense_same_layout(const TensorBase& dst, const TensorBase& src) {
  return dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() && dst.numel() == src.numel();
}

size_t nbytes_of(const TensorBase& t) { return size_t(t.numel()) * t.element_size(); }

void finish(cudaStream_t stream, bool non_blocking, const char* op) {
  if (!non_blocking) KILN_CUDA_CHECK(cudaStreamSynchronize(stream), op, "non_blocking");
}

void host_to_device(const TensorBase& dst, const TensorBase& src, bool non_blocking) {
  const char* op = "copy_";
  DeviceGuard guard(dst.device().index);
  cudaStream_t stream = current_cuda_stream(dst.device().index);
  if (src.numel() == 1 && !is_pinned(src)) {
    // One value (a CPU scalar joining a CUDA op, x * 2): converted on the host, then written by
    // a fill kernel that carries it as a parameter. No transfer and no synchronize, so it is
    // asynchronous and can be captured into a CUDA graph (which keeps the value, as PyTorch does).
    if (src.dtype() == dst.dtype()) {
      fill_(dst, src.item());
      return;
    }
    TensorBase value = kiln::detail::empty_dense(src.sizes(), dst.dtype());
    value.copy_(src);
    fill_(dst, value.item());
    return;
  }
  if (dense_same_layout(dst, src)) {
    KILN_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), nbytes_of(dst), cudaMemcpyHostToDevice, stream),
                    op, "src");
    finish(stream, non_blocking, op);
    return;
  }
  // Convert, broadcast and densify on the host, send once, scatter on the device if dst is strided.
  TensorBase staged = kiln::detail::empty_dense(dst.sizes(), TensorOptions(dst.dtype()));
  staged.copy_(src);
  TensorBase target = dst.is_contiguous() ? dst : kiln::detail::empty_dense(dst.sizes(), dst.options());
  KILN_CUDA_CHECK(cudaMemcpyAsync(target.data_ptr(), staged.data_ptr(), nbytes_of(staged), cudaMemcpyHostToDevice,
                                  stream), op, "src");
  if (!target.is_same(dst)) copy_on_device(dst, target);
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream), op, "src");  // `staged` is freed on return
}

void device_to_host(const TensorBase& dst, const TensorBase& src, bool non_blocking) {
  const char* op = "copy_";
  DeviceGuard guard(src.device().index);
  cudaStream_t stream = current_cuda_stream(src.device().index);
  // Asynchronous only into page-locked memory; pageable destinations need the data now.
  const bool async = non_blocking && is_pinned(dst);
  if (dense_same_layout(dst, src)) {
    KILN_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), nbytes_of(dst), cudaMemcpyDeviceToHost, stream),
                    op, "src");
    finish(stream, async, op);
    return;
  }
  TensorBase dense = src;
  if (!src.is_contiguous()) {
    dense = kiln::detail::empty_dense(src.sizes(), src.options());
    copy_on_device(dense, src);
  }
  TensorBase landed = kiln::detail::empty_dense(src.sizes(), TensorOptions(src.dtype()));
  KILN_CUDA_CHECK(cudaMemcpyAsync(landed.data_ptr(), dense.data_ptr(), nbytes_of(dense), cudaMemcpyDeviceToHost,
                                  stream), op, "src");
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream), op, "src");
  dst.copy_(landed);  // host-side broadcast, cast and strides
}

void device_to_device(const TensorBase& dst, const TensorBase& src) {
  const int dst_dev = dst.device().index, src_dev = src.device().index;
  if (dst_dev == src_dev) {
    DeviceGuard guard(dst_dev);
    if (dst.storage() == src.storage() && !dst.is_same(src)) {  // overlapping views: read all first
      TensorBase tmp = kiln::detail::empty_dense(src.sizes(), src.options());
      copy_on_device(tmp, src);
      copy_on_device(dst, tmp);
    } else {
      copy_on_device(dst, src);
    }
    return;
  }
  // Across devices: densify on the source, one peer copy, then the local copy does the rest.
  TensorBase dense = src;
  {
    DeviceGuard guard(src_dev);
    if (!src.is_contiguous()) {
      dense = kiln::detail::empty_dense(src.sizes(), src.options());
      copy_on_device(dense, src);
    }
    KILN_CUDA_CHECK(cudaStreamSynchronize(current_cuda_stream(src_dev)), "copy_", "src");
  }
  DeviceGuard guard(dst_dev);
  TensorBase here = kiln::detail::empty_dense(src.sizes(), TensorOptions(src.dtype(), dst.device()));
  KILN_CUDA_CHECK(cudaMemcpyPeerAsync(here.data_ptr(), dst_dev, dense.data_ptr(), src_dev, nbytes_of(dense),
                                      current_cuda_stream(dst_dev)), "copy_", "src");
  copy_on_device(dst, here);
}

}  // namespace

void copy_(const TensorBase& dst, const TensorBase& src, bool non_blocking) {
  if (dst.is_cuda() && src.is_cuda()) device_to_device(dst, src);
  else if (dst.is_cuda()) host_to_device(dst, src, non_blocking);
  else device_to_host(dst, src, non_blocking);
}

void fill_(const TensorBase& dst, const Scalar& value) {
  PointwiseCall call;
  call.spec = &kFillSpec;
  call.out = dst;
  call.compute_dtype = dst.dtype();
  ElementwiseLaunch launch(call);
  visit_dtype(dst.dtype(), [&](auto zero) {
    using T = decltype(zero);
    launch_elementwise<T>(launch.args(), Constant<T>{value.to<T>()});
  });
}

}  // namespace kiln::cuda::detail
