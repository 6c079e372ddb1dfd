// PointwiseCall -> ElementwiseArgs (elementwise_launch.h).
#include "elementwise_launch.h"
#include "kiln/cuda/context.h"

namespace kiln::cuda {
namespace {

const char* op_name(const PointwiseCall& call) { return call.spec ? call.spec->op : "pointwise"; }

int checked_device(const PointwiseCall& call) {
  const int index = call.out.device().index;
  detail::check_device(index, op_name(call));
  return index;
}

}  // namespace

ElementwiseLaunch::ElementwiseLaunch(const PointwiseCall& call) : guard_(checked_device(call)) {
  const int index = call.out.device().index;
  args_.op = op_name(call);
  args_.compute_dtype = call.compute_dtype;
  for (int k = 0; k < kMaxPointwiseScalars; ++k) {
    args_.scalars[k] = call.scalars[k];
    args_.scalar_given[k] = call.scalar_given[k];
  }
  args_.choices[0] = call.choices[0];
  args_.choices[1] = call.choices[1];
  const TensorBase* operands[1 + kMaxPointwiseInputs];
  operands[0] = &call.out;
  for (int k = 0; k < call.num_inputs; ++k) operands[k + 1] = &call.input(k);
  args_.geometry = make_geometry(operands, 1 + call.num_inputs);
  args_.where = call.out.device();
  args_.stream = detail::current_cuda_stream(index);
  args_.sms = detail::sm_count(index);
}

}  // namespace kiln::cuda
