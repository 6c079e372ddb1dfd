"""Parse ATen-style schemas: `name.overload(Type arg=default, *, ...) -> returns`."""
import re
from dataclasses import dataclass, field
from typing import List, Optional

BASE_TYPES = {
    "Tensor",
    "int",
    "float",
    "bool",
    "Scalar",
    "ScalarType",
    "str",
    "Device",
    "Layout",
    "MemoryFormat",
    "Generator",
}
# Types whose only default is None: there is no literal for them in a schema.
NONE_DEFAULT_ONLY = {"ScalarType", "Tensor", "Device", "Layout", "MemoryFormat", "Generator"}


class SignatureError(ValueError):
    pass


@dataclass
class Type:
    base: str  # Tensor, int, float, bool, Scalar, ScalarType, str
    optional: bool = False
    is_list: bool = False
    list_size: Optional[int] = None
    alias: Optional[str] = None  # "a" in Tensor(a), "a!" in Tensor(a!)
    optional_items: bool = False  # Tensor?[]: a list whose entries may be None (an undefined Tensor)

    @property
    def mutable(self):
        return bool(self.alias and self.alias.endswith("!"))

    def schema(self):
        s = self.base
        if self.alias:
            s += f"({self.alias})"
        if self.optional_items:
            s += "?"
        if self.is_list:
            s += f"[{self.list_size or ''}]"
        if self.optional:
            s += "?"
        return s

    @property
    def is_tensor(self):
        return self.base == "Tensor" and not self.is_list

    @property
    def is_tensor_list(self):
        return self.base == "Tensor" and self.is_list


@dataclass
class Argument:
    name: str
    type: Type
    default: Optional[str] = None  # schema text of the default
    kwarg_only: bool = False

    @property
    def has_default(self):
        return self.default is not None


@dataclass
class Return:
    name: Optional[str]
    type: Type


@dataclass
class Signature:
    name: str
    overload: str
    arguments: List[Argument] = field(default_factory=list)
    returns: List[Return] = field(default_factory=list)
    returns_tuple: bool = False

    @property
    def full_name(self):
        return f"{self.name}.{self.overload}" if self.overload else self.name

    def arguments_text(self):
        """`(Type arg=default, *, ...) -> Returns`, as the schema is written."""
        parts = []
        star = False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(f"{a.type.schema()} {a.name}" + (f"={a.default}" if a.default is not None else ""))
        if self.returns_tuple:
            ret = "(" + ", ".join(f"{r.type.schema()} {r.name}" for r in self.returns) + ")"
        else:
            ret = self.returns[0].type.schema()
        return f"({', '.join(parts)}) -> {ret}"

    def schema(self):
        """The schema text this signature prints as; parse_signature(s.schema()) == s."""
        return self.full_name + self.arguments_text()


_TYPE_RE = re.compile(
    r"^(Tensor|int|float|bool|Scalar|ScalarType|str|Device|Layout|MemoryFormat|Generator)(\((\w+!?)\))?"
    r"(\?(?=\[))?(\[(\d*)\])?(\?)?$"
)
_NAME_RE = re.compile(r"^[A-Za-z_]\w*$")


def parse_type(text):
    m = _TYPE_RE.match(text.strip())
    if not m:
        raise SignatureError(
            f"unknown type '{text.strip()}' (known: {', '.join(sorted(BASE_TYPES))}, "
            "with [], [N], ? and Tensor(a)/Tensor(a!) annotations)"
        )
    base, _, alias, items_opt, lst, size, opt = m.groups()
    if alias and base != "Tensor":
        raise SignatureError(f"only Tensor takes an alias annotation, got '{text.strip()}'")
    if base == "Generator" and not opt:
        raise SignatureError(
            f"a Generator argument is optional (Generator?): without one the default generator is used"
        )
    if lst is not None and base not in ("Tensor", "int", "float"):
        raise SignatureError(f"only Tensor[], int[] and float[] lists are supported, got '{text.strip()}'")
    if items_opt and (base != "Tensor" or alias):
        raise SignatureError(f"only Tensor?[] (a list of optional Tensors) takes '?' before '[]', got '{text.strip()}'")
    return Type(
        base=base,
        optional=bool(opt),
        is_list=lst is not None,
        list_size=int(size) if size else None,
        alias=alias,
        optional_items=bool(items_opt),
    )


def _split_top(text, sep=","):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def _check_default(arg):
    d, t = arg.default, arg.type
    if d is None:
        return
    if d == "None":
        if not t.optional:
            raise SignatureError(f"argument '{arg.name}' defaults to None but its type {t.schema()} is not optional")
        return
    ok = True
    if t.is_list and t.base == "int":
        ok = bool(re.match(r"^\[\s*(-?\d+\s*(,\s*-?\d+\s*)*)?\]$", d)) or bool(re.match(r"^-?\d+$", d))
    elif t.is_list and t.base == "float":
        ok = bool(re.match(r"^\[\s*(-?\d+\.?\d*([eE]-?\d+)?\s*(,\s*-?\d+\.?\d*([eE]-?\d+)?\s*)*)?\]$", d))
    elif t.base == "int":
        ok = bool(re.match(r"^-?\d+$", d))
    elif t.base == "float":
        ok = bool(re.match(r"^-?(\d+\.?\d*([eE]-?\d+)?|inf)$", d))
    elif t.base == "bool":
        ok = d in ("True", "False")
    elif t.base == "Scalar":
        ok = bool(re.match(r"^-?(\d+\.?\d*([eE]-?\d+)?)$", d)) or d in ("True", "False")
    elif t.base == "str":
        ok = bool(re.match(r"^'[^']*'$", d))
    elif t.base in NONE_DEFAULT_ONLY:
        ok = False
    if not ok:
        raise SignatureError(f"default '{d}' does not fit argument '{arg.name}' of type {t.schema()}")


def parse_signature(text):
    m = re.match(r"^\s*([A-Za-z_]\w*)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.+?)\s*$", text or "", re.S)
    if not m:
        raise SignatureError("expected 'name(Type arg, ...) -> Return' or 'name.overload(...) -> Return'")
    name, overload, args_text, ret_text = m.groups()
    sig = Signature(name=name, overload=overload or "")
    kwarg_only = False
    seen = set()
    for part in _split_top(args_text):
        if part == "*":
            if kwarg_only:
                raise SignatureError("'*' appears twice")
            kwarg_only = True
            continue
        default = None
        if "=" in part:
            part, default = [x.strip() for x in part.split("=", 1)]
        pieces = part.rsplit(None, 1)
        if len(pieces) != 2:
            raise SignatureError(f"argument '{part}' needs a type and a name")
        type_text, arg_name = pieces
        if not _NAME_RE.match(arg_name):
            raise SignatureError(f"bad argument name '{arg_name}'")
        if arg_name in seen:
            raise SignatureError(f"argument '{arg_name}' appears twice")
        seen.add(arg_name)
        arg = Argument(name=arg_name, type=parse_type(type_text), default=default, kwarg_only=kwarg_only)
        _check_default(arg)
        sig.arguments.append(arg)
    # Non-keyword arguments without defaults may not follow ones with defaults.
    seen_default = False
    for a in sig.arguments:
        if a.kwarg_only:
            continue
        if a.has_default:
            seen_default = True
        elif seen_default:
            raise SignatureError(f"argument '{a.name}' without a default follows arguments with defaults")
    ret_text = ret_text.strip()
    if ret_text.startswith("("):
        if not ret_text.endswith(")"):
            raise SignatureError(f"unbalanced return tuple '{ret_text}'")
        sig.returns_tuple = True
        for part in _split_top(ret_text[1:-1]):
            pieces = part.rsplit(None, 1)
            if len(pieces) != 2:
                raise SignatureError(f"tuple returns need names, got '{part}'")
            t = parse_type(pieces[0])
            if t.base != "Tensor" or t.is_list:
                raise SignatureError(f"tuple returns must be Tensors, got '{part}'")
            sig.returns.append(Return(name=pieces[1], type=t))
    else:
        t = parse_type(ret_text)
        if t.base != "Tensor":
            raise SignatureError(f"ops return Tensor, (Tensor a, Tensor b) or Tensor[], got '{ret_text}'")
        sig.returns.append(Return(name=None, type=t))
    # Round trip: what was parsed prints back as the text, so nothing was lost or misread
    # (a registry signature is written in the one canonical spelling).
    canonical = sig.schema()
    if canonical != " ".join(text.split()):
        raise SignatureError(f"write it as '{canonical}' (the parsed schema prints differently)")
    return sig
