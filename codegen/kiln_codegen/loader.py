"""Load the registry (the files of ops/, or one file) keeping the line of every mapping and key,
and rejecting duplicate keys."""
import glob
import os

import yaml

from .errors import RegistryError


class Located(dict):
    """A YAML mapping that remembers where it and each of its keys were written."""

    line = 0
    key_lines = None

    def line_of(self, key):
        return (self.key_lines or {}).get(key, self.line)


# libyaml's parser when present (5x faster); the constructor below is the same either way.
_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_Base):
    def construct_mapping(self, node, deep=False):
        self.flatten_mapping(node)
        result = Located()
        result.line = node.start_mark.line + 1
        result.key_lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise RegistryError(key_node.start_mark.line + 1, f"unhashable mapping key {key!r}",
                                    "quote values that contain ':' or '{'") from None
            if key in result:
                raise RegistryError(key_node.start_mark.line + 1, f"duplicate key '{key}'",
                                    f"'{key}' is already set on line {result.key_lines[key]}")
            result[key] = self.construct_object(value_node, deep=deep)
            result.key_lines[key] = key_node.start_mark.line + 1
        return result


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _LineLoader.construct_mapping)


def load(text):
    try:
        return yaml.load(text, Loader=_LineLoader)
    except RegistryError:
        raise
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        raise RegistryError(line, f"YAML syntax error: {e.problem or e.context}",
                            "formulas and expressions containing ',' ':' '{' or '#' must be quoted") from None
    except yaml.YAMLError as e:
        raise RegistryError(1, f"YAML error: {e}") from None


class Sources:
    """The registry's files, numbered as one text: each file's lines follow the previous file's,
    so the model keeps one int per entry and key, and `at` turns it back into the FILE:LINE a
    person opens (ops/reductions.yaml:12)."""

    def __init__(self, label="ops.yaml"):
        self.label = label  # what "N error(s)" lines name: the folder or the file
        self.files = []     # (shown, absolute path, first global line, line count)

    def add(self, shown, path, text):
        first = self.files[-1][2] + self.files[-1][3] if self.files else 0
        self.files.append((shown, os.path.abspath(path), first, text.count("\n") + 1))
        return first

    def locate(self, line):
        """(shown name, absolute path, line in that file) of a global line."""
        for shown, path, first, count in self.files:
            if first < line <= first + count:
                return shown, path, line - first
        shown, path, first, _ = self.files[0] if self.files else (self.label, self.label, 0, 0)
        return shown, path, max(1, line - first)

    def at(self, line):
        shown, _, local = self.locate(line)
        return f"{shown}:{local}"


def _shift(node, offset):
    if isinstance(node, Located):
        node.line += offset
        node.key_lines = {k: v + offset for k, v in (node.key_lines or {}).items()}
        for v in node.values():
            _shift(v, offset)
    elif isinstance(node, list):
        for v in node:
            _shift(v, offset)


def registry_files(path):
    """ops/*.yaml in name order when `path` is a folder, else the one file."""
    if os.path.isdir(path):
        return sorted(glob.glob(os.path.join(path, "*.yaml")))
    return [path]


def load_registry(path):
    """(document, Sources) for a registry folder or file. A folder's files are merged: their
    'dtype_groups' into one mapping, their 'ops' lists one after the other; any other top-level
    key is kept for the model to judge. A key set twice across files is an error at the second."""
    sources = Sources(os.path.basename(os.path.normpath(path)) + ("/" if os.path.isdir(path) else ""))
    try:
        return _merge_files(path, sources), sources
    except RegistryError as e:
        e.sources = sources  # so the caller can say FILE:LINE
        raise


def _merge_files(path, sources):
    is_dir = os.path.isdir(path)
    files = registry_files(path)
    if not files:
        raise RegistryError(1, f"no *.yaml files in {path}")
    merged = None
    home = {}  # op name -> (file, line) of its first overload
    for f in files:
        shown = os.path.join(os.path.basename(os.path.normpath(path)), os.path.basename(f)) if is_dir \
            else os.path.basename(f)
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        offset = sources.add(shown, f, text)
        try:
            doc = load(text)
        except RegistryError as e:
            e.line += offset
            raise
        if doc is None:
            continue
        if not isinstance(doc, Located):
            raise RegistryError(offset + 1, "a registry file must be a mapping with 'dtype_groups' and/or 'ops'")
        _shift(doc, offset)
        for entry in doc.get("ops") or []:
            sig = entry.get("signature") if isinstance(entry, Located) else None
            name = str(sig).split("(")[0].split(".")[0].strip() if sig else None
            if name and home.setdefault(name, (shown, entry.line))[0] != shown:
                raise RegistryError(entry.line, f"overloads of '{name}' are split between {home[name][0]} and {shown}",
                                    f"keep them in one file, in the order call() should try them (first at {{line:{home[name][1]}}})")
        if merged is None:
            merged = Located()
            merged.line, merged.key_lines = doc.line, {}
        for key, value in doc.items():
            line = doc.line_of(key)
            if key == "ops" and isinstance(merged.get("ops"), list) and isinstance(value, list):
                merged["ops"].extend(value)
            elif key == "dtype_groups" and isinstance(merged.get(key), Located) and isinstance(value, Located):
                for name, members in value.items():
                    if name in merged[key]:
                        raise RegistryError(value.line_of(name), f"dtype group '{name}' is defined twice",
                                            f"first defined at {{line:{merged[key].line_of(name)}}}")
                    merged[key][name] = members
                    merged[key].key_lines[name] = value.line_of(name)
            elif key in merged:
                raise RegistryError(line, f"duplicate top-level key '{key}'", f"first set at {{line:{merged.line_of(key)}}}")
            else:
                merged[key] = list(value) if key == "ops" and isinstance(value, list) else value
                merged.key_lines[key] = line
    return merged
