"""Load the registry (its root file ops.yaml and the family files it lists) keeping the line of
every mapping and key, and rejecting duplicate keys."""
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
                raise RegistryError(
                    key_node.start_mark.line + 1,
                    f"unhashable mapping key {key!r}",
                    "quote values that contain ':' or '{'",
                ) from None
            if key in result:
                raise RegistryError(
                    key_node.start_mark.line + 1,
                    f"duplicate key '{key}'",
                    f"'{key}' is already set on line {result.key_lines[key]}",
                )
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
        raise RegistryError(
            line,
            f"YAML syntax error: {e.problem or e.context}",
            "formulas and expressions containing ',' ':' '{' or '#' must be quoted",
        ) from None
    except yaml.YAMLError as e:
        raise RegistryError(1, f"YAML error: {e}") from None


class Sources:
    """The registry's files, numbered as one text: each file's lines follow the previous file's,
    so the model keeps one int per entry and key, and `at` turns it back into the FILE:LINE a
    person opens (ops/reductions.yaml:12)."""

    def __init__(self, label="ops.yaml"):
        self.label = label  # what "N error(s)" lines name: the folder or the file
        self.files = []  # (shown, absolute path, first global line, line count)

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


def registry_root(path):
    """The registry's root file: `path`, or for a folder (the older `--ops ops`) the file named
    after it beside it (ops.yaml)."""
    return os.path.normpath(path) + ".yaml" if os.path.isdir(path) else path


def registry_files(path):
    """The root file and the family files it lists, those that exist (the inputs' digest; what
    is missing or malformed load_registry reports)."""
    root = registry_root(path)
    try:
        with open(root, encoding="utf-8") as fh:
            doc = load(fh.read())
    except (OSError, RegistryError):
        doc = None
    listed = doc.get("files") if isinstance(doc, Located) else None
    here = os.path.dirname(os.path.abspath(root))
    files = [root] + [os.path.join(here, os.path.normpath(f)) for f in listed or [] if isinstance(f, str)]
    return [f for f in files if os.path.isfile(f)]


def load_registry(path):
    """(document, Sources) of a registry root file (ops.yaml, or see registry_root). The root holds
    'dtype_groups', 'meta_families' and 'files', the family files whose 'ops' lists follow its
    own 'ops' (a one-file registry's) in the order listed; a family file holds 'ops' only."""
    root = registry_root(path)
    sources = Sources(os.path.basename(root))
    try:
        return _merge_files(root, sources), sources
    except RegistryError as e:
        e.sources = sources  # so the caller can say FILE:LINE
        raise


def _load_file(path, shown, sources):
    """One registry file, its lines shifted to follow the files before it: (document, text, offset)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    offset = sources.add(shown, path, text)
    try:
        doc = load(text)
    except RegistryError as e:
        e.line += offset
        raise
    _shift(doc, offset)
    return doc, text, offset


def _item_lines(text, key):
    """The lines of the items of the top-level list `key` (a loaded list keeps no lines)."""
    node = yaml.compose(text, Loader=_Base)
    for key_node, value_node in node.value if isinstance(node, yaml.MappingNode) else []:
        if key_node.value == key and isinstance(value_node, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value_node.value]
    return []


def _family_files(root, doc, text, offset):
    """(shown, path, line) of each file the root's 'files' lists, in order."""
    if "files" not in doc:
        return []
    line = doc.line_of("files")
    listed = doc["files"]
    if not isinstance(listed, list) or not all(isinstance(f, str) and f.strip() for f in listed):
        raise RegistryError(
            line,
            "'files' must be a list of the family files' paths",
            "relative to the root file, e.g. - ops/reductions.yaml",
        )
    lines = [n + offset for n in _item_lines(text, "files")]
    here = os.path.dirname(os.path.abspath(root))
    out, seen = [], {}
    for f, at in zip(listed, lines if len(lines) == len(listed) else [line] * len(listed)):
        shown = os.path.normpath(f.strip())
        path = os.path.join(here, shown)
        if shown in seen:
            raise RegistryError(at, f"'{shown}' is listed twice", f"first at {{line:{seen[shown]}}}")
        if os.path.abspath(path) == os.path.abspath(root):
            raise RegistryError(at, f"the root file lists itself ('{shown}')", "list the family files only")
        if not os.path.isfile(path):
            raise RegistryError(
                at, f"cannot read '{shown}': no such file", f"paths are relative to {os.path.basename(root)}'s folder"
            )
        seen[shown] = at
        out.append((shown, path, at))
    # A family file left out would be skipped without a word: every *.yaml beside the listed ones counts.
    paths = {os.path.abspath(p) for _, p, _ in out}
    for folder in sorted({os.path.dirname(p) for p in paths}):
        for p in sorted(glob.glob(os.path.join(folder, "*.yaml"))):
            if os.path.abspath(p) not in paths and os.path.abspath(p) != os.path.abspath(root):
                raise RegistryError(
                    line,
                    f"'{os.path.relpath(p, here)}' is not listed in 'files'",
                    "list every family file: only those are read, in the order listed",
                )
    return out


def _check_overloads(entries, shown, home):
    """An op name's overloads come from one file (call() tries them in the order read)."""
    for entry in entries if isinstance(entries, list) else []:
        sig = entry.get("signature") if isinstance(entry, Located) else None
        name = str(sig).split("(")[0].split(".")[0].strip() if sig else None
        if name and home.setdefault(name, (shown, entry.line))[0] != shown:
            raise RegistryError(
                entry.line,
                f"overloads of '{name}' are split between {home[name][0]} and {shown}",
                f"keep them in one file, in the order call() should try them (first at {{line:{home[name][1]}}})",
            )


def _merge_files(root, sources):
    shown_root = os.path.basename(root)
    doc, text, offset = _load_file(root, shown_root, sources)
    if doc is None:
        doc = Located()
        doc.line, doc.key_lines = 1, {}
    if not isinstance(doc, Located):
        raise RegistryError(
            offset + 1,
            "the registry root must be a mapping with 'dtype_groups', 'meta_families', " "'files' and/or 'ops'",
        )
    home = {}  # op name -> (file, line) of its first overload
    _check_overloads(doc.get("ops"), shown_root, home)
    merged = Located(doc)
    merged.line, merged.key_lines = doc.line, dict(doc.key_lines)
    if isinstance(doc.get("ops"), list):
        merged["ops"] = list(doc["ops"])
    for shown, path, _ in _family_files(root, doc, text, offset):
        family, _, start = _load_file(path, shown, sources)
        if family is None:
            continue
        if not isinstance(family, Located):
            raise RegistryError(start + 1, "a family file must be a mapping with 'ops'")
        for key in family:
            if key != "ops":
                raise RegistryError(
                    family.line_of(key),
                    f"'{key}' belongs in the root file {shown_root}",
                    "a family file holds 'ops' only",
                )
        if "ops" not in family:
            continue
        if not isinstance(family["ops"], list):
            raise RegistryError(family.line_of("ops"), "'ops' must be a list of op entries")
        _check_overloads(family["ops"], shown, home)
        if "ops" not in merged:
            merged["ops"] = []
            merged.key_lines["ops"] = family.line_of("ops")
        if isinstance(merged["ops"], list):
            merged["ops"].extend(family["ops"])
    return merged
