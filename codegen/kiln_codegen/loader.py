"""Load ops.yaml keeping the line of every mapping and key, and rejecting duplicate keys."""
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
