// The matrix products' meta steps (see kiln/meta/matmul.h).
#include "kiln/meta/matmul.h"

namespace kiln::meta {
namespace {

void check_matrix(const TensorBase& t, const char* op, const char* arg, const char* name) {
  KILN_CHECK(t.dim() == 2, ShapeError, op, arg, name, " must be a matrix, got ", t.dim(), "-D tensor");
}

void check_same_dtype(const TensorBase& a, const TensorBase& b, const char* op, const char* arg, const char* a_name,
                      const char* b_name) {
  KILN_CHECK(a.dtype() == b.dtype(), DTypeError, op, arg, "expected ", a_name, " and ", b_name,
             " to have the same dtype, but got: ", dtype_name(a.dtype()), " != ", dtype_name(b.dtype()));
}

void check_scalar_fits(const Scalar& s, DType d, const char* op, const char* arg) {
  KILN_CHECK(!s.is_complex() || is_complex(d), ValueError, op, arg, "complex ", arg, " ", s.str(),
             " cannot be converted to ", dtype_name(d));
}

void check_multipliable(const TensorBase& mat1, const TensorBase& mat2, const char* op) {
  KILN_CHECK(mat1.size(1) == mat2.size(0), ShapeError, op, "mat2", "mat1 and mat2 shapes cannot be multiplied (",
             mat1.size(0), "x", mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
}

}  // namespace

MatmulPlan mm(const char* op, const TensorBase& self, const TensorBase& mat2) {
  check_matrix(self, op, "self", "self");
  check_matrix(mat2, op, "mat2", "mat2");
  check_same_dtype(self, mat2, op, "mat2", "mat1", "mat2");
  check_multipliable(self, mat2, op);
  return {{self.size(0), mat2.size(1)}, self.dtype()};
}

MatmulPlan addmm(const char* op, const TensorBase& self, const TensorBase& mat1, const TensorBase& mat2,
                 const Scalar& beta, const Scalar& alpha) {
  check_matrix(mat1, op, "mat1", "mat1");
  check_matrix(mat2, op, "mat2", "mat2");
  check_same_dtype(mat1, mat2, op, "mat2", "mat1", "mat2");
  check_same_dtype(self, mat2, op, "self", "self", "mat2");
  check_multipliable(mat1, mat2, op);
  check_scalar_fits(alpha, self.dtype(), op, "alpha");
  check_scalar_fits(beta, self.dtype(), op, "beta");
  const int64_t n = mat1.size(0), m = mat2.size(1);
  const int64_t target[2] = {n, m};
  KILN_CHECK(self.dim() <= 2, ShapeError, op, "self", "the number of sizes provided (2) must be greater or equal ",
             "to the number of dimensions in the tensor (", self.dim(), ")");
  for (int64_t i = 0; i < self.dim(); ++i) {
    const int64_t d = 2 - self.dim() + i, have = self.size(i);
    KILN_CHECK(have == 1 || have == target[d], ShapeError, op, "self", "The expanded size of the tensor (", target[d],
               ") must match the existing size (", have, ") at non-singleton dimension ", d, ".  Target sizes: [", n,
               ", ", m, "].  TensorBase sizes: ", shape_str(self.sizes()));
  }
  return {{n, m}, self.dtype()};
}

MatmulPlan bmm(const char* op, const TensorBase& self, const TensorBase& mat2) {
  KILN_CHECK(self.dim() == 3, ShapeError, op, "self", "batch1 must be a 3D tensor, got ", self.dim(), "-D");
  KILN_CHECK(mat2.dim() == 3, ShapeError, op, "mat2", "batch2 must be a 3D tensor, got ", mat2.dim(), "-D");
  check_same_dtype(self, mat2, op, "mat2", "batch1", "batch2");
  const int64_t bs = self.size(0), k = self.size(2);
  KILN_CHECK(mat2.size(0) == bs && mat2.size(1) == k, ShapeError, op, "mat2",
             "Expected size for first two dimensions of batch2 tensor to be: [", bs, ", ", k, "] but got: [",
             mat2.size(0), ", ", mat2.size(1), "].");
  return {{bs, self.size(1), mat2.size(2)}, self.dtype()};
}

bool is_zero(const Scalar& s) { return s.to<complex<double>>() == complex<double>(0.0, 0.0); }

}  // namespace kiln::meta
