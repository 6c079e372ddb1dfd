// Tensor printing that reproduces PyTorch 1.13's `print(tensor)` (torch/_tensor_str.py) with the
// default print options: precision 4, threshold 1000, edgeitems 3, linewidth 80.
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include "kiln/autograd.h"
#include "kiln/tensor.h"
#include "kiln/gen/api/to.h"

namespace kiln {
namespace {

constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

// Python's "{:.Nf}" / "{:.Ne}" (glibc rounds the same way) with Python's spelling of inf/nan.
std::string py_format(double v, char conv, int precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[512];
  char fmt[8] = {'%', '.', char('0' + precision), conv, 0};
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// torch._tensor_str._Formatter: picks integer, fixed or scientific layout and one width.
class Formatter {
 public:
  // Non-floating values arrive already as strings ("12", "True").
  static Formatter for_strings(const std::vector<std::string>& values) {
    Formatter f;
    f.floating_ = false;
    for (const auto& s : values) f.max_width_ = std::max(f.max_width_, s.size());
    return f;
  }

  static Formatter for_floats(const std::vector<double>& values) {
    Formatter f;
    std::vector<double> nz;  // nonzero finite values
    for (double v : values)
      if (std::isfinite(v) && v != 0) nz.push_back(v);
    if (nz.empty()) return f;
    double mn = std::fabs(nz[0]), mx = mn;
    for (double v : nz) {
      mn = std::min(mn, std::fabs(v));
      mx = std::max(mx, std::fabs(v));
      if (v != std::ceil(v)) f.int_mode_ = false;
    }
    if (f.int_mode_) {
      if (mx / mn > 1000.0 || mx > 1.0e8) {
        f.sci_mode_ = true;
        for (double v : nz) f.widen(py_format(v, 'e', kPrecision).size());
      } else {
        for (double v : nz) f.widen(py_format(v, 'f', 0).size() + 1);
      }
    } else if (mx / mn > 1000.0 || mx > 1.0e8 || mn < 1.0e-4) {
      f.sci_mode_ = true;
      for (double v : nz) f.widen(py_format(v, 'e', kPrecision).size());
    } else {
      for (double v : nz) f.widen(py_format(v, 'f', kPrecision).size());
    }
    return f;
  }

  size_t width() const { return max_width_; }

  std::string format(double v) const {
    std::string s;
    if (sci_mode_) {
      s = py_format(v, 'e', kPrecision);
    } else if (int_mode_) {
      s = py_format(v, 'f', 0);
      if (std::isfinite(v)) s += ".";
    } else {
      s = py_format(v, 'f', kPrecision);
    }
    return pad_left(s, max_width_);
  }
  std::string format(const std::string& s) const { return pad_left(s, max_width_); }

 private:
  void widen(size_t w) { max_width_ = std::max(max_width_, w); }
  bool floating_ = true, int_mode_ = true, sci_mode_ = false;
  size_t max_width_ = 1;
};

// Reads elements of a CPU tensor by row-major index and formats them.
class Printer {
 public:
  explicit Printer(const TensorBase& t) : t_(t), summarize_(t.numel() > kThreshold) {
    DType d = t.dtype();
    complex_ = is_complex(d);
    floating_ = is_floating(d);
    // the formatter sees only what will be printed (get_summarized_data)
    std::vector<int64_t> shown;
    collect_shown(0, 0, shown);
    if (complex_) {
      std::vector<double> re, im;
      for (int64_t i : shown) {
        complex<double> c = read_complex(i);
        re.push_back(c.re);
        im.push_back(c.im);
      }
      f1_ = Formatter::for_floats(re);
      f2_ = Formatter::for_floats(im);
    } else if (floating_) {
      std::vector<double> v;
      for (int64_t i : shown) v.push_back(read_double(i));
      f1_ = Formatter::for_floats(v);
    } else {
      std::vector<std::string> v;
      for (int64_t i : shown) v.push_back(plain_str(i));
      f1_ = Formatter::for_strings(v);
    }
  }

  // _tensor_str_with_formatter over the sub-tensor at `dim` starting at row-major `base`.
  std::string str(int64_t dim, int64_t base, int indent) const {
    int64_t nd = t_.dim();
    if (nd == 0) return element(0);
    int64_t size = t_.sizes()[size_t(dim)];
    int64_t inner = row_size(dim);
    bool cut = summarize_ && size > 2 * kEdgeItems;
    if (dim == nd - 1) return vector_str(base, size, cut, indent);
    std::vector<std::string> slices;
    for (int64_t i = 0; i < size; ++i) {
      if (cut && i == kEdgeItems) {
        slices.push_back("...");
        i = size - kEdgeItems;
      }
      slices.push_back(str(dim + 1, base + i * inner, indent + 1));
    }
    std::string sep = "," + std::string(size_t(nd - dim - 1), '\n') + std::string(size_t(indent + 1), ' ');
    std::string out = "[";
    for (size_t i = 0; i < slices.size(); ++i) out += (i ? sep : "") + slices[i];
    return out + "]";
  }

 private:
  int64_t row_size(int64_t dim) const {
    int64_t n = 1;
    for (int64_t d = dim + 1; d < t_.dim(); ++d) n *= t_.sizes()[size_t(d)];
    return n;
  }

  void collect_shown(int64_t dim, int64_t base, std::vector<int64_t>& out) const {
    if (dim == t_.dim()) {
      out.push_back(base);
      return;
    }
    int64_t size = t_.sizes()[size_t(dim)], inner = row_size(dim);
    bool cut = summarize_ && size > 2 * kEdgeItems;
    for (int64_t i = 0; i < size; ++i) {
      if (cut && i == kEdgeItems) i = size - kEdgeItems;
      collect_shown(dim + 1, base + i * inner, out);
    }
  }

  const char* elem_ptr(int64_t flat) const {
    int64_t off = 0;
    for (int64_t d = t_.dim() - 1; d >= 0; --d) {
      int64_t s = t_.sizes()[size_t(d)];
      off += (flat % s) * t_.strides()[size_t(d)];
      flat /= s;
    }
    return static_cast<const char*>(t_.data_ptr()) + off * int64_t(t_.element_size());
  }
  double read_double(int64_t flat) const {
    return visit_dtype(t_.dtype(), [&](auto zero) -> double {
      using T = decltype(zero);
      if constexpr (is_complex_v<T>) return 0;
      else return double(static_cast<opmath_t<T>>(*reinterpret_cast<const T*>(elem_ptr(flat))));
    });
  }
  complex<double> read_complex(int64_t flat) const {
    if (t_.dtype() == DType::Complex64) return complex<double>(*reinterpret_cast<const complex<float>*>(elem_ptr(flat)));
    return *reinterpret_cast<const complex<double>*>(elem_ptr(flat));
  }
  std::string plain_str(int64_t flat) const {  // Python's str() of an int or bool element
    return visit_dtype(t_.dtype(), [&](auto zero) -> std::string {
      using T = decltype(zero);
      T v = *reinterpret_cast<const T*>(elem_ptr(flat));
      if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
      else if constexpr (std::is_integral_v<T>) return std::to_string(int64_t(v));
      else return "";
    });
  }

  std::string element(int64_t flat) const {
    if (complex_) {
      complex<double> c = read_complex(flat);
      std::string re = f1_.format(c.re), im = f2_.format(c.im) + "j";
      im.erase(0, im.find_first_not_of(' '));
      return (im[0] == '+' || im[0] == '-') ? re + im : re + "+" + im;
    }
    if (floating_) return f1_.format(read_double(flat));
    return f1_.format(plain_str(flat));
  }

  std::string vector_str(int64_t base, int64_t size, bool cut, int indent) const {
    size_t element_length = f1_.width() + 2;
    if (complex_) element_length += f2_.width() + 1;
    int64_t per_line = std::max<int64_t>(1, int64_t(std::floor(double(kLineWidth - indent) / double(element_length))));
    std::vector<std::string> data;
    for (int64_t i = 0; i < size; ++i) {
      if (cut && i == kEdgeItems) {
        data.push_back(" ...");
        i = size - kEdgeItems;
      }
      data.push_back(element(base + i));
    }
    std::string out = "[";
    std::string line_sep = ",\n" + std::string(size_t(indent + 1), ' ');
    for (size_t i = 0; i < data.size(); ++i) {
      if (i) out += (int64_t(i) % per_line == 0) ? line_sep : ", ";
      out += data[i];
    }
    return out + "]";
  }

  const TensorBase& t_;
  bool summarize_, complex_ = false, floating_ = false;
  Formatter f1_, f2_;
};

std::string tuple_str(IntArrayRef sizes) {  // Python's str(tuple)
  std::string s = "(";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + (sizes.size() == 1 ? ",)" : ")");
}

// _add_suffixes: ", suffix" on the last line while it fits in the line width, else a new line.
std::string add_suffixes(const std::string& body, const std::vector<std::string>& suffixes, size_t indent) {
  std::string out = body;
  size_t nl = body.rfind('\n');
  int64_t last_line_len = int64_t(body.size()) - (nl == std::string::npos ? -1 : int64_t(nl)) + 1;
  for (const std::string& s : suffixes) {
    if (last_line_len + int64_t(s.size()) + 2 > kLineWidth) {
      out += ",\n" + std::string(indent, ' ') + s;
      last_line_len = int64_t(indent + s.size());
    } else {
      out += ", " + s;
      last_line_len += int64_t(s.size()) + 2;
    }
  }
  return out + ")";
}

}  // namespace

std::string shape_str(IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string TensorBase::shape_str() const { return kiln::shape_str(sizes()); }

std::string TensorBase::str() const {
  if (!defined()) return "[ Tensor (undefined) ]";
  const std::string prefix = "tensor(";
  const int indent = int(prefix.size());
  std::vector<std::string> suffixes;
  if (!is_cpu()) suffixes.push_back("device='" + device().str() + "'");
  std::string dtype_suffix = std::string("dtype=torch.") + dtype_name(dtype());
  DType dflt = default_float_dtype();
  std::string body;
  if (numel() == 0) {
    if (dim() != 1) suffixes.push_back("size=" + tuple_str(sizes()));
    if (dtype() != dflt) suffixes.push_back(dtype_suffix);  // nothing else shows an empty tensor's dtype
    body = "[]";
  } else {
    DType d = dtype();
    if (!(d == dflt || d == to_complex(dflt) || d == DType::Int64 || d == DType::Bool)) suffixes.push_back(dtype_suffix);
    TensorBase host = is_cpu() ? *this : to(kCPU);
    body = Printer(host).str(0, 0, indent);
  }
  if (const AutogradMeta* meta = impl()->autograd()) {
    if (meta->grad_fn) suffixes.push_back(std::string("grad_fn=<") + meta->grad_fn->name() + ">");
    else if (meta->requires_grad) suffixes.push_back("requires_grad=True");
  }
  return add_suffixes(prefix + body, suffixes, size_t(indent));
}

std::ostream& operator<<(std::ostream& os, const TensorBase& t) { return os << t.str(); }

}  // namespace kiln
