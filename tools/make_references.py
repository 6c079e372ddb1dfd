#!/usr/bin/python3
"""Regenerates tests/reference/<op>.json: PyTorch's results for every sample and declared dtype
of every op in <build>/generated/op_samples.json, with the exact inputs used.

Run by Debian's /usr/bin/python3 with python3-torch (1.13): `tools/kiln refs`.
Inputs are drawn by a seeded NumPy generator inside each argument's domain (integers rounded,
bools random) and stored in the file, so the C++ test needs neither Python nor the RNG.
When torch has no float16/bfloat16 CPU kernel the op runs in float32 and the result is rounded
to the dtype ("reference": "float32-upcast"); when it has one and the float32-then-round result
differs, that one is kept too ("alt_result": either is accepted). Any other torch error is
recorded as the case's error.
"""
import argparse
import hashlib
import json
import math
import os
import sys

import numpy as np
import torch

import reference_optim

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_DTYPES = {
    "bool": torch.bool,
    "uint8": torch.uint8,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
}
DTYPE_NAMES = {v: k for k, v in TORCH_DTYPES.items()}
INT_RANGE = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-32768, 32767)}
MAX_ELEMENTS = 256  # per tensor: keeps the checked-in files small; bigger samples are skipped


def seed_for(*parts):
    return int(hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:15], 16)


# ---------------------------------------------------------------- inputs
def random_tensor(rng, shape, dtype, domain, mask):
    lo, hi = domain if domain else (-2.0, 2.0)
    shape = tuple(shape)
    if mask or dtype == "bool":
        return torch.from_numpy(np.asarray(rng.random(shape) < 0.5))
    x = np.asarray(rng.uniform(lo, hi, size=shape))
    if dtype.startswith("complex"):
        x = x + 1j * np.asarray(rng.uniform(lo, hi, size=shape))
    elif dtype in INT_RANGE or dtype in ("int32", "int64"):
        tlo, thi = INT_RANGE.get(dtype, (-1e15, 1e15))
        ilo, ihi = max(tlo, math.ceil(lo)), min(thi, math.floor(hi))
        if ilo > ihi:  # no integer inside the domain
            ilo, ihi = max(tlo, math.floor(lo)), min(thi, math.ceil(hi))
        x = np.clip(np.round(x), ilo, ihi)
    elif dtype == "float64":
        # 12 significant digits: exact in the file, still unrounded for float64 math
        x = np.vectorize(lambda v: float(f"{v:.12g}"), otypes=[float])(x) if x.size else x
    return torch.tensor(x).to(TORCH_DTYPES[dtype])


def with_special_values(t):
    """NaN, +inf and -inf in the first elements (ops that exist to handle them)."""
    if t.is_floating_point() and t.numel() >= 3:
        t = t.clone()
        flat = t.view(-1)
        flat[0], flat[1], flat[2] = float("nan"), float("inf"), float("-inf")
    return t


def sample_inputs(op, index, sample, dtype):
    rng = np.random.default_rng(seed_for(op["name"], index, dtype))
    types = {a["name"]: a["type"] for a in op["args"]}
    out = {}
    for name, spec in sample.items():
        t = types.get(name)
        if t is None:
            raise SystemExit(f"{op['name']}: sample argument '{name}' is not in the schema")
        if t in ("Tensor", "Tensor?"):
            if spec is None:
                out[name] = None
                continue
            if "values" in spec:  # literal values written in the sample
                out[name] = torch.tensor(spec["values"], dtype=TORCH_DTYPES[spec.get("dtype") or dtype])
                continue
            x = random_tensor(rng, spec["shape"], spec.get("dtype") or dtype, spec.get("domain"), spec.get("bool"))
            out[name] = with_special_values(x) if op.get("special_values") else x
        elif t == "Tensor?[]":  # each entry None or a tensor spec (advanced indexing)
            out[name] = [
                None
                if item is None
                else torch.tensor(item["values"], dtype=TORCH_DTYPES[item.get("dtype") or dtype])
                if "values" in item
                else random_tensor(rng, item["shape"], item.get("dtype") or dtype, item.get("domain"), item.get("bool"))
                for item in spec["items"]
            ]
        elif t == "Tensor[]":
            out[name] = [
                random_tensor(rng, s, spec.get("dtype") or dtype, spec.get("domain"), False) for s in spec["shapes"]
            ]
            if op.get("special_values"):
                out[name] = [with_special_values(x) for x in out[name]]
        else:
            out[name] = spec
    return out


# ---------------------------------------------------------------- calling torch
def torch_callable(op):
    if op.get("torch"):
        # an expression written in ops/*.yaml; `refs.<f>` names a longer reference in tools/reference_*.py
        return eval(op["torch"], {"torch": torch, "math": math, "refs": reference_optim})
    base, _, overload = op["name"].partition(".")
    return getattr(getattr(torch.ops.aten, base), overload or "default")


def torch_value(arg_type, v):
    if v is None:
        return None
    if arg_type.startswith("ScalarType"):
        return TORCH_DTYPES[v]
    if arg_type.startswith(("Layout", "MemoryFormat")):
        return getattr(torch, v)  # "strided", "channels_last"
    if arg_type.startswith("Device"):
        return torch.device(v)
    if arg_type.startswith("Scalar") and isinstance(v, list):
        return complex(v[0], v[1])
    if arg_type.startswith("float[") and isinstance(v, list):  # float[]? (histogram's range)
        return [float(x) for x in v]
    if arg_type.startswith("float"):
        return float(v)
    return v


def bind(op, named):
    """Positional arguments in schema order up to the last one given (gaps take defaults), keyword-only as kwargs."""
    last = max([i + 1 for i, a in enumerate(op["args"]) if not a["kwarg_only"] and a["name"] in named], default=0)
    args, kwargs = [], {}
    for i, a in enumerate(op["args"]):
        value = named[a["name"]] if a["name"] in named else a.get("default")
        if a["type"] not in ("Tensor", "Tensor?", "Tensor[]", "Tensor?[]"):
            value = torch_value(a["type"], value)
        if a["kwarg_only"]:
            if a["name"] in named:
                kwargs[a["name"]] = value
        elif i < last:
            args.append(value)
    return args, kwargs


def run(fn, op, named):
    if op.get("writes"):
        # an op that writes its arguments (meta: foreach ...): it runs on copies, and its result
        # is what it wrote, in schema order, a list argument's tensors in place of the list
        named = {
            k: v.clone()
            if isinstance(v, torch.Tensor)
            else [t.clone() for t in v]
            if isinstance(v, list)
            and all(isinstance(t, torch.Tensor) for t in v)
            and any(a["name"] == k and a["type"] == "Tensor[]" for a in op["args"])
            else v
            for k, v in named.items()
        }
        args, kwargs = bind(op, named)
        fn(*args, **kwargs)
        written = []
        for name in op["writes"]:
            written.extend(named[name] if isinstance(named[name], list) else [named[name]])
        return written
    args, kwargs = bind(op, named)
    out = fn(*args, **kwargs)
    return list(out) if isinstance(out, (tuple, list)) else out


def broken_complex_dot(op, named, dtype):
    """Debian's torch 1.13 returns 0 for complex dot/vdot (its BLAS binding), and matmul of two
    1-D tensors goes through dot. For those cases the reference is sum(self * other) instead."""
    if not dtype.startswith("complex") or op["name"] not in ("dot", "matmul"):
        return None
    tensors = [v for v in named.values() if isinstance(v, torch.Tensor)]
    if len(tensors) == 2 and all(t.dim() == 1 for t in tensors):
        return (tensors[0] * tensors[1]).sum()
    return None


def upcast(named, dtype):
    def up(x):
        if isinstance(x, str) and TORCH_DTYPES.get(x) == dtype:  # a factory's dtype keyword
            return "float32"
        return x.float() if isinstance(x, torch.Tensor) and x.dtype == dtype else x

    return {
        k: [up(t) for t in v] if isinstance(v, list) and any(isinstance(t, torch.Tensor) for t in v) else up(v)
        for k, v in named.items()
    }


def round_to(result, dtype):
    if isinstance(result, list):
        return [round_to(r, dtype) for r in result]
    return result.to(dtype) if result.dtype == torch.float32 else result


# ---------------------------------------------------------------- serialization
def _finite_or_name(v, fmt):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return fmt(v)


def _bf16_short(v):
    for p in range(2, 9):  # fewest digits that read back as the same bfloat16
        s = float(f"{v:.{p}g}")
        if torch.tensor(s, dtype=torch.float32).to(torch.bfloat16).item() == v:
            return s
    return v


FORMATS = {
    "float16": lambda v: float(str(np.float16(v))),
    "bfloat16": _bf16_short,
    "float32": lambda v: float(str(np.float32(v))),
    # 15 digits: 1e-15 relative, far inside float64's 1e-10 tolerance (but keep the largest finite value finite)
    "float64": lambda v: float(f"{v:.15g}") if abs(v) < 1e308 else v,
}


def tensor_json(t):
    name = DTYPE_NAMES[t.dtype]
    flat = t.detach().contiguous().reshape(-1)
    if name.startswith("complex"):
        fmt = FORMATS["float32" if name == "complex64" else "float64"]
        data = [[_finite_or_name(z.real, fmt), _finite_or_name(z.imag, fmt)] for z in flat.tolist()]
    elif t.is_floating_point():
        fmt = FORMATS[name]
        data = (
            [_finite_or_name(v, fmt) for v in flat.float().tolist()]
            if name in ("float16", "bfloat16")
            else [_finite_or_name(v, fmt) for v in flat.tolist()]
        )
    else:
        data = flat.tolist()
    return {"dtype": name, "shape": list(t.shape), "data": data}


def value_json(v):
    if isinstance(v, torch.Tensor):
        return tensor_json(v)
    if isinstance(v, list) and any(isinstance(t, torch.Tensor) for t in v):  # Tensor[], Tensor?[] (None: null)
        return [None if t is None else tensor_json(t) for t in v]
    return v


def too_big(named):
    tensors = [t for v in named.values() for t in (v if isinstance(v, list) else [v]) if isinstance(t, torch.Tensor)]
    return any(t.numel() > MAX_ELEMENTS for t in tensors)


def metadata_only(v):
    """The sizes and dtype of a result whose values are not compared (empty's, draws)."""
    if isinstance(v, list):
        return [metadata_only(t) for t in v]
    return {"dtype": v["dtype"], "shape": v["shape"]} if isinstance(v, dict) else v


def factory_dtype(op, dtype):
    """A factory without tensor inputs makes the dtype under test: {"dtype": name}, else {}."""
    if not op.get("factory") or any(a["type"] in ("Tensor", "Tensor?", "Tensor[]") for a in op["args"]):
        return {}
    return {"dtype": dtype}


# ---------------------------------------------------------------- per op
def reference_cases(op):
    fn = torch_callable(op)
    cases = []
    for index, sample in enumerate(op["samples"]):
        for dtype in op["dtypes"]:
            named = sample_inputs(op, index, sample, dtype)
            if too_big(named):
                print(f"  {op['name']} sample {index}: a tensor exceeds {MAX_ELEMENTS} elements, skipped")
                break
            case = {
                "sample": index,
                "dtype": dtype,
                "args": {k: value_json(v) for k, v in named.items()},
                "result": None,
                "error": None,
                "reference": "torch",
            }
            fixed = broken_complex_dot(op, named, dtype)
            if fixed is not None:
                case["result"], case["reference"] = value_json(fixed), "torch-decomposed"
                cases.append(case)
                continue
            named = {**named, **factory_dtype(op, dtype)}  # (not stored: the test passes the dtype it checks)
            try:
                case["result"] = value_json(run(fn, op, named))
                if dtype in ("float16", "bfloat16") and not op.get("writes"):
                    # 16-bit results depend on where intermediates are rounded; computing in float32 and
                    # rounding once is as valid as torch's order, so the test accepts either.
                    try:
                        tdt = TORCH_DTYPES[dtype]
                        alt = value_json(round_to(run(fn, op, upcast(named, tdt)), tdt))
                        if alt != case["result"]:
                            case["alt_result"] = alt
                    except Exception:
                        pass
            except Exception as e:  # torch refused: maybe only for lack of a 16-bit CPU kernel
                error = str(e).strip().split("\n")[0][:200] or type(e).__name__
                if dtype in ("float16", "bfloat16"):
                    try:
                        tdt = TORCH_DTYPES[dtype]
                        case["result"] = value_json(round_to(run(fn, op, upcast(named, tdt)), tdt))
                        case["reference"] = "float32-upcast"
                        error = None
                    except Exception:
                        pass
                case["error"] = error
            if op.get("compare") == "metadata":
                for key in ("result", "alt_result"):
                    if case.get(key) is not None:
                        case[key] = metadata_only(case[key])
                if "alt_result" in case and case["alt_result"] == case["result"]:
                    del case["alt_result"]
            cases.append(case)
    return cases


def write_reference(path, op, cases):
    head = json.dumps({"op": op["name"], "torch_version": torch.__version__})[:-1]
    body = ",\n".join(json.dumps(c, separators=(",", ":"), allow_nan=False) for c in cases)
    text = f'{head}, "cases": [\n{body}\n]}}\n'
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return False
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build folder whose generated/ to read")
    ap.add_argument("--samples", help="op_samples.json (default: <build>/generated/op_samples.json)")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "reference"))
    ap.add_argument("ops", nargs="*", help="only these ops (default: all, and stale files are removed)")
    args = ap.parse_args()
    args.samples = args.samples or os.path.join(args.build, "generated", "op_samples.json")
    torch.set_num_threads(1)
    # oneDNN's CPU paths reject some broadcast shapes (gelu_backward); ATen's native kernels are the reference.
    torch.backends.mkldnn.enabled = False
    with open(args.samples, encoding="utf-8") as f:
        ops = json.load(f)["ops"]
    unknown = set(args.ops) - {op["name"] for op in ops}
    if unknown:
        raise SystemExit(f"make_references: no op named {', '.join(sorted(unknown))} in {args.samples}")
    os.makedirs(args.out, exist_ok=True)
    changed = errors = done = 0
    for op in ops:
        if args.ops and op["name"] not in args.ops:
            continue
        done += 1
        cases = reference_cases(op)
        errors += sum(1 for c in cases if c["error"])
        changed += write_reference(os.path.join(args.out, op["name"] + ".json"), op, cases)
    if not args.ops:
        names = {op["name"] + ".json" for op in ops}
        for stale in sorted(set(os.listdir(args.out)) - names):
            if stale.endswith(".json"):
                os.remove(os.path.join(args.out, stale))
                print(f"  removed {stale} (op no longer in ops/*.yaml)")
    print(f"references: {done} ops, {changed} file(s) changed, {errors} case(s) where torch raised, in {args.out}")


if __name__ == "__main__":
    main()
