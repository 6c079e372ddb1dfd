// DType names and promotion, Scalar, Device and the error message format.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "kiln/device.h"
#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/scalar.h"

using namespace kiln;

namespace {
const DType kAll[kNumDTypes] = {kBool,    kUInt8,    kInt8,     kInt16,   kInt32,     kInt64,
                                kFloat16, kBFloat16, kFloat32,  kFloat64, kComplex64, kComplex128};
}

TEST_CASE("dtype: names, aliases and sizes") {
  CHECK(std::string(dtype_name(kBFloat16)) == "bfloat16");
  CHECK(std::string(dtype_name(kComplex128)) == "complex128");
  for (DType t : kAll) CHECK(dtype_from_name(dtype_name(t)) == t);
  CHECK(dtype_from_name("float") == kFloat32);
  CHECK(dtype_from_name("double") == kFloat64);
  CHECK(dtype_from_name("half") == kFloat16);
  CHECK(dtype_from_name("long") == kInt64);
  CHECK(dtype_from_name("int") == kInt32);
  CHECK(dtype_from_name("short") == kInt16);
  CHECK(dtype_from_name("cfloat") == kComplex64);
  CHECK(dtype_from_name("cdouble") == kComplex128);
  CHECK(dtype_from_name("torch.float64") == kFloat64);
  CHECK_FALSE(dtype_from_name("float128").has_value());
  CHECK_FALSE(dtype_from_name("").has_value());
  CHECK(element_size(kBool) == 1);
  CHECK(element_size(kBFloat16) == 2);
  CHECK(element_size(kInt32) == 4);
  CHECK(element_size(kComplex64) == 8);
  CHECK(element_size(kComplex128) == 16);
}

TEST_CASE("dtype: promote_types matches torch.promote_types for every pair") {
  // torch 1.13: [[torch.promote_types(a, b) for b in dts] for a in dts]
  const DType expected[kNumDTypes][kNumDTypes] = {
      {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64, kComplex64, kComplex128},
      {kUInt8, kUInt8, kInt16, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64, kComplex64, kComplex128},
      {kInt8, kInt16, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64, kComplex64, kComplex128},
      {kInt16, kInt16, kInt16, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64, kComplex64, kComplex128},
      {kInt32, kInt32, kInt32, kInt32, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64, kComplex64, kComplex128},
      {kInt64, kInt64, kInt64, kInt64, kInt64, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64, kComplex64, kComplex128},
      {kFloat16, kFloat16, kFloat16, kFloat16, kFloat16, kFloat16, kFloat16, kFloat32, kFloat32, kFloat64, kComplex64,
       kComplex128},
      {kBFloat16, kBFloat16, kBFloat16, kBFloat16, kBFloat16, kBFloat16, kFloat32, kBFloat16, kFloat32, kFloat64,
       kComplex64, kComplex128},
      {kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat32, kFloat64, kComplex64,
       kComplex128},
      {kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kFloat64, kComplex128,
       kComplex128},
      {kComplex64, kComplex64, kComplex64, kComplex64, kComplex64, kComplex64, kComplex64, kComplex64, kComplex64,
       kComplex128, kComplex64, kComplex128},
      {kComplex128, kComplex128, kComplex128, kComplex128, kComplex128, kComplex128, kComplex128, kComplex128,
       kComplex128, kComplex128, kComplex128, kComplex128},
  };
  for (int i = 0; i < kNumDTypes; ++i)
    for (int j = 0; j < kNumDTypes; ++j) {
      CAPTURE(dtype_name(kAll[i]));
      CAPTURE(dtype_name(kAll[j]));
      CHECK(promote_types(kAll[i], kAll[j]) == expected[i][j]);
    }
}

TEST_CASE("dtype: can_cast matches torch.can_cast for every pair") {
  // torch 1.13: row = from, column = to
  const char* expected[kNumDTypes] = {"111111111111", "011111111111", "011111111111", "011111111111",
                                      "011111111111", "011111111111", "000000111111", "000000111111",
                                      "000000111111", "000000111111", "000000000011", "000000000011"};
  for (int i = 0; i < kNumDTypes; ++i)
    for (int j = 0; j < kNumDTypes; ++j) CHECK(can_cast(kAll[i], kAll[j]) == (expected[i][j] == '1'));
}

TEST_CASE("dtype: categories, complex and real counterparts, default float") {
  CHECK(is_integral(kBool, true));
  CHECK_FALSE(is_integral(kBool, false));
  CHECK(is_floating(kBFloat16));
  CHECK(is_inexact(kComplex64));
  CHECK_FALSE(is_inexact(kInt64));
  CHECK(to_complex(kFloat64) == kComplex128);
  CHECK(to_complex(kFloat16) == kComplex64);
  CHECK(to_real(kComplex64) == kFloat32);
  CHECK(to_real(kInt8) == kInt8);
  CHECK_THROWS_AS(to_complex(kInt32), DTypeError);

  CHECK(default_float_dtype() == kFloat32);
  set_default_float_dtype(kFloat64);
  CHECK(default_float_dtype() == kFloat64);
  set_default_float_dtype(kFloat32);
  CHECK_THROWS_AS(set_default_float_dtype(kInt64), DTypeError);
  CHECK(default_float_dtype() == kFloat32);
}

TEST_CASE("scalar: kind, dtype, str and equality") {
  CHECK(Scalar(true).dtype() == kBool);
  CHECK(Scalar(3).dtype() == kInt64);
  CHECK(Scalar(uint8_t(3)).dtype() == kInt64);
  CHECK(Scalar(2.5f).dtype() == kFloat64);
  CHECK(Scalar(complex<float>(1, 2)).dtype() == kComplex128);
  CHECK_FALSE(Scalar(true).is_integral());

  // Python's repr of the same numbers
  CHECK(Scalar(true).str() == "True");
  CHECK(Scalar(-42).str() == "-42");
  CHECK(Scalar(1.0).str() == "1.0");
  CHECK(Scalar(0.1).str() == "0.1");
  CHECK(Scalar(1e-5).str() == "1e-05");
  CHECK(Scalar(1e16).str() == "1e+16");
  CHECK(Scalar(1e15).str() == "1000000000000000.0");
  CHECK(Scalar(1.0 / 3).str() == "0.3333333333333333");
  CHECK(Scalar(-0.0).str() == "-0.0");
  CHECK(Scalar(2.5e20).str() == "2.5e+20");
  CHECK(Scalar(std::numeric_limits<double>::infinity()).str() == "inf");
  CHECK(Scalar(std::nan("")).str() == "nan");
  CHECK(Scalar(complex<double>(1, 2)).str() == "(1+2j)");
  CHECK(Scalar(complex<double>(0, 1)).str() == "1j");
  CHECK(Scalar(complex<double>(1.5, -0.25)).str() == "(1.5-0.25j)");
  CHECK(Scalar(complex<double>(-0.0, 1)).str() == "(-0+1j)");
  CHECK(Scalar(complex<double>(1e20, 1e-7)).str() == "(1e+20+1e-07j)");

  CHECK(Scalar(2) == Scalar(int64_t(2)));
  CHECK_FALSE(Scalar(2) == Scalar(2.0));  // the kind decides promotion, so it is part of the value
  CHECK(Scalar(2.5) == Scalar(2.5));
  CHECK_FALSE(Scalar(std::nan("")) == Scalar(std::nan("")));
  CHECK(Scalar(complex<double>(1, 2)) == Scalar(complex<float>(1, 2)));

  CHECK(Scalar(-1.7).to<int64_t>() == -1);
  CHECK(Scalar(complex<double>(3.5, 2)).to<double>() == 3.5);
  CHECK(Scalar(complex<double>(0, 2)).to<bool>());
}

TEST_CASE("device: parse and str") {
  CHECK(Device("cpu") == kCPU);
  CHECK(Device("cuda").is_cuda());
  CHECK(Device("cuda:1").index == 1);
  CHECK(Device("cuda:1").str() == "cuda:1");
  CHECK(Device("cuda").str() == "cuda:0");
  CHECK(kCPU.str() == "cpu");
  CHECK(std::string(device_type_name(DeviceType::CUDA)) == "cuda");
  // PyTorch's name for the out-of-tree slot parses whatever a backend renamed it to
  CHECK(Device("privateuseone:1") == Device(DeviceType::PrivateUse1, 1));
  CHECK(Device("privateuseone").is_privateuseone());
  CHECK_THROWS_AS(Device("gpu"), ValueError);
  CHECK_THROWS_AS(Device("cuda:"), ValueError);
  CHECK_THROWS_AS(Device("cuda:x"), ValueError);
  CHECK_THROWS_AS(Device("cpu:1"), ValueError);
}

TEST_CASE("error: message format names op and argument") {
  ShapeError e("add", "other", "expected [2, 3], got [4]");
  CHECK(std::string(e.what()) == "kiln::add: argument 'other': expected [2, 3], got [4]");
  CHECK(e.kind() == ErrorKind::Shape);
  CHECK(e.op() == "add");
  CHECK(e.arg() == "other");
  ValueError no_arg("item", "", "bad");
  CHECK(std::string(no_arg.what()) == "kiln::item: bad");
  CHECK(std::string(error_kind_name(ErrorKind::NotImplemented)) == "NotImplementedError");
  try {
    KILN_CHECK(1 + 1 == 3, IndexError, "select", "index", "index ", 5, " is out of bounds");
    FAIL("KILN_CHECK did not throw");
  } catch (const Error& err) {
    CHECK(std::string(err.what()) == "kiln::select: argument 'index': index 5 is out of bounds");
    CHECK(err.kind() == ErrorKind::Index);
  }
}
