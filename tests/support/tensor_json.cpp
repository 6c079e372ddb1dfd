#include "tensor_json.h"
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace kiln::testing {
using json = nlohmann::json;

Tensor host_tensor(IntArrayRef shape, DType dtype, const std::vector<double>& re, const std::vector<double>& im) {
  size_t n = size_t(numel_of(shape));
  if (re.size() != n) throw std::runtime_error("host_tensor: " + std::to_string(re.size()) + " values for shape " + shape_str(shape));
  std::vector<unsigned char> bytes(n * element_size(dtype) + 1);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = reinterpret_cast<T*>(bytes.data());
    for (size_t i = 0; i < n; ++i) {
      if constexpr (is_complex_v<T>) {
        using V = typename T::value_type;
        p[i] = T(V(re[i]), V(im.empty() ? 0.0 : im[i]));
      } else if constexpr (std::is_same_v<T, bool>) {
        p[i] = re[i] != 0;
      } else if constexpr (std::is_integral_v<T>) {
        p[i] = T(int64_t(re[i]));
      } else {
        p[i] = T(re[i]);
      }
    }
  });
  return from_blob_copy(bytes.data(), shape, dtype);
}

namespace {
double number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::runtime_error("reference value '" + s + "' is not a number");
  }
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  return v.get<double>();
}

DType dtype_named(const json& t) {
  auto d = dtype_from_name(t.at("dtype").get<std::string>());
  if (!d) throw std::runtime_error("unknown dtype in reference: " + t.at("dtype").dump());
  return *d;
}

bool close(double a, double e, Tolerance tol) {
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
  if (std::isinf(a) || std::isinf(e)) return a == e;
  return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
}

std::string fmt(double v) {
  std::ostringstream ss;
  ss.precision(17);
  ss << v;
  return ss.str();
}
}  // namespace

Tensor tensor_from_json(const json& t, Device device) {
  DType dtype = dtype_named(t);
  std::vector<int64_t> shape = t.at("shape").get<std::vector<int64_t>>();
  std::vector<double> re, im;
  for (const json& v : t.at("data")) {
    if (v.is_array()) {
      re.push_back(number(v.at(0)));
      im.push_back(number(v.at(1)));
    } else {
      re.push_back(number(v));
    }
  }
  Tensor out = host_tensor(shape, dtype, re, im);
  return device.is_cpu() ? out : out.to(device);
}

namespace {
json stored_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
}  // namespace

json tensor_to_json(const Tensor& t) {
  json data = json::array();
  if (is_complex(t.dtype())) {
    for (const complex<double>& z : t.to_vector<complex<double>>()) data.push_back({stored_number(z.re), stored_number(z.im)});
  } else if (is_floating(t.dtype())) {
    for (double v : t.to_vector<double>()) data.push_back(stored_number(v));
  } else {
    for (int64_t v : t.to_vector<int64_t>()) data.push_back(v);
  }
  return {{"dtype", dtype_name(t.dtype())}, {"shape", t.sizes().vec()}, {"data", std::move(data)}};
}

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::Float16: return {1e-3, 1e-2};
    case DType::BFloat16: return {1e-2, 1e-2};
    case DType::Float32: case DType::Complex64: return {1e-5, 1e-5};
    case DType::Float64: case DType::Complex128: return {1e-10, 1e-10};
    default: return {0, 0};  // integers and bool: exact
  }
}

std::string compare_metadata_with_json(const Tensor& actual, const json& expected) {
  DType want = dtype_named(expected);
  if (actual.dtype() != want)
    return std::string("dtype ") + dtype_name(actual.dtype()) + ", expected " + dtype_name(want);
  std::vector<int64_t> shape = expected.at("shape").get<std::vector<int64_t>>();
  if (!actual.sizes().equals(shape))
    return "shape " + actual.shape_str() + ", expected " + shape_str(shape);
  return "";
}

std::string compare_with_json(const Tensor& actual, const json& expected) {
  std::string metadata = compare_metadata_with_json(actual, expected);
  if (!metadata.empty()) return metadata;
  DType want = dtype_named(expected);
  const json& data = expected.at("data");
  if (int64_t(data.size()) != actual.numel()) return "reference holds " + std::to_string(data.size()) + " values";
  Tolerance tol = tolerance_for(want);
  if (is_complex(want)) {
    auto got = actual.to_vector<complex<double>>();
    for (size_t i = 0; i < got.size(); ++i) {
      double er = number(data[i].at(0)), ei = number(data[i].at(1));
      if (!close(got[i].re, er, tol) || !close(got[i].im, ei, tol))
        return "element " + std::to_string(i) + ": " + fmt(got[i].re) + (got[i].im < 0 ? "" : "+") + fmt(got[i].im) +
               "j, expected " + fmt(er) + (ei < 0 ? "" : "+") + fmt(ei) + "j";
    }
  } else if (is_floating(want)) {
    auto got = actual.to_vector<double>();
    for (size_t i = 0; i < got.size(); ++i) {
      double e = number(data[i]);
      if (!close(got[i], e, tol))
        return "element " + std::to_string(i) + ": " + fmt(got[i]) + ", expected " + fmt(e) + " (rtol " + fmt(tol.rtol) +
               ", atol " + fmt(tol.atol) + ")";
    }
  } else {
    auto got = actual.to_vector<int64_t>();
    for (size_t i = 0; i < got.size(); ++i) {
      int64_t e = data[i].is_boolean() ? int64_t(data[i].get<bool>()) : data[i].get<int64_t>();
      if (got[i] != e) return "element " + std::to_string(i) + ": " + std::to_string(got[i]) + ", expected " + std::to_string(e);
    }
  }
  return "";
}

}  // namespace kiln::testing
