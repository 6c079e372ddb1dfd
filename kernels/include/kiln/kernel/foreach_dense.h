#ifndef KILN_KERNELS_INCLUDE_KILN_KERNEL_FOREACH_DENSE_H_
#define KILN_KERNELS_INCLUDE_KILN_KERNEL_FOREACH_DENSE_H_
// One parameter's tensors across the lists of a fused optimizer op (param, grad, state...), as
// dense runs in one element order, for the CPU and CUDA kernels alike (host code). The usual
// case costs nothing: every tensor fills its span with the parameter's strides (state made with
// zeros_like, gradients accumulated in the parameter's layout), and the kernel reads them in
// place. Any other layout runs on contiguous copies that are written back when the group ends,
// so an update never depends on how its operands are laid out.
#include <array>
#include <cstdint>
#include "kiln/common/foreach_index.h"
#include "kiln/tensor_base.h"

namespace kiln::foreach_dense {

inline constexpr int kMaxTensors = 5;

class DenseGroup {
 public:
  // tensors[k] may be undefined (a list the op's options leave unused); written[k]: copy it
  // back when it had to be copied.
  DenseGroup(const char* op, std::array<TensorBase, kMaxTensors> tensors, std::array<bool, kMaxTensors> written)
      : originals_(tensors), written_(written) {
    const TensorBase& first = tensors[0];
    numel_ = first.numel();
    foreach_index::StridedIndex ix;
    int64_t lowest = 0;
    bool aligned = foreach_index::make_index(int(first.dim()), first.sizes().data(), first.strides().data(), ix) &&
                   foreach_index::dense_span(ix, &lowest);
    for (const TensorBase& t : tensors)
      if (t.defined() && !t.strides().equals(first.strides())) aligned = false;
    copied_ = !aligned;
    for (int k = 0; k < kMaxTensors; ++k) {
      if (!tensors[k].defined()) continue;
      if (copied_) {
        work_[k] = kiln::detail::empty_dense(tensors[k].sizes(), tensors[k].dtype(), tensors[k].device(), op);
        work_[k].copy_(tensors[k]);
        ptrs_[k] = work_[k].data_ptr();
      } else {
        ptrs_[k] = static_cast<char*>(tensors[k].data_ptr()) + lowest * int64_t(tensors[k].element_size());
      }
    }
  }
  DenseGroup(const DenseGroup&) = delete;
  DenseGroup& operator=(const DenseGroup&) = delete;

  int64_t numel() const { return numel_; }
  // The first element of tensor k's dense run; null for an undefined one.
  template <typename T>
  T* data(int k) const {
    return static_cast<T*>(ptrs_[k]);
  }
  // Writes the copies back (queued on the device's stream for CUDA, after the update's kernel).
  void finish() {
    if (!copied_) return;
    for (int k = 0; k < kMaxTensors; ++k)
      if (written_[k] && work_[k].defined()) originals_[k].copy_(work_[k]);
    copied_ = false;
  }

 private:
  std::array<TensorBase, kMaxTensors> originals_, work_;
  std::array<bool, kMaxTensors> written_;
  std::array<void*, kMaxTensors> ptrs_{};
  int64_t numel_ = 0;
  bool copied_ = false;
};

}  // namespace kiln::foreach_dense
#endif  // KILN_KERNELS_INCLUDE_KILN_KERNEL_FOREACH_DENSE_H_
