"""Render the validated registry into generated/ (only files whose content changed are written).

render() builds the views once, with every fact (views.build_views), then loops over the
manifest: each target module lists its Outputs (outputs.Output: template, path, scope), so a
new target (a Python binding) is a module and its entries in MANIFEST."""
import os

import jinja2

from . import targets_cpp, targets_data
from .outputs import Context
from .views import build_views

TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")
# Marks where a composite body copied from ops/*.yaml ends; Writer.write turns it into a `#line`
# back to the generated file's own numbering.
LINE_RESTORE = "// @kiln-line-restore"

# Every generated file; sources.cmake last, once the C++ targets have listed their sources.
MANIFEST = targets_cpp.OUTPUTS + targets_data.OUTPUTS + [targets_cpp.SOURCES_CMAKE]


def _env():
    # Compiled templates are cached (keyed by each template's text) in a per-user temporary
    # folder: compiling the 25 templates is half of a run that changes one expression. Without a
    # usable temporary folder they are compiled each run.
    try:
        cache = jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):
        cache = None
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        trim_blocks=True,
        lstrip_blocks=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        bytecode_cache=cache,
    )
    env.globals["LINE_RESTORE"] = LINE_RESTORE
    return env


class Writer:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.written = set()
        self.changed = 0

    def write(self, rel, content):
        path = os.path.join(self.out_dir, rel)
        if LINE_RESTORE in content:
            lines = content.split("\n")
            for i, line in enumerate(lines):
                if line == LINE_RESTORE:  # the next physical line is i + 2 (1-based)
                    lines[i] = f'#line {i + 2} "{os.path.abspath(path)}"'
            content = "\n".join(lines)
        self.written.add(os.path.normpath(path))
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                if fh.read() == content:
                    return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(content)
        os.replace(tmp, path)
        self.changed += 1

    def remove_stale(self):
        """Delete generated files no longer produced (a removed op leaves nothing behind)."""
        for dirpath, _, files in os.walk(self.out_dir):
            for f in files:
                p = os.path.normpath(os.path.join(dirpath, f))
                if p not in self.written:
                    os.remove(p)


def render(registry, out_dir, sources=None):
    """sources (loader.Sources): the registry files that `#line` directives in composite bodies name."""
    env = _env()
    ctx = Context(registry, build_views(registry, sources), sources, {})
    w = Writer(out_dir)
    for output in MANIFEST:
        fixed = output.template and "{" not in output.template  # else named per item (engines/{name}.j2)
        template = env.get_template(output.template) if fixed else None
        for item in output.expand(ctx):
            rel = output.path.format(**item)
            if output.template is None:
                w.write(rel, item["text"])
            else:
                w.write(rel, (template or env.get_template(output.template.format(**item))).render(**item))
            if output.cmake:
                ctx.cmake_lists.setdefault(output.cmake.format(**item), []).append(rel)
    w.remove_stale()
    return w.changed, len(w.written)
