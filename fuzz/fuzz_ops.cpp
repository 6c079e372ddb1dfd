// libFuzzer target: the input bytes become a short program of op calls by name. Each call
// picks an op from kiln::ops(), fills its schema's arguments from the bytes (tensors from a
// pool of random shapes, dtypes, values and views; ints, lists, scalars, strings, dtypes)
// and runs it. Allowed outcomes: a result, or a kiln::Error. Anything else - another
// exception, a crash, a sanitizer report - is a finding. Results are also checked against
// the same call on contiguous copies of the inputs (views must not change the answer), and
// floating results are sometimes differentiated.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>
#include <kiln/kiln.h>

using namespace kiln;

namespace {

class Bytes {
 public:
  Bytes(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  bool empty() const { return i_ >= n_; }
  uint8_t byte() { return i_ < n_ ? p_[i_++] : 0; }
  int64_t pick(int64_t count) { return count <= 1 ? 0 : byte() % count; }  // 0 .. count-1
  bool flag() { return byte() & 1; }

 private:
  const uint8_t* p_;
  size_t n_, i_ = 0;
};

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNumbers[] = {0, 1, -1, 2, -2, 0.5, -0.25, 3, 7, 100, -128, 127, 255, 1e-7,
                           1e30, -1e30, kInf, -kInf, std::numeric_limits<double>::quiet_NaN(), 65504, 1e300};
// Sizes stay small or overflow outright. Some legal calls still ask for gigabytes (arange(0, 100,
// 1e-7) is 4 GB): ASan refuses any single allocation over 1 GiB (__asan_default_options below), so
// those end in kiln's out-of-memory error, not in libFuzzer's out-of-memory report.
const int64_t kInts[] = {0, 1, 2, 3, -1, -2, 4, 5, 9, -10, 0, 1, 2, 1, 100, int64_t(1) << 62,
                         std::numeric_limits<int64_t>::min()};
// The largest result the harness feeds to later calls (or reduces for a backward).
constexpr int64_t kMaxReusedNumel = int64_t(1) << 20;
const char* kStrings[] = {"none", "tanh", "trunc", "floor", "mean", "sum", "", "float32", "int64"};

double number(Bytes& in) { return kNumbers[in.pick(sizeof(kNumbers) / sizeof(kNumbers[0]))]; }
int64_t small_int(Bytes& in) { return kInts[in.pick(sizeof(kInts) / sizeof(kInts[0]))]; }
DType dtype(Bytes& in) { return DType(in.pick(kNumDTypes)); }

Tensor make_tensor(Bytes& in) {
  std::vector<int64_t> shape(in.pick(4));
  int64_t numel = 1;
  for (int64_t& s : shape) numel *= (s = in.pick(5));
  std::vector<double> values(numel);
  for (double& v : values) v = number(in);
  Tensor t = from_vector<double>(values, shape).to(dtype(in));
  switch (in.pick(6)) {  // a view instead of the contiguous tensor
    case 1: if (t.dim() >= 2) t = t.transpose(0, t.dim() - 1); break;
    case 2: if (t.dim() >= 1 && t.size(0) >= 2) t = t.narrow(0, 1, t.size(0) - 1); break;
    case 3: {
      std::vector<int64_t> s = t.sizes().vec();
      s.insert(s.begin(), 3);
      t = t.unsqueeze(0).expand(s);  // stride 0
      break;
    }
    case 4: if (t.dim() >= 1 && t.size(0) >= 1) t = t.select(0, t.size(0) - 1); break;
    default: break;
  }
  if (is_inexact(t.dtype()) && in.pick(4) == 0) t = t.detach().requires_grad_();
  return t;
}

// "name.overload(Tensor(a) self, int[1]? dim=None, *, ScalarType? dtype=None) -> Tensor"
struct Arg { std::string type, name; bool kwarg_only, has_default; };
std::vector<Arg> parse_args(const std::string& sig) {
  std::vector<Arg> args;
  size_t open = sig.find('('), close = sig.find(") ->");
  std::string inner = sig.substr(open + 1, close - open - 1);
  bool kwarg_only = false;
  size_t start = 0;
  while (start < inner.size()) {
    size_t comma = inner.find(", ", start);
    std::string item = inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? inner.size() : comma + 2;
    if (item == "*") { kwarg_only = true; continue; }
    size_t space = item.rfind(' ', item.find('=') == std::string::npos ? std::string::npos : item.find('='));
    Arg a;
    a.type = item.substr(0, space);
    if (size_t alias = a.type.find('('); alias != std::string::npos) a.type.erase(alias, a.type.find(')') - alias + 1);
    std::string rest = item.substr(space + 1);
    a.has_default = rest.find('=') != std::string::npos;
    a.name = rest.substr(0, rest.find('='));
    a.kwarg_only = kwarg_only;
    args.push_back(a);
  }
  return args;
}

struct Pool {
  std::vector<Tensor> tensors;
  const Tensor& any(Bytes& in) { return tensors[in.pick(int64_t(tensors.size()))]; }
  void add(const Tensor& t, Bytes& in) {
    if (tensors.size() < 6) tensors.push_back(t);
    else tensors[in.pick(6)] = t;
  }
};

Value arg_value(const Arg& a, Bytes& in, Pool& pool) {
  std::string base = a.type;
  const bool optional = !base.empty() && base.back() == '?';
  if (optional) base.pop_back();
  if (optional && in.pick(4) == 0) return Value();
  if (base == "Tensor") return pool.any(in);
  if (base == "Tensor[]" || base == "Tensor?[]") {
    TensorList list(in.pick(4));
    for (Tensor& t : list)
      if (base == "Tensor[]" || in.pick(3) != 0) t = pool.any(in);  // Tensor?[]: some entries None
    return Value(list);
  }
  if (base.rfind("int[", 0) == 0) {
    std::vector<int64_t> list(in.pick(4));
    for (int64_t& v : list) v = small_int(in);
    return Value(list);
  }
  if (base.rfind("float[", 0) == 0) {  // float[]? (histogram's range): mostly 2 values, sometimes not
    std::vector<double> list(in.pick(4) == 0 ? in.pick(4) : 2);
    for (double& v : list) v = number(in);
    return Value(list);
  }
  if (base == "int") return Value(small_int(in));
  if (base == "float") return Value(number(in));
  if (base == "bool") return Value(in.flag());
  if (base == "Scalar") {
    switch (in.pick(4)) {
      case 0: return Value(small_int(in));
      case 1: return Value(in.flag());
      case 2: return Value(complex<double>(number(in), number(in)));
      default: return Value(number(in));
    }
  }
  if (base == "ScalarType") return Value(dtype(in));
  if (base == "str") return Value(kStrings[in.pick(sizeof(kStrings) / sizeof(kStrings[0]))]);
  return Value();
}

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "kiln fuzz finding: %s\n", what.c_str());
  std::abort();
}

// Same dtype and shape; values equal (NaN equals NaN) or, for floating types, close. `spread`
// (the inputs' largest finite magnitude times their element count) bounds how far a different
// summation order may move a result: 1 + 1e30 - 1e30 is 0 or 1 depending on the order, in kiln
// as in PyTorch, and is no finding.
void compare(const Tensor& a, const Tensor& b, const std::string& op, double spread) {
  if (a.dtype() != b.dtype() || !a.sizes().equals(b.sizes())) finding(op + ": a view input changed the result's type or shape");
  if (a.numel() > 4096 || is_complex(a.dtype())) return;
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  const double tol = is_floating(a.dtype()) ? 1e-2 : 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (x[i] == y[i]) continue;
    if (std::isfinite(x[i]) && std::isfinite(y[i]) &&
        std::fabs(x[i] - y[i]) <= tol * (1 + std::fabs(y[i])) + (tol > 0 ? 2.4e-7 * spread : 0.0))
      continue;
    finding(op + ": a view input changed the result at element " + std::to_string(i) + ": " + std::to_string(x[i]) +
            " vs " + std::to_string(y[i]));
  }
}

// The largest finite |element| of a real floating tensor times its element count (0 otherwise).
double magnitude_spread(const Tensor& t) {
  if (!is_floating(t.dtype()) || t.numel() == 0 || t.numel() > 4096) return 0;
  double m = 0;
  for (double x : t.to_vector<double>())
    if (std::isfinite(x)) m = std::max(m, std::fabs(x));
  return m * double(t.numel());
}

std::vector<Tensor> tensors_of(const Value& v) {
  if (v.is_tensor()) return {v.to_tensor()};
  if (v.kind() == Value::Kind::TensorList) return v.to_tensor_list();
  std::vector<Tensor> out;
  if (v.kind() == Value::Kind::Tuple)
    for (const Value& item : v.to_tuple())
      for (const Tensor& t : tensors_of(item)) out.push_back(t);
  return out;
}

Value contiguous_copy(const Value& v) {
  if (v.is_tensor()) return Value(v.to_tensor().detach().contiguous().clone());
  if (v.kind() == Value::Kind::TensorList) {
    TensorList list;
    for (const Tensor& t : v.to_tensor_list()) list.push_back(t.defined() ? t.detach().contiguous().clone() : t);
    return Value(list);
  }
  return v;
}

void run_one_call(Bytes& in, Pool& pool) {
  const std::vector<OpSchema>& all = ops();
  const OpSchema& op = all[size_t(in.byte() | (in.byte() << 8)) % all.size()];
  std::vector<Value> args;
  Kwargs kwargs;
  for (const Arg& a : parse_args(op.signature)) {
    if (a.has_default && in.pick(3) == 0) continue;  // leave it to the default
    Value v = arg_value(a, in, pool);
    if (a.kwarg_only || in.pick(8) == 0) kwargs.emplace_back(a.name, std::move(v));
    else if (kwargs.empty()) args.push_back(std::move(v));
    else kwargs.emplace_back(a.name, std::move(v));
  }
  // Random ops draw the same values on both calls (kiln's draws follow logical element order,
  // whatever the layout); empty's values are unspecified, so only its metadata is compared.
  const std::string base_name = op.name.substr(0, op.name.find('.'));
  const bool unspecified_values = base_name == "empty" || base_name == "empty_like" || base_name == "empty_strided";
  // as_strided reads its input's storage (`reads_storage: true` in the registry): a contiguous
  // copy is other storage, so the second call below neither needs to succeed nor agree.
  const bool reads_storage = base_name == "as_strided";
  constexpr uint64_t kSeed = 5;
  // contiguous copies of the inputs, taken before the call: an op that writes into its arguments
  // (index_put_, uniform_) must get the same inputs the second time
  std::vector<Value> args2;
  Kwargs kwargs2;
  {
    NoGradGuard no_grad;
    for (const Value& v : args) args2.push_back(contiguous_copy(v));
    for (const auto& [k, v] : kwargs) kwargs2.emplace_back(k, contiguous_copy(v));
  }
  Value result;
  try {
    manual_seed(kSeed);
    result = call(op.name, args, kwargs);
  } catch (const Error&) {
    return;
  } catch (const std::exception& e) {
    finding(op.name + " raised a non-kiln exception: " + e.what());
  }
  std::vector<Tensor> outs = tensors_of(result);
  for (const Tensor& t : outs) {
    if (!t.defined()) finding(op.name + " returned an undefined tensor");
    // touch every element (not empty's: reading an uninitialized bool is undefined behaviour)
    if (t.numel() <= 4096 && !unspecified_values) (void)t.to_vector<double>();
  }
  // The same call on contiguous copies must agree (no grad: pure values).
  if (!reads_storage) {
    NoGradGuard no_grad;
    Value again;
    try {
      manual_seed(kSeed);
      again = call(op.name, args2, kwargs2);
    } catch (const Error& e) {
      finding(op.name + " failed on contiguous copies of inputs it accepted: " + e.what());
    }
    std::vector<Tensor> outs2 = tensors_of(again);
    if (outs2.size() != outs.size()) finding(op.name + ": result count differs on contiguous inputs");
    double spread = 0;
    for (const Value& v : args2)
      if (v.is_tensor()) spread = std::max(spread, magnitude_spread(v.to_tensor()));
    for (const auto& [k, v] : kwargs2)
      if (v.is_tensor()) spread = std::max(spread, magnitude_spread(v.to_tensor()));
    for (size_t i = 0; i < outs.size(); ++i) {
      if (unspecified_values) {
        if (outs[i].dtype() != outs2[i].dtype() || !outs[i].sizes().equals(outs2[i].sizes()))
          finding(op.name + ": a view input changed the result's type or shape");
      } else {
        compare(outs[i], outs2[i], op.name, spread);
      }
    }
  }
  if (unspecified_values) return;  // garbage values are no input for later calls
  for (const Tensor& t : outs) {
    // A view may be legal and astronomically large (a 0-d tensor expanded to 2^62 elements):
    // any op reading it would run for hours, as PyTorch's would. Such results are not reused.
    if (t.numel() > kMaxReusedNumel) continue;
    if (t.requires_grad() && in.pick(2) == 0) {
      try {
        t.sum().backward();
      } catch (const Error&) {
      }
    }
    pool.add(t, in);
  }
}

}  // namespace

// ASAN_OPTIONS given at run time add to these (and win where they name the same option).
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1:max_allocation_size_mb=1024"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  Pool pool;
  for (int i = 0, n = 1 + int(in.pick(3)); i < n; ++i) pool.add(make_tensor(in), in);
  for (int step = 0; step < 8 && !in.empty(); ++step) {
    if (in.pick(5) == 0) pool.add(make_tensor(in), in);
    else run_one_call(in, pool);
  }
  return 0;
}
