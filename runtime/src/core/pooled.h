#ifndef KILN_RUNTIME_SRC_CORE_POOLED_H_
#define KILN_RUNTIME_SRC_CORE_POOLED_H_
// TensorImpl and StorageImpl whose memory comes from per-thread pools (object_pool.h):
// the factories and views use these on the hot path; anything else may still `new` the bases.
#include "kiln/tensor.h"
#include "object_pool.h"

namespace kiln::detail {

class PooledTensorImpl final : public TensorImpl {
 public:
  using TensorImpl::TensorImpl;
  static void* operator new(size_t) { return ObjectPool<sizeof(PooledTensorImpl)>::allocate(); }
  static void operator delete(void* p) { ObjectPool<sizeof(PooledTensorImpl)>::deallocate(p); }
};

class PooledStorageImpl final : public StorageImpl {
 public:
  using StorageImpl::StorageImpl;
  static void* operator new(size_t) { return ObjectPool<sizeof(PooledStorageImpl)>::allocate(); }
  static void operator delete(void* p) { ObjectPool<sizeof(PooledStorageImpl)>::deallocate(p); }
};

inline Ref<TensorImpl> new_tensor_impl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides,
                                       int64_t offset) {
  return Ref<TensorImpl>(new PooledTensorImpl(std::move(storage), dtype, sizes, strides, offset), AdoptNew{});
}
inline Storage new_storage(size_t nbytes, Device device) {
  return Storage(new PooledStorageImpl(nbytes, device), AdoptNew{});
}

}  // namespace kiln::detail
#endif  // KILN_RUNTIME_SRC_CORE_POOLED_H_
