"""Renders the merged coverage report (see coverage.py) as Markdown and self-contained HTML."""
import html

SHORT = {
    "bool": "b",
    "uint8": "u8",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "f32",
    "float64": "f64",
    "complex64": "c64",
    "complex128": "c128",
}
# Text symbols any font has (DejaVu, Liberation, the browsers' defaults): emoji need a colour
# emoji font that headless Chromium on Debian lacks. The HTML colours the cells as well.
SYMBOL = {"pass": "✓", "fail": "✗", "unverified": "?", "not run": "–", "declared": "○"}
WORDS = {
    "pass": "passing",
    "fail": "failing",
    "unverified": "unverified (run, no PyTorch reference to compare)",
    "not run": "compiled, not run",
    "declared": "declared, not compiled",
}
TOTAL_COLUMNS = ["declared", "compiled", "pass", "fail", "unverified", "not run"]
TOTAL_TITLES = ["declared", "compiled", "passing", "failing", "unverified", "not run"]
# Gradient cells per op and backend, in column order: (check, dtype, op-table column, family-summary
# column, hover title). "backward" is gradcheck (reverse mode), "jvp" forward-mode AD; one list so that
# the tables, the family summary and the failing list cannot disagree on which cells exist.
GRAD_COLUMNS = [
    ("backward", "float64", "grad", "grad (real)", "float64 gradcheck and gradgradcheck"),
    (
        "backward",
        "complex128",
        "grad c128",
        "grad (complex)",
        "complex128 gradcheck (PyTorch's conjugate-Wirtinger convention)",
    ),
    ("jvp", "float64", "fwd", "fwd (real)", "float64 forward-mode AD: J v vs finite differences and reverse mode"),
    (
        "jvp",
        "complex128",
        "fwd c128",
        "fwd (complex)",
        "complex128 forward-mode AD: J v vs finite differences and reverse mode",
    ),
]
# What a failing gradient cell is called in the list of failing cells, after its dtype.
CHECK_WORDS = {"backward": "backward", "jvp": "forward AD"}
# How an op pushes tangents (its jvp mode, column "fwd via"); "none" (not differentiable) shows blank.
JVP_MODES = {
    "derived": "generated from the derivative formula (pointwise ops)",
    "linear": "the op itself applied to the tangents (views, sums, cat)",
    "formula": "an explicit jvp formula in the registry",
    "parts": "a composite body whose ops push the tangents",
    "vjp": "no forward formula, so the derivative formula transposed by one extra backward pass (right, slower)",
    "unsupported": "raises NotImplementedError, no way to push tangents",
}


def _run_line(report):
    if report["results_time"]:
        line = f"Test results of {report['results_time']} ({report['results_file']})."
    else:
        line = "No test results yet: run `tools/kiln test`. Cells show what is declared and compiled."
    d = report.get("device_run")
    if d:
        line += (
            f" The CUDA device suite last ran on {d['device']} on {d['date']} ({d['source']}): {d['suite']}, "
            f"{d['cells']} CUDA cells passed; a CUDA cell this run did not run says so when you hover it."
        )
    return line


def _grad_dtypes(report):
    return report.get("grad_dtypes", ["float64", "complex128"])


def _grad_columns(report):
    return [c for c in GRAD_COLUMNS if c[1] in _grad_dtypes(report)]


def _grad_cell(op, check, backend, dtype):
    # A coverage.json written before a check existed has no key for it: its cells are blank.
    return ((op.get(check) or {}).get(backend) or {}).get(dtype)


def _jvp_mode(op, backend):
    """Column "fwd via": the op's jvp mode word where it has forward-AD cells on this backend, blank
    elsewhere (mode "none", or an op this backend does not declare)."""
    mode = op.get("jvp_mode") or "none"
    return mode if mode != "none" and (op.get("jvp") or {}).get(backend) else ""


def _has_cells(report, backend):
    return any(
        op["forward"].get(backend) or any((op.get(check) or {}).get(backend) for check in CHECK_WORDS)
        for op in report["ops"]
    )


def _legend():
    return " · ".join(f"{SYMBOL[s]} {WORDS[s]}" for s in SYMBOL) + " · blank: not declared"


def served_by(op, backend):
    """The op's dispatch: target on `backend`: a kernel's name, pointwise or composite."""
    return (op.get("served_by") or {}).get(backend, "")


def autocast_policy(op, backend):
    """The op's cast policy under `backend`'s autocast (lower_precision, float32, promote), or ''."""
    return (op.get("autocast") or {}).get(backend, "")


def family_summary(report):
    """Per family: ops, and passing / declared cells per backend under the family-summary titles:
    forward (every dtype) and each gradient column apart, as {"forward": [pass, declared],
    "grad (real)": [...], ..., "fwd (complex)": [...]}."""
    fams = {}
    for op in report["ops"]:
        f = fams.setdefault(op["family"] or "other", {"ops": 0, "cells": {}})
        f["ops"] += 1
        for backend in report["backends"]:
            c = f["cells"].setdefault(backend, {k: [0, 0] for k in _summary_titles(report)})
            cells = [("forward", cell) for cell in op["forward"].get(backend, {}).values()]
            cells += [
                (summary, _grad_cell(op, check, backend, dtype))
                for check, dtype, _, summary, _ in _grad_columns(report)
            ]
            for title, cell in cells:
                if cell:
                    c[title][0] += cell["status"] == "pass"
                    c[title][1] += 1
    return sorted(fams.items())


def _summary_titles(report):
    return ["forward", *(summary for _, _, _, summary, _ in _grad_columns(report))]


def _summary_fractions(report, f, backend):
    return [_fraction(*f["cells"][backend][t]) for t in _summary_titles(report)]


def failing_cells(report):
    """(op, backend, what, detail) of every failing cell: forward ones by dtype, then gradcheck,
    then forward AD."""
    failing = [
        (op["name"], b, d, c["detail"])
        for op in report["ops"]
        for b, cells in op["forward"].items()
        for d, c in cells.items()
        if c["status"] == "fail"
    ]
    failing += [
        (op["name"], b, f"{d} {word}", c["detail"])
        for check, word in CHECK_WORDS.items()
        for op in report["ops"]
        for b, cells in (op.get(check) or {}).items()
        for d, c in (cells or {}).items()
        if c["status"] == "fail"
    ]
    return failing


def _modes_text(word):
    """The jvp modes explained, each mode word passed through `word` (Markdown code, say)."""
    return "; ".join(f"{word(m)}: {why}" for m, why in JVP_MODES.items())


def _fraction(passed, declared):
    return f"{passed}/{declared}" if declared else "–"


def render_markdown(report):
    out = [
        "# kiln op coverage",
        "",
        _run_line(report),
        "",
        f"{len(report['ops'])} ops. Forward cells: op × backend × dtype, checked against PyTorch. "
        "Backward cells per op and backend: float64 gradcheck (and gradgradcheck), column `grad`, and, "
        "for ops that declare complex128, complex128 gradcheck in PyTorch's conjugate-Wirtinger convention, "
        "column `grad c128`. Columns `fwd` and `fwd c128`, the same two dtypes in forward mode: J·v through "
        "dual tensors, checked against finite differences and against reverse mode "
        "(`<J·v, u> = <v, Jᵀu>`). Column `fwd via` says how the op pushes tangents: "
        + _modes_text(lambda m: f"`{m}`")
        + ".",
        "",
        "## Totals",
        "",
        "| cells | " + " | ".join(TOTAL_TITLES) + " |",
        "|---" * (len(TOTAL_TITLES) + 1) + "|",
    ]
    for name, counts in report["totals"].items():
        out.append(f"| {name} | " + " | ".join(str(counts[c]) for c in TOTAL_COLUMNS) + " |")
    titles = _summary_titles(report)
    out += [
        "",
        "## By family",
        "",
        "passing / declared cells",
        "",
        "| family | ops | " + " | ".join(f"{b} {t}" for b in report["backends"] for t in titles) + " |",
        "|---" * (2 + len(titles) * len(report["backends"])) + "|",
    ]
    for name, f in family_summary(report):
        out.append(
            f"| {name} | {f['ops']} | "
            + " | ".join(x for b in report["backends"] for x in _summary_fractions(report, f, b))
            + " |"
        )
    out += ["", _legend(), ""]
    for backend in report["backends"]:
        if not _has_cells(report, backend):
            out += [f"## {backend}", "", "No op declares this backend yet.", ""]
            continue
        grads = _grad_columns(report)
        out += [
            f"## {backend}",
            "",
            "| op | family | served by | autocast | "
            + " | ".join(SHORT[d] for d in report["dtypes"])
            + " | "
            + " | ".join(column for _, _, column, _, _ in grads)
            + " | fwd via |",
            "|---" * (len(report["dtypes"]) + len(grads) + 5) + "|",
        ]
        for op in report["ops"]:
            cells = op["forward"].get(backend, {})
            row = [SYMBOL[cells[d]["status"]] if d in cells else "" for d in report["dtypes"]]
            row += [
                SYMBOL[c["status"]] if c else ""
                for c in (_grad_cell(op, check, backend, d) for check, d, _, _, _ in grads)
            ]
            row.append(_jvp_mode(op, backend))
            out.append(
                f"| `{op['name']}` | {op['family'] or ''} | {served_by(op, backend)} | {autocast_policy(op, backend)} | "
                + " | ".join(row)
                + " |"
            )
        out.append("")
    failing = failing_cells(report)
    if failing:
        out += ["## Failing cells", ""]
        out += [f"- `{n}` {b} {d}: {detail}" for n, b, d, detail in failing]
        out.append("")
    return "\n".join(out)


CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}
th,td{border:1px solid #ddd;padding:2px 6px;text-align:center}
td.op{text-align:left;font-family:monospace;white-space:nowrap}
td.fam{text-align:left;color:#666}
td.mode{text-align:left;color:#666;font-size:12px}
th{background:#f4f4f4;position:sticky;top:0}
.pass{background:#c8efc8}.fail{background:#f6b8b8}.unverified{background:#fbe9a9}
.notrun{background:#dde6f5}.declared{background:#eee;color:#777}
.legend span{display:inline-block;padding:1px 8px;margin-right:6px;border:1px solid #ddd}
#filter{font:inherit;padding:3px 6px;width:24em}
"""

# Hides the op rows whose name and family do not contain the text typed (case-insensitive).
FILTER_JS = """
function kilnFilter(text){text=text.toLowerCase();
for(const row of document.querySelectorAll('tr[data-op]')){
row.style.display=row.dataset.op.includes(text)?'':'none';}}
"""


def _css_class(status):
    return status.replace(" ", "")


def _cell_html(c):
    if not c:
        return "<td></td>"
    title = html.escape(WORDS[c["status"]] + (": " + c["detail"] if c.get("detail") else ""), quote=True)
    return f'<td class="{_css_class(c["status"])}" title="{title}">{SYMBOL[c["status"]]}</td>'


def _mode_html(op, backend):
    mode = _jvp_mode(op, backend)
    title = html.escape(f"{mode}: {JVP_MODES.get(mode, 'forward-AD mode')}", quote=True)
    return f'<td class="mode" title="{title}">{html.escape(mode)}</td>' if mode else "<td></td>"


def render_html(report):
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>kiln op coverage</title>",
        f"<style>{CSS}</style><script>{FILTER_JS}</script></head><body>",
        "<h1>kiln op coverage</h1>",
        f"<p>{esc(_run_line(report))} {len(report['ops'])} ops. Hover a cell for its detail. "
        "grad: float64 gradcheck and gradgradcheck; grad c128: complex128 gradcheck in PyTorch's "
        "conjugate-Wirtinger convention, for ops that declare complex128. fwd, fwd c128: the same dtypes in "
        "forward mode, J·v through dual tensors checked against finite differences and against reverse mode "
        f"({esc('<J·v, u> = <v, Jᵀu>')}). fwd via: how the op pushes tangents: "
        f"{esc(_modes_text(str))}.</p>",
        "<h2>Totals</h2><table><tr><th>cells</th>" + "".join(f"<th>{t}</th>" for t in TOTAL_TITLES) + "</tr>",
    ]
    for name, counts in report["totals"].items():
        parts.append(
            f"<tr><td class='op'>{esc(name)}</td>" + "".join(f"<td>{counts[c]}</td>" for c in TOTAL_COLUMNS) + "</tr>"
        )
    titles = _summary_titles(report)
    parts.append(
        "</table><h2>By family</h2><p>passing / declared cells</p><table><tr><th>family</th><th>ops</th>"
        + "".join(f"<th>{esc(b)} {esc(t)}</th>" for b in report["backends"] for t in titles)
        + "</tr>"
    )
    for name, f in family_summary(report):
        parts.append(
            f"<tr><td class='op'>{esc(name)}</td><td>{f['ops']}</td>"
            + "".join(f"<td>{x}</td>" for b in report["backends"] for x in _summary_fractions(report, f, b))
            + "</tr>"
        )
    parts.append(
        "</table><p class='legend'>"
        + "".join(f"<span class='{_css_class(s)}'>{SYMBOL[s]} {esc(WORDS[s])}</span>" for s in SYMBOL)
        + "<span>blank: not declared</span></p>"
    )
    parts.append(
        "<p><input id='filter' type='search' placeholder='filter ops by name or family' "
        "oninput='kilnFilter(this.value)'></p>"
    )
    for backend in report["backends"]:
        if not _has_cells(report, backend):
            parts.append(f"<h2>{esc(backend)}</h2><p>No op declares this backend yet.</p>")
            continue
        grads = _grad_columns(report)
        parts.append(
            f"<h2>{esc(backend)}</h2><table><tr><th>op</th><th>family</th>"
            "<th title='what serves it (ops/*.yaml dispatch:): a kernel, pointwise or composite'>served by</th>"
            "<th title='cast policy under autocast (ops/*.yaml autocast:)'>autocast</th>"
            + "".join(f"<th title='{d}'>{SHORT[d]}</th>" for d in report["dtypes"])
            + "".join(f'<th title="{esc(title, quote=True)}">{esc(column)}</th>' for _, _, column, _, title in grads)
            + "<th title='how the op pushes tangents in forward-mode AD'>fwd via</th></tr>"
        )
        for op in report["ops"]:
            cells = op["forward"].get(backend, {})
            key = esc(f"{op['name']} {op['family'] or ''}".lower(), quote=True)
            parts.append(
                f"<tr data-op='{key}'><td class='op' title='{esc(op['doc'] or '', quote=True)}'>{esc(op['name'])}</td>"
                f"<td class='fam'>{esc(op['family'] or '')}</td>"
                f"<td class='fam'>{esc(served_by(op, backend))}</td>"
                f"<td class='fam'>{esc(autocast_policy(op, backend))}</td>"
                + "".join(_cell_html(cells.get(d)) for d in report["dtypes"])
                + "".join(_cell_html(_grad_cell(op, check, backend, d)) for check, d, _, _, _ in grads)
                + _mode_html(op, backend)
                + "</tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
