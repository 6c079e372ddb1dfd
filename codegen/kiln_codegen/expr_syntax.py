"""A syntax check of the C++ expressions the registry holds (derivative formulas, pointwise
expressions), so that a typo is reported at its ops/*.yaml line instead of as a compile error in
generated code. It accepts the expression subset the registry uses: names (`a::b`), number
literals, calls, member calls, indexing, `{...}` lists, unary and binary operators, `?:`."""
import re

_TOKEN = re.compile(
    r"""
    (?P<space>\s+|/\*.*?\*/)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFuUlL]*)
  | (?P<name>[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)
  | (?P<op><<|>>|<=|>=|==|!=|&&|\|\||->|[-+*/%<>&|^!~?:.,()\[\]{}])
""",
    re.X | re.S,
)
_BINARY = {"||", "&&", "|", "^", "&", "==", "!=", "<", ">", "<=", ">=", "<<", ">>", "+", "-", "*", "/", "%"}
_UNARY = {"-", "+", "!", "~"}


class _Error(Exception):
    pass


def _tokens(text):
    pos, out = 0, []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise _Error(f"unexpected character {text[pos]!r} at column {pos + 1}")
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group(), pos))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens, text):
        self.t, self.i, self.text = tokens, 0, text

    def peek(self):
        return self.t[self.i][1] if self.i < len(self.t) else None

    def take(self, want=None):
        if self.i >= len(self.t):
            raise _Error(f"the expression ends early{'' if want is None else ', expected ' + repr(want)}")
        kind, value, pos = self.t[self.i]
        if want is not None and value != want:
            raise _Error(f"expected {want!r} at column {pos + 1}, found {value!r}")
        self.i += 1
        return kind, value, pos

    def expression(self):
        self.binary()
        if self.peek() == "?":
            self.take("?")
            self.expression()
            self.take(":")
            self.expression()

    def binary(self):
        self.unary()
        while self.peek() in _BINARY:
            self.take()
            self.unary()

    def unary(self):
        while self.peek() in _UNARY:
            self.take()
        self.postfix()

    def postfix(self):
        self.primary()
        while True:
            nxt = self.peek()
            if nxt == "(":
                self.arguments("(", ")")
            elif nxt in (".", "->"):
                self.take()
                kind, value, pos = self.take()
                if kind != "name":
                    raise _Error(f"expected a member name at column {pos + 1}, found {value!r}")
            elif nxt == "[":
                self.take("[")
                self.expression()
                self.take("]")
            else:
                return

    def arguments(self, open_, close):
        self.take(open_)
        if self.peek() == close:
            self.take(close)
            return
        self.expression()
        while self.peek() == ",":
            self.take(",")
            self.expression()
        self.take(close)

    def primary(self):
        if self.peek() == "(":
            self.take("(")
            self.expression()
            self.take(")")
            return
        if self.peek() == "{":
            self.arguments("{", "}")
            return
        kind, value, pos = self.take()
        if kind not in ("name", "number"):
            raise _Error(f"expected a value at column {pos + 1}, found {value!r}")


def problem(text):
    """None when `text` is one well-formed expression, else what is wrong with it."""
    try:
        p = _Parser(_tokens(text), text)
        p.expression()
        if p.i != len(p.t):
            _, value, pos = p.t[p.i]
            raise _Error(f"unexpected {value!r} at column {pos + 1}")
    except _Error as e:
        return str(e)
    return None
