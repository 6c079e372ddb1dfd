// The meta step of channel_shuffle (see kiln/meta/channel_shuffle.h).
#include "kiln/meta/channel_shuffle.h"

namespace kiln::meta {

ChannelShufflePlan channel_shuffle(const char* op, const TensorBase& self, int64_t groups) {
  KILN_CHECK(self.dim() > 2, ShapeError, op, "self", "channel_shuffle expects input with > 2 dims, but got input with sizes ",
             self.shape_str());
  KILN_CHECK(groups > 0, ValueError, op, "groups",
             "Number of groups to divide channels in must be positive. Value of groups: ", groups);
  const int64_t channels = self.size(1);
  KILN_CHECK(channels % groups == 0, ValueError, op, "groups", "Number of channels must be divisible by groups. Got ",
             channels, " channels and ", groups, " groups.");
  ChannelShufflePlan plan;
  plan.sizes = self.sizes();
  plan.dtype = self.dtype();
  plan.batch = self.size(0);
  plan.groups = groups;
  plan.per_group = channels / groups;
  for (int64_t d = 2; d < self.dim(); ++d) plan.inner *= self.size(d);
  return plan;
}

}  // namespace kiln::meta
