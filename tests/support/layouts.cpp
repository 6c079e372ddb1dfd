#include "layouts.h"
#include "kiln/core.h"
#include "kiln/gen/api/stack.h"

namespace kiln::testing {

const std::vector<Layout>& input_layouts() {
  static const std::vector<Layout> layouts = {
      {"every other element of a wider tensor",
       [](const Tensor& t) {
         return t.dim() >= 1 && t.numel() > 1 ? stack({t, t}, -1).select(-1, 0) : Tensor();
       }},
      {"a transposed copy",
       [](const Tensor& t) {
         return t.dim() >= 2 && t.numel() > 1 ? t.transpose(-1, -2).contiguous().transpose(-1, -2) : Tensor();
       }},
      {"its first row expanded",
       [](const Tensor& t) { return t.dim() >= 1 && t.size(0) > 1 ? t.narrow(0, 0, 1).expand(t.sizes()) : Tensor(); },
       false},
  };
  return layouts;
}

namespace {
// uniform_(Tensor(a!) self, ...): the op writes into its first argument.
bool writes_self(const OpInfo& op) { return op.signature.find("Tensor(a!) self") != std::string::npos; }
}  // namespace

bool lay_out(const OpInfo& op, const std::map<std::string, Value>& args, const Layout& layout,
             std::map<std::string, Value>& laid, std::map<std::string, Value>& dense) {
  laid = args;
  dense = args;
  bool any = false;
  for (auto& [name, v] : laid) {
    // each call writes its own copy: an in-place family's arguments, and a Tensor(a!)? the op
    // updates (batch_norm's running statistics), which no expanded layout may alias
    const ArgInfo* info = op.arg(name);
    const bool written = op.writes_arg(name) || (info && info->mutable_ && name != op.args[0].name);
    if (v.kind() == Value::Kind::TensorList) {  // every element laid out so (ops over lists: meta: foreach)
      TensorList each, contiguous;
      for (const Tensor& e : v.to_tensor_list()) {
        if (!e.defined()) {  // a None entry of a Tensor?[]
          each.push_back(e);
          contiguous.push_back(e);
          continue;
        }
        Tensor t = layout.writable || !written ? layout.make(e) : Tensor();
        any = any || t.defined();
        each.push_back(t.defined() ? t : written ? e.clone() : e);
        contiguous.push_back(t.defined() || written ? each.back().contiguous().clone() : e);
      }
      v = Value(std::move(each));
      dense[name] = Value(std::move(contiguous));
      continue;
    }
    if (!v.is_tensor()) continue;
    if (!layout.writable && ((writes_self(op) && name == op.args[0].name) || written)) {
      if (written) v = Value(v.to_tensor().clone()), dense[name] = Value(v.to_tensor().clone());
      continue;
    }
    Tensor t = layout.make(v.to_tensor());
    if (!t.defined()) {
      if (written) v = Value(v.to_tensor().clone()), dense[name] = Value(v.to_tensor().clone());
      continue;
    }
    v = Value(t);
    dense[name] = Value(t.contiguous());  // a copy: t is not contiguous
    any = true;
  }
  return any;
}

}  // namespace kiln::testing
