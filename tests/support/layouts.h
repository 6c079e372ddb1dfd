#ifndef KILN_TESTS_SUPPORT_LAYOUTS_H_
#define KILN_TESTS_SUPPORT_LAYOUTS_H_
// The same values in other layouts (a strided slice, a transpose, an expanded row): what
// check_variants and the backend sweep (tests/backend_sweep) feed an op besides dense inputs.
#include <functional>
#include <map>
#include <string>
#include <vector>
#include "op_catalog.h"

namespace kiln::testing {

struct Layout {
  const char* name;
  std::function<Tensor(const Tensor&)> make;  // undefined when the layout does not apply
  bool writable = true;                       // an expanded tensor cannot be written in place (as in PyTorch)
};
const std::vector<Layout>& input_layouts();

// The tensor arguments of `args` in `layout` (`laid`) and their contiguous copies (`dense`),
// which the op must treat alike. Arguments the op writes get a copy of their own in each map,
// and are left dense when the layout cannot be written. False when no argument takes it.
bool lay_out(const OpInfo& op, const std::map<std::string, Value>& args, const Layout& layout,
             std::map<std::string, Value>& laid, std::map<std::string, Value>& dense);

}  // namespace kiln::testing
#endif  // KILN_TESTS_SUPPORT_LAYOUTS_H_
