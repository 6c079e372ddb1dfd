// StorageImpl: owns (or adopts) one device buffer and returns it to where it came from.
#include "kiln/storage.h"

#include "core/allocator_registry.h"
#include "kiln/autograd/graph.h"  // InferenceMode
#include "kiln/cuda_device.h"

namespace kiln {

StorageImpl::StorageImpl(size_t nbytes, Device device)
    : data_(nullptr), nbytes_(nbytes), device_(device), inference_(InferenceMode::is_enabled()) {
  allocator_ = detail::allocator_for_op(device, "StorageImpl");
  if (device.is_cuda()) {  // the CUDA allocator serves the current device
    cuda::DeviceGuard guard(device.index);
    data_ = allocator_->allocate(nbytes);
  } else {
    data_ = allocator_->allocate(nbytes);
  }
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, void (*deleter)(void*, size_t))
    : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), inference_(InferenceMode::is_enabled()) {}

StorageImpl::~StorageImpl() {
  if (deleter_) deleter_(data_, nbytes_);
  else if (allocator_) allocator_->deallocate(data_, nbytes_);
}

}  // namespace kiln
