#!/usr/bin/env python3
"""check-layers.py [ROOT] — report/'s layers point one way (docs/architecture.md,
"Repository layout"): model/ reads the database, analysis/ computes views from
the model, render/ writes views, cmd/ and run/ parse a verb's options and call
the three. From the sources:

  - a file includes headers of its own layer or of layers below it only
    (model < analysis < render < cmd, run; docgen/ builds the docs from cmd/);
  - SQLite (sqlite3_*, <sqlite3.h>, the store's reader.h) only in model/;
  - analysis/ prints nothing (no fprintf, printf, fputs, fputc, puts) and
    includes none of render/'s formatting (out.h, escape.h, json.h);
  - render/ includes of analysis/ only its view types (VIEW_HEADERS), not
    the steps that compute them.

Prints each finding as FILE:LINE: problem; exit 1 if there is one."""
import os
import re
import sys

LAYERS = {"model": 0, "analysis": 1, "render": 2, "cmd": 3, "run": 3, "docgen": 4}
VIEW_HEADERS = {"views.h", "dossier.h", "heaps.h", "moment.h", "analysis.h", "diagnosis.h", "export_views.h", "html_view.h"}
PRINTS = re.compile(r"\b(fprintf|printf|fputs|fputc|puts|vfprintf)\s*\(")
SQL = re.compile(r"\bsqlite3_\w+|<sqlite3\.h>|\"reader\.h\"")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def strip_comments(text):
    """The text with comments and string literals blanked (line numbers kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text[i] == '"' and re.search(r"#\s*include\s*$", text[text.rfind("\n", 0, i) + 1:i]):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j])  # an include's name stays
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j]) + '"')
            i = j + 1 if j < n and text[j] == '"' else j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    report = os.path.join(root, "report")
    where = {}  # header name -> its layer folder
    files = []
    for layer in LAYERS:
        d = os.path.join(report, layer)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith((".c", ".h")):
                files.append((layer, f))
                if f.endswith(".h"):
                    where[f] = layer
    bad = 0

    def say(rel, line, msg):
        nonlocal bad
        print(f"check-layers: report/{rel}:{line}: {msg}")
        bad = 1

    for layer, f in files:
        rel = f"{layer}/{f}"
        with open(os.path.join(report, layer, f), encoding="utf-8") as fh:
            text = strip_comments(fh.read())
        for no, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            inc = m.group(1) if m else None
            hl = where.get(inc) if inc else None
            if hl and LAYERS[hl] > LAYERS[layer]:
                say(rel, no, f"includes {hl}/{inc}: {layer}/ must not reach up to {hl}/")
            if layer != "model" and SQL.search(line):
                say(rel, no, "SQLite outside report/model/ (the model loads everything a verb needs)")
            if layer == "analysis":
                if PRINTS.search(line):
                    say(rel, no, "analysis/ prints: return the value, let render/ (or the verb) write it")
                if hl == "render":
                    say(rel, no, f"analysis/ includes render/{inc}: formatting belongs to render/")
            if layer == "render" and hl == "analysis" and inc not in VIEW_HEADERS:
                say(rel, no, f"render/ includes analysis/{inc}: only the view types ({', '.join(sorted(VIEW_HEADERS))})")
    return bad


if __name__ == "__main__":
    sys.exit(main())
