// In-place ops on views under autograd, as PyTorch does it. A view remembers its root base and
// how to make the same view of any tensor shaped like the base (ViewInfo::replay). An in-place
// op on a view rebases the base's history onto a CopySlices node (the base's gradient, except
// the written region, goes to the base's old history; the region's goes through the op), and
// the view's own history is made again from the base. Every other view of that base notices the
// version change the next time autograd looks at it and remakes its history the same way.
#include "internal.h"
#include "kiln/gen/api/clone.h"

namespace kiln::autograd {

namespace {

// The base's backward after an in-place op `fn` on one of its views.
class CopySlices final : public Node {
 public:
  CopySlices(ViewReplay replay, NodeRef fn) : replay_(std::move(replay)), fn_(std::move(fn)) {}
  const char* name() const override { return "CopySlices"; }

  TensorBaseList apply(TensorBaseList&& grads) override {
    TensorBaseList out(next_edges.size());
    if (grads.empty() || !grads[0].defined()) return out;
    // Recorded under create_graph (clone, the view, fn's formulas, the copy back), so double
    // backward flows through this node too.
    Tensor result = kiln::clone(Tensor(grads[0]));
    Tensor region = replay_(result);
    TensorBaseList fn_grads = fn_->apply({kiln::clone(region)});
    if (!fn_grads.empty() && fn_grads[0].defined()) region.copy_(fn_grads[0]);
    else region.zero_();  // what the op wrote does not depend on the view's old values
    out[0] = result;
    for (size_t i = 1; i < out.size() && i < fn_grads.size(); ++i) out[i] = std::move(fn_grads[i]);
    return out;
  }
  void release_variables() override { fn_->release_variables(); }

 private:
  ViewReplay replay_;
  NodeRef fn_;
};

}  // namespace

void rebase_history(const TensorBase& self, const NodeRef& fn) {
  ViewInfo* view = self.impl()->view_info.get();
  if (!view) {
    set_history(self, fn);
    return;
  }
  KILN_CHECK(bool(view->replay), InternalError, "rebase_history", "self",
             "a view without a replay function reached rebase_history (check_inplace refuses it)");
  const TensorBase& base = view->base;
  auto copy = make_ref<CopySlices>(view->replay, fn);
  // Edge 0 is the base's history before the op (fn's edge 0, the view's old history, leads there
  // too); the op's other inputs keep their edges.
  copy->next_edges.push_back(gradient_edge(base));
  for (size_t i = 1; i < fn->next_edges.size(); ++i) copy->next_edges.push_back(fn->next_edges[i]);
  copy->output_meta.push_back({DimVector(base.sizes()), base.dtype(), base.device()});
  set_history(base, copy);
  view->version = self.version() - 1;  // stale: made again from the base now
  refresh_view_history(self);
}

void refresh_view_history(const TensorBase& t) {
  ViewInfo* view = t.impl()->view_info.get();
  if (!view || view->version == t.version()) return;
  view->version = t.version();
  if (!view->replay || !requires_grad(view->base)) return;  // nothing upstream to connect to
  Tensor fresh;
  {
    EnableGradGuard recording(true);
    fresh = view->replay(view->base);
  }
  AutogradMeta& meta = t.impl()->autograd_or_create();
  const AutogradMeta* fresh_meta = fresh.impl()->autograd();
  meta.grad_fn = fresh_meta ? fresh_meta->grad_fn : NodeRef();
  meta.output_nr = fresh_meta ? fresh_meta->output_nr : 0;
  if (meta.retains_grad && meta.grad_fn) detail::retain_output(meta.grad_fn.get(), meta.output_nr);
}

}  // namespace kiln::autograd
