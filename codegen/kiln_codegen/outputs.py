"""What a generated file is made from: an Output is one entry of a target's manifest
(targets_cpp.OUTPUTS, targets_data.OUTPUTS), which render.render loops over."""
from typing import Callable, NamedTuple, Optional

SCOPES = ("once", "op", "name", "backend", "batch", "part")


class Output(NamedTuple):
    """template: a file of templates/ (formatted with the item: engines/{name}.j2), or None when
    the item carries its `text`; path: the file under generated/, formatted with the item
    (src/ops/{v.cname}.cpp); scope: what one file covers (SCOPES: an op, an op name, a backend,
    a batch of ops, a registry file, or the whole registry).

    The items are the template's variables, one dict per file: `items(ctx)` yields them;
    without it, scope "op" gives {"v": view} per view that `when` accepts and scope "once" the
    one dict `args(ctx)`. cmake names the CMake source list (sources.cmake) its files join,
    formatted with the item."""

    template: Optional[str]
    path: str
    scope: str
    items: Optional[Callable] = None
    when: Optional[Callable] = None
    args: Optional[Callable] = None
    cmake: Optional[str] = None

    def expand(self, ctx):
        if self.items is not None:
            return self.items(ctx)
        if self.scope == "op":
            return ({"v": v} for v in ctx.views.all if self.when is None or self.when(v))
        if self.scope == "once":
            return [self.args(ctx) if self.args else {}]
        raise ValueError(f"{self.path}: scope {self.scope} needs items")


class Context(NamedTuple):
    """What the manifest's item functions read: the model, the views (views.Views), the
    registry files (loader.Sources) and the CMake source lists filled so far."""

    registry: object
    views: object
    sources: object
    cmake_lists: dict
