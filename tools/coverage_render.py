"""Renders the merged coverage report (see coverage.py) as Markdown and self-contained HTML."""
import html

SHORT = {"bool": "b", "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
         "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
         "complex64": "c64", "complex128": "c128"}
# Text symbols any font has (DejaVu, Liberation, the browsers' defaults): emoji need a colour
# emoji font that headless Chromium on Debian lacks. The HTML colours the cells as well.
SYMBOL = {"pass": "✓", "fail": "✗", "unverified": "?", "not run": "–", "declared": "○"}
WORDS = {"pass": "passing", "fail": "failing", "unverified": "unverified (run, no PyTorch reference to compare)",
         "not run": "compiled, not run", "declared": "declared, not compiled"}
TOTAL_COLUMNS = ["declared", "compiled", "pass", "fail", "unverified", "not run"]
TOTAL_TITLES = ["declared", "compiled", "passing", "failing", "unverified", "not run"]
# Gradient cells per op and backend: column titles in the op tables and in the family summary.
GRAD_COLUMN = {"float64": "grad", "complex128": "grad c128"}
GRAD_SUMMARY = {"float64": "grad (real)", "complex128": "grad (complex)"}
GRAD_TITLE = {"float64": "float64 gradcheck and gradgradcheck",
              "complex128": "complex128 gradcheck (PyTorch's conjugate-Wirtinger convention)"}


def _run_line(report):
    if report["results_time"]:
        line = f"Test results of {report['results_time']} ({report['results_file']})."
    else:
        line = "No test results yet: run `tools/kiln test`. Cells show what is declared and compiled."
    d = report.get("device_run")
    if d:
        line += (f" The CUDA device suite last ran on {d['device']} on {d['date']} ({d['source']}): {d['suite']}, "
                 f"{d['cells']} CUDA cells passed; a CUDA cell this run did not run says so when you hover it.")
    return line


def _grad_dtypes(report):
    return report.get("grad_dtypes", ["float64", "complex128"])


def _has_cells(report, backend):
    return any(op["forward"].get(backend) or op["backward"].get(backend) for op in report["ops"])


def _legend():
    return " · ".join(f"{SYMBOL[s]} {WORDS[s]}" for s in SYMBOL) + " · blank: not declared"


def autocast_policy(op, backend):
    """The op's cast policy under `backend`'s autocast (lower_precision, float32, promote), or ''."""
    return (op.get("autocast") or {}).get(backend, "")


def family_summary(report):
    """Per family: ops, and passing / declared cells per backend: forward (every dtype) and each
    gradient dtype apart, as {"forward": [pass, declared], "float64": [...], "complex128": [...]}."""
    fams = {}
    for op in report["ops"]:
        f = fams.setdefault(op["family"] or "other", {"ops": 0, "cells": {}})
        f["ops"] += 1
        for backend in report["backends"]:
            c = f["cells"].setdefault(backend, {k: [0, 0] for k in ["forward", *_grad_dtypes(report)]})
            for cell in op["forward"].get(backend, {}).values():
                c["forward"][0] += cell["status"] == "pass"
                c["forward"][1] += 1
            for dtype, cell in (op["backward"].get(backend) or {}).items():
                if dtype in c:
                    c[dtype][0] += cell["status"] == "pass"
                    c[dtype][1] += 1
    return sorted(fams.items())


def _summary_titles(report):
    return ["forward", *(GRAD_SUMMARY.get(d, f"grad {d}") for d in _grad_dtypes(report))]


def _summary_fractions(report, f, backend):
    return [_fraction(*f["cells"][backend][k]) for k in ["forward", *_grad_dtypes(report)]]


def _grad_column(dtype):
    return GRAD_COLUMN.get(dtype, f"grad {dtype}")


def failing_cells(report):
    """(op, backend, what, detail) of every failing cell: forward ones by dtype, then gradients."""
    failing = [(op["name"], b, d, c["detail"]) for op in report["ops"] for b, cells in op["forward"].items()
               for d, c in cells.items() if c["status"] == "fail"]
    failing += [(op["name"], b, f"{d} backward", c["detail"]) for op in report["ops"]
                for b, cells in op["backward"].items() for d, c in (cells or {}).items() if c["status"] == "fail"]
    return failing


def _fraction(passed, declared):
    return f"{passed}/{declared}" if declared else "–"


def render_markdown(report):
    out = ["# kiln op coverage", "", _run_line(report), "",
           f"{len(report['ops'])} ops. Forward cells: op × backend × dtype, checked against PyTorch. "
           "Backward cells per op and backend: float64 gradcheck (and gradgradcheck), column `grad`, and, "
           "for ops that declare complex128, complex128 gradcheck in PyTorch's conjugate-Wirtinger convention, "
           "column `grad c128`.", "",
           "## Totals", "", "| cells | " + " | ".join(TOTAL_TITLES) + " |", "|---" * (len(TOTAL_TITLES) + 1) + "|"]
    for name, counts in report["totals"].items():
        out.append(f"| {name} | " + " | ".join(str(counts[c]) for c in TOTAL_COLUMNS) + " |")
    titles = _summary_titles(report)
    out += ["", "## By family", "", "passing / declared cells", "",
            "| family | ops | " + " | ".join(f"{b} {t}" for b in report["backends"] for t in titles) + " |",
            "|---" * (2 + len(titles) * len(report["backends"])) + "|"]
    for name, f in family_summary(report):
        out.append(f"| {name} | {f['ops']} | " + " | ".join(
            x for b in report["backends"] for x in _summary_fractions(report, f, b)) + " |")
    out += ["", _legend(), ""]
    for backend in report["backends"]:
        if not _has_cells(report, backend):
            out += [f"## {backend}", "", "No op declares this backend yet.", ""]
            continue
        grads = _grad_dtypes(report)
        out += [f"## {backend}", "",
                "| op | family | autocast | " + " | ".join(SHORT[d] for d in report["dtypes"]) + " | "
                + " | ".join(_grad_column(d) for d in grads) + " |",
                "|---" * (len(report["dtypes"]) + len(grads) + 3) + "|"]
        for op in report["ops"]:
            cells = op["forward"].get(backend, {})
            row = [SYMBOL[cells[d]["status"]] if d in cells else "" for d in report["dtypes"]]
            back = op["backward"].get(backend) or {}
            row += [SYMBOL[back[d]["status"]] if d in back else "" for d in grads]
            out.append(f"| `{op['name']}` | {op['family'] or ''} | {autocast_policy(op, backend)} | " + " | ".join(row) + " |")
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


def render_html(report):
    esc = html.escape
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>kiln op coverage</title>",
             f"<style>{CSS}</style><script>{FILTER_JS}</script></head><body>", "<h1>kiln op coverage</h1>",
             f"<p>{esc(_run_line(report))} {len(report['ops'])} ops. Hover a cell for its detail. "
             "grad: float64 gradcheck and gradgradcheck; grad c128: complex128 gradcheck in PyTorch's "
             "conjugate-Wirtinger convention, for ops that declare complex128.</p>",
             "<h2>Totals</h2><table><tr><th>cells</th>" + "".join(f"<th>{t}</th>" for t in TOTAL_TITLES) + "</tr>"]
    for name, counts in report["totals"].items():
        parts.append(f"<tr><td class='op'>{esc(name)}</td>" + "".join(f"<td>{counts[c]}</td>" for c in TOTAL_COLUMNS)
                     + "</tr>")
    titles = _summary_titles(report)
    parts.append("</table><h2>By family</h2><p>passing / declared cells</p><table><tr><th>family</th><th>ops</th>"
                 + "".join(f"<th>{esc(b)} {esc(t)}</th>" for b in report["backends"] for t in titles) + "</tr>")
    for name, f in family_summary(report):
        parts.append(f"<tr><td class='op'>{esc(name)}</td><td>{f['ops']}</td>" + "".join(
            f"<td>{x}</td>" for b in report["backends"] for x in _summary_fractions(report, f, b)) + "</tr>")
    parts.append("</table><p class='legend'>" + "".join(
        f"<span class='{_css_class(s)}'>{SYMBOL[s]} {esc(WORDS[s])}</span>" for s in SYMBOL)
        + "<span>blank: not declared</span></p>")
    parts.append("<p><input id='filter' type='search' placeholder='filter ops by name or family' "
                 "oninput='kilnFilter(this.value)'></p>")
    for backend in report["backends"]:
        if not _has_cells(report, backend):
            parts.append(f"<h2>{esc(backend)}</h2><p>No op declares this backend yet.</p>")
            continue
        grads = _grad_dtypes(report)
        parts.append(f"<h2>{esc(backend)}</h2><table><tr><th>op</th><th>family</th>"
                     "<th title='cast policy under autocast (ops/*.yaml autocast:)'>autocast</th>"
                     + "".join(f"<th title='{d}'>{SHORT[d]}</th>" for d in report["dtypes"])
                     + "".join(f"<th title=\"{esc(GRAD_TITLE.get(d, d), quote=True)}\">{esc(_grad_column(d))}</th>"
                               for d in grads) + "</tr>")
        for op in report["ops"]:
            cells = op["forward"].get(backend, {})
            key = esc(f"{op['name']} {op['family'] or ''}".lower(), quote=True)
            parts.append(f"<tr data-op='{key}'><td class='op' title='{esc(op['doc'] or '', quote=True)}'>{esc(op['name'])}</td>"
                         f"<td class='fam'>{esc(op['family'] or '')}</td>"
                         f"<td class='fam'>{esc(autocast_policy(op, backend))}</td>"
                         + "".join(_cell_html(cells.get(d)) for d in report["dtypes"])
                         + "".join(_cell_html((op["backward"].get(backend) or {}).get(d)) for d in grads)
                         + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
