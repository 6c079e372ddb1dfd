// The indexing ops' meta steps (see kiln/meta/indexing.h).
#include "kiln/meta/indexing.h"

namespace kiln::meta {
namespace {

// gather/scatter treat a 0-d tensor as 1-d of one element, as PyTorch does.
int64_t dims_of(const TensorBase& t) { return t.dim() == 0 ? 1 : t.dim(); }
int64_t size_of(const TensorBase& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); }

void check_long(const char* op, const TensorBase& index, const char* what) {
  KILN_CHECK(index.dtype() == DType::Int64, DTypeError, op, "index", what, " expected an int64 index, got ",
             dtype_name(index.dtype()));
}

void check_same_dtype(const char* op, const char* arg, const TensorBase& self, const TensorBase& other) {
  KILN_CHECK(self.dtype() == other.dtype(), DTypeError, op, arg, "expected ", arg, " of self's dtype ",
             dtype_name(self.dtype()), ", got ", dtype_name(other.dtype()));
}

// index's extent may not pass self's apart from `dim` (nor src's anywhere, for scatter).
void check_gather_shape(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                        const TensorBase* src) {
  KILN_CHECK(dims_of(index) == dims_of(self), ShapeError, op, "index",
             "Index tensor must have the same number of dimensions as input tensor (got ", index.dim(), " and ",
             self.dim(), ")");
  if (src)
    KILN_CHECK(dims_of(*src) == dims_of(self), ShapeError, op, "src",
               "Index tensor must have the same number of dimensions as src tensor (got ", index.dim(), " and ",
               src->dim(), ")");
  if (index.numel() == 0) return;  // nothing is read or written
  for (int64_t d = 0; d < dims_of(self); ++d) {
    KILN_CHECK(d == dim || size_of(index, d) <= size_of(self, d), ShapeError, op, "index", "expected index ",
               shape_str(index.sizes()), " to be no larger than self ", shape_str(self.sizes()),
               " apart from dimension ", dim);
    if (src)
      KILN_CHECK(size_of(index, d) <= size_of(*src, d), ShapeError, op, "src", "expected index ",
                 shape_str(index.sizes()), " to be no larger than src ", shape_str(src->sizes()));
  }
}

ScatterGatherPlan scatter_plan(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                               const TensorBase* src) {
  ScatterGatherPlan plan;
  plan.dim = wrap_dim(dim, dims_of(self), op, "dim");
  check_long(op, index, op);
  if (src) check_same_dtype(op, "src", self, *src);
  check_gather_shape(op, self, plan.dim, index, src);
  plan.sizes = self.sizes();
  plan.dtype = self.dtype();
  return plan;
}

ScatterReduce parse_reduce(const char* op, std::string_view reduce, bool two) {
  if (two) {
    if (reduce == "sum") return ScatterReduce::Sum;
    if (reduce == "prod") return ScatterReduce::Prod;
    if (reduce == "mean") return ScatterReduce::Mean;
    if (reduce == "amax") return ScatterReduce::Amax;
    if (reduce == "amin") return ScatterReduce::Amin;
    KILN_FAIL(ValueError, op, "reduce", "reduce argument must be either sum, prod, mean, amax or amin, got '", reduce,
              "'");
  }
  if (reduce == "add") return ScatterReduce::Sum;
  if (reduce == "multiply") return ScatterReduce::Prod;
  KILN_FAIL(ValueError, op, "reduce", "reduce argument must be either add or multiply, got '", reduce, "'");
}

// index_*: a vector (or a scalar) of indices along dim.
IndexPlan index_plan(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index, bool int32_too) {
  IndexPlan plan;
  plan.dim = wrap_dim(dim, dims_of(self), op, "dim");
  if (self.dim() == 0) plan.dim = 0;
  KILN_CHECK(index.dim() <= 1, ShapeError, op, "index", "Index is supposed to be a vector, got ", index.dim(), " dims");
  KILN_CHECK(index.dtype() == DType::Int64 || (int32_too && index.dtype() == DType::Int32), DTypeError, op, "index",
             "expected an ", int32_too ? "int32 or int64" : "int64", " index, got ", dtype_name(index.dtype()));
  plan.split = split_at_dim(self.sizes(), plan.dim);
  plan.n = index.numel();
  plan.sizes = self.sizes();
  plan.dtype = self.dtype();
  return plan;
}

// index_add/index_copy's source: self's shape with index.numel() at dim.
void check_source(const char* op, const IndexPlan& plan, const TensorBase& self, const TensorBase& source) {
  check_same_dtype(op, "source", self, source);
  KILN_CHECK(dims_of(source) == dims_of(self), ShapeError, op, "source", "expected source with ", self.dim(),
             " dims as self, got ", shape_str(source.sizes()));
  for (int64_t d = 0; d < dims_of(self); ++d) {
    if (d == plan.dim)
      KILN_CHECK(size_of(source, d) == plan.n, ShapeError, op, "source", "Number of indices (", plan.n,
                 ") should be equal to source.size(dim) (", size_of(source, d), "), for dim: ", plan.dim);
    else
      KILN_CHECK(size_of(source, d) == size_of(self, d), ShapeError, op, "source",
                 "Source/destination tensor must have same slice shapes: source ", shape_str(source.sizes()), ", self ",
                 shape_str(self.sizes()), ", dim ", plan.dim);
  }
}

}  // namespace

ScatterGatherPlan gather(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                         bool /*sparse_grad: kiln's gradient is dense*/) {
  ScatterGatherPlan plan;
  plan.dim = wrap_dim(dim, dims_of(self), op, "dim");
  check_long(op, index, op);
  check_gather_shape(op, self, plan.dim, index, nullptr);
  plan.sizes = index.sizes();
  plan.dtype = self.dtype();
  return plan;
}

ScatterGatherPlan scatter(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                          const TensorBase& src) {
  return scatter_plan(op, self, dim, index, &src);
}

ScatterGatherPlan scatter(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                          const Scalar& /*value*/) {
  return scatter_plan(op, self, dim, index, nullptr);
}

ScatterGatherPlan scatter(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                          const TensorBase& src, std::string_view reduce) {
  ScatterGatherPlan plan = scatter_plan(op, self, dim, index, &src);
  plan.reduce = parse_reduce(op, reduce, false);
  return plan;
}

ScatterGatherPlan scatter(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                          const Scalar& /*value*/, std::string_view reduce) {
  ScatterGatherPlan plan = scatter_plan(op, self, dim, index, nullptr);
  plan.reduce = parse_reduce(op, reduce, false);
  return plan;
}

ScatterGatherPlan scatter_add(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                              const TensorBase& src) {
  ScatterGatherPlan plan = scatter_plan(op, self, dim, index, &src);
  plan.reduce = ScatterReduce::Sum;
  return plan;
}

ScatterGatherPlan scatter_reduce(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                                 const TensorBase& src, std::string_view reduce, bool include_self) {
  ScatterGatherPlan plan = scatter_plan(op, self, dim, index, &src);
  plan.reduce = parse_reduce(op, reduce, true);
  plan.include_self = include_self;
  const bool ordered = plan.reduce == ScatterReduce::Amax || plan.reduce == ScatterReduce::Amin;
  KILN_CHECK(!(ordered && is_complex(self.dtype())), DTypeError, op, "reduce", "'", reduce,
             "' is not defined for complex dtypes, got ", dtype_name(self.dtype()));
  KILN_CHECK(!(plan.reduce == ScatterReduce::Mean && self.dtype() == DType::Bool), DTypeError, op, "reduce",
             "'mean' is not defined for bool");
  return plan;
}

IndexPlan index_select(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index) {
  IndexPlan plan = index_plan(op, self, dim, index, /*int32_too=*/true);
  if (self.dim() > 0) plan.sizes[size_t(plan.dim)] = plan.n;
  else KILN_CHECK(plan.n == 1, IndexError, op, "index", "a 0-d self takes exactly one index, got ", plan.n);
  return plan;
}

IndexPlan index_add(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                    const TensorBase& source, const Scalar& /*alpha*/) {
  IndexPlan plan = index_plan(op, self, dim, index, /*int32_too=*/true);
  check_source(op, plan, self, source);
  return plan;
}

IndexPlan index_copy(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                     const TensorBase& source) {
  IndexPlan plan = index_plan(op, self, dim, index, /*int32_too=*/false);
  check_source(op, plan, self, source);
  return plan;
}

IndexPlan index_fill(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                     const Scalar& /*value*/) {
  return index_plan(op, self, dim, index, /*int32_too=*/false);
}

IndexPlan index_fill(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                     const TensorBase& value) {
  KILN_CHECK(value.dim() == 0, ShapeError, op, "value", "index_fill_ only supports a 0-dimensional value tensor, got ",
             value.dim(), " dims");
  return index_plan(op, self, dim, index, /*int32_too=*/false);
}

IndexPlan take(const char* op, const TensorBase& self, const TensorBase& index) {
  check_long(op, index, op);
  KILN_CHECK(index.numel() == 0 || self.numel() > 0, IndexError, op, "index", "cannot take from an empty tensor");
  IndexPlan plan;
  plan.split.size = self.numel();
  plan.n = index.numel();
  plan.sizes = index.sizes();
  plan.dtype = self.dtype();
  return plan;
}

IndexPlan put(const char* op, const TensorBase& self, const TensorBase& index, const TensorBase& source,
              bool /*accumulate*/) {
  check_long(op, index, op);
  check_same_dtype(op, "source", self, source);
  KILN_CHECK(source.numel() == index.numel(), ShapeError, op, "source",
             "expected source and index to have the same number of elements, got source.numel() = ", source.numel(),
             ", index.numel() = ", index.numel());
  KILN_CHECK(index.numel() == 0 || self.numel() > 0, IndexError, op, "index", "cannot put into an empty tensor");
  IndexPlan plan;
  plan.split.size = self.numel();
  plan.n = index.numel();
  plan.sizes = self.sizes();
  plan.dtype = self.dtype();
  return plan;
}

}  // namespace kiln::meta
