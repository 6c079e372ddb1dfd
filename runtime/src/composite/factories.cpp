// The allocating factories (ops/factories.yaml): empty and empty_strided allocate, the fills
// run fill_ on the result's device, *_like copy self's sizes and, unless given, its dtype,
// device and (for dense inputs) strides. The generated entry points check the dtype and apply
// requires_grad to the finished result.
#include <algorithm>
#include <cstring>
#include <numeric>
#include "core/allocator_registry.h"
#include "core/pooled.h"
#include "factory_options.h"
#include "kiln/op_support.h"
#include "kiln/gen/composite.h"

namespace kiln::composite {
namespace {

// Elements spanned by sizes and strides (1 + sum((size - 1) * stride), 0 when a size is 0);
// checks sizes and strides are non-negative and the byte count fits.
size_t span_bytes(IntArrayRef sizes, IntArrayRef strides, DType dtype, const char* op) {
  int64_t span = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    KILN_CHECK(sizes[i] >= 0, ValueError, op, "size", "negative dimension ", sizes[i], " in ", shape_str(sizes));
    KILN_CHECK(strides[i] >= 0, ValueError, op, "stride", "negative stride ", strides[i], " in ", shape_str(strides));
    if (sizes[i] == 0) span = 0;
  }
  for (size_t i = 0; i < sizes.size() && span; ++i) {
    int64_t extent;
    KILN_CHECK(!__builtin_mul_overflow(sizes[i] - 1, strides[i], &extent) && !__builtin_add_overflow(span, extent, &span),
               ValueError, op, "size", "too many elements in ", shape_str(sizes));
  }
  int64_t bytes;
  KILN_CHECK(!__builtin_mul_overflow(span, int64_t(element_size(dtype)), &bytes), ValueError, op, "size",
             "too many bytes for ", shape_str(sizes));
  return size_t(bytes);
}

Tensor allocate(IntArrayRef sizes, IntArrayRef strides, size_t nbytes, const TensorOptions& options, const char* op) {
  KILN_CHECK(options.layout == Layout::Strided, NotImplementedError, op, "layout", "no ", layout_name(options.layout),
             " tensors yet (only strided)");
  if (KILN_UNLIKELY(!options.device.is_cpu())) kiln::detail::allocator_for_op(options.device, op);
  return Tensor(kiln::detail::new_tensor_impl(kiln::detail::new_storage(nbytes, options.device), options.dtype, sizes,
                                              strides, 0));
}

// Strides of a dense tensor whose dims are laid out in memory in `order` (outermost first).
DimVector strides_in_order(IntArrayRef sizes, const std::vector<int64_t>& order) {
  DimVector strides(sizes.size());
  int64_t stride = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[size_t(*it)] = stride;
    stride *= std::max<int64_t>(sizes[size_t(*it)], 1);
  }
  return strides;
}

// Strides of `format` (sizes already checked by dense_nbytes).
DimVector format_strides(IntArrayRef sizes, MemoryFormat format, const char* op) {
  switch (format) {
    case MemoryFormat::Contiguous: return contiguous_strides(sizes);
    case MemoryFormat::ChannelsLast:
      KILN_CHECK(sizes.size() == 4, ValueError, op, "memory_format", "required rank 4 tensor to use channels_last format");
      return strides_in_order(sizes, {0, 2, 3, 1});
    case MemoryFormat::ChannelsLast3d:
      KILN_CHECK(sizes.size() == 5, ValueError, op, "memory_format",
                 "required rank 5 tensor to use channels_last_3d format");
      return strides_in_order(sizes, {0, 2, 3, 4, 1});
    case MemoryFormat::Preserve: break;
  }
  KILN_FAIL(ValueError, op, "memory_format", "preserve_format is not supported by ", op, " (it has no input to preserve)");
}

// preserve_format: self's strides when self is dense and non-overlapping (a permutation of a
// contiguous layout, as a transpose), else contiguous strides (PyTorch's rule).
DimVector preserved_strides(const Tensor& self) {
  std::vector<int64_t> order(size_t(self.dim()));
  std::iota(order.begin(), order.end(), 0);
  IntArrayRef st = self.strides();
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return st[size_t(a)] > st[size_t(b)]; });
  DimVector dense = strides_in_order(self.sizes(), order);
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.size(d) != 1 && dense[size_t(d)] != st[size_t(d)]) return contiguous_strides(self.sizes());
  return dense;
}

// A new dense tensor of `sizes` laid out in `format` (a dense storage holds exactly its
// elements in any dim order).
Tensor allocate_dense(IntArrayRef sizes, const TensorOptions& options, const char* op,
                      MemoryFormat format = MemoryFormat::Contiguous) {
  const size_t nbytes = kiln::detail::dense_nbytes(sizes, options.dtype, op);
  return allocate(sizes, format_strides(sizes, format, op), nbytes, options, op);
}

Tensor empty_like_as(const Tensor& self, const TensorOptions& options, std::optional<MemoryFormat> format,
                     const char* op) {
  const TensorOptions o = options_like(self, options);
  const MemoryFormat f = format.value_or(MemoryFormat::Preserve);
  if (f != MemoryFormat::Preserve) return allocate_dense(self.sizes(), o, op, f);
  return allocate(self.sizes(), preserved_strides(self), kiln::detail::dense_nbytes(self.sizes(), o.dtype, op), o, op);
}

Tensor zero_filled(Tensor t) {
  if (t.is_cpu()) {
    if (t.numel()) std::memset(t.data_ptr(), 0, t.storage()->nbytes());  // all-zero bits are 0 in every dtype
  } else {
    t.fill_(0);
  }
  return t;
}

}  // namespace

Tensor empty(IntArrayRef size, TensorOptions options, std::optional<MemoryFormat> memory_format) {
  return allocate_dense(size, options, "empty", memory_format.value_or(MemoryFormat::Contiguous));
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options) {
  KILN_CHECK(size.size() == stride.size(), ShapeError, "empty_strided", "stride", "got ", stride.size(),
             " strides for ", size.size(), " sizes");
  return allocate(size, stride, span_bytes(size, stride, options.dtype, "empty_strided"), options, "empty_strided");
}

Tensor zeros(IntArrayRef size, TensorOptions options) {
  return zero_filled(allocate_dense(size, options, "zeros"));
}

Tensor ones(IntArrayRef size, TensorOptions options) {
  return allocate_dense(size, options, "ones").fill_(1);
}

Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options) {
  if (!options.dtype_given) options.dtype = pointwise::scalar_dtype(fill_value);  // torch.full's rule
  return allocate_dense(size, options, "full").fill_(fill_value);
}

Tensor scalar_tensor(const Scalar& s, TensorOptions options) {
  return allocate_dense({}, options, "scalar_tensor").fill_(s);
}

Tensor empty_like(const Tensor& self, TensorOptions options, std::optional<MemoryFormat> memory_format) {
  return empty_like_as(self, options, memory_format, "empty_like");
}

Tensor zeros_like(const Tensor& self, TensorOptions options, std::optional<MemoryFormat> memory_format) {
  return zero_filled(empty_like_as(self, options, memory_format, "zeros_like"));
}

Tensor ones_like(const Tensor& self, TensorOptions options, std::optional<MemoryFormat> memory_format) {
  return empty_like_as(self, options, memory_format, "ones_like").fill_(1);
}

Tensor full_like(const Tensor& self, const Scalar& fill_value, TensorOptions options,
                 std::optional<MemoryFormat> memory_format) {
  return empty_like_as(self, options, memory_format, "full_like").fill_(fill_value);
}

}  // namespace kiln::composite
