#ifndef KILN_KERNELS_CUDA_ELEMENTWISE_LAUNCH_H_
#define KILN_KERNELS_CUDA_ELEMENTWISE_LAUNCH_H_
// The host side of a CUDA pointwise kernel: checks the output's device, keeps it current for
// as long as this object lives, and turns the PointwiseCall into the ElementwiseArgs the kernel
// files take (kernels/cuda/elementwise_args.h).
#include "elementwise_args.h"
#include "kiln/cuda_device.h"
#include "kiln/pointwise.h"

namespace kiln::cuda {

class ElementwiseLaunch {
 public:
  explicit ElementwiseLaunch(const PointwiseCall& call);
  const ElementwiseArgs& args() const { return args_; }

 private:
  DeviceGuard guard_;
  ElementwiseArgs args_;
};

}  // namespace kiln::cuda
#endif  // KILN_KERNELS_CUDA_ELEMENTWISE_LAUNCH_H_
