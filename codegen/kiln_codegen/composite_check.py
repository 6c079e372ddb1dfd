"""Cheap sanity checks of a composite op's C++ body, so a registry mistake is reported as
`ops/FILE.yaml:LINE: message` instead of a compile error in generated/. The usual cause is YAML
indentation: a following key indented into the `composite: |` block becomes C++."""
import re

_YAML_ITEM = re.compile(r"^\s*-\s*[\[{]")
_YAML_KEY = re.compile(r"^\s*([a-z_]+):(\s|$)")
_PAIRS = {")": "(", "]": "[", "}": "{"}


def problem(body, keys):
    """(line index within body, message) of the first problem, or None."""
    lines = body.split("\n")
    for i, text in enumerate(lines):
        m = _YAML_KEY.match(text)
        if m and m.group(1) in keys:
            return (
                i,
                f"composite body has a line that looks like the registry key '{m.group(1)}:' (indented into the block?)",
            )
        if _YAML_ITEM.match(text):
            return i, "composite body has a line that looks like a YAML list item (a sample indented into the block?)"
    stack = []
    for i, text in enumerate(lines):
        j = 0
        while j < len(text):
            c = text[j]
            if text.startswith("//", j):
                break
            if c in "\"'":  # skip a string or character literal
                j += 1
                while j < len(text) and text[j] != c:
                    j += 2 if text[j] == "\\" else 1
            elif c in "([{":
                stack.append((c, i))
            elif c in _PAIRS:
                if not stack or stack[-1][0] != _PAIRS[c]:
                    return i, f"composite body has an unmatched '{c}'"
                stack.pop()
            j += 1
    if stack:
        return stack[-1][1], f"composite body has an unclosed '{stack[-1][0]}'"
    return None
