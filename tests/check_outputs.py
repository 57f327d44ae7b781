#!/usr/bin/env python3
"""check_outputs.py — checks that an output of gpuledger opens in the tool it
is made for, whatever bytes the database held (test_hardening runs it):

  json FILE [TEXT...]    the bytes decode as UTF-8 (strict) and parse as JSON;
                         each TEXT is part of some string in it
  csv FILE ROWS          UTF-8; ROWS records after the header, one per line;
                         no text cell starts with = + - @ TAB or CR
  folded FILE LINES [N]  UTF-8; LINES lines, each "FRAME;FRAME;... BYTES" (with
                         N frames: a ';' in a name is not a separator)
  text FILE              UTF-8 with no control character but newline, no C1
                         control, no line separator, no bidi override

Prints one line saying what is wrong and exits 1, or exits 0.
"""
import csv
import io
import json
import re
import sys

BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}


def fail(msg):
    print(msg)
    sys.exit(1)


def utf8(path):
    data = open(path, "rb").read()
    try:
        return data.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        fail(f"{path}: not UTF-8: {e}")


def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)


def check_json(path, want):
    try:
        doc = json.loads(utf8(path))
    except ValueError as e:
        fail(f"{path}: not JSON: {e}")
    have = list(strings(doc))
    for w in want:
        if not any(w in s for s in have):
            fail(f"{path}: no string holds {w!r}")


def check_csv(path, rows):
    text = utf8(path)
    records = list(csv.reader(io.StringIO(text, newline="")))
    if len(records) != rows + 1:
        fail(f"{path}: {len(records) - 1} records, want {rows}")
    if text.count("\n") != rows + 1:
        fail(f"{path}: {text.count(chr(10))} lines for {rows + 1} records: a cell holds a newline")
    number = re.compile(r"^(-?[0-9]+|0x[0-9a-f]+)$")
    for i, rec in enumerate(records[1:], 2):
        for cell in rec:
            if cell and not number.match(cell) and cell[0] in "=+-@\t\r":
                fail(f"{path}:{i}: a cell starts with {cell[0]!r}: {cell!r}")


def check_folded(path, lines, frames):
    got = utf8(path).split("\n")
    if got[-1] != "":
        fail(f"{path}: no newline at the end")
    got = got[:-1]
    if len(got) != lines:
        fail(f"{path}: {len(got)} lines, want {lines}")
    for i, line in enumerate(got, 1):
        if not re.match(r"^[^ ]+ [0-9]+$", line):
            fail(f"{path}:{i}: not 'FRAMES BYTES': {line!r}")
        if frames is not None and line.count(";") + 1 != frames:
            fail(f"{path}:{i}: {line.count(';') + 1} frames, want {frames}: {line!r}")


def check_text(path):
    for i, line in enumerate(utf8(path).split("\n"), 1):
        for c in line:
            o = ord(c)
            if o < 0x20 or o == 0x7F or 0x80 <= o < 0xA0 or o in (0x2028, 0x2029) or o in BIDI:
                fail(f"{path}:{i}: raw U+{o:04X} in {line!r}")


def main(argv):
    if len(argv) < 3:
        fail(__doc__)
    mode, path = argv[1], argv[2]
    if mode == "json":
        check_json(path, argv[3:])
    elif mode == "csv":
        check_csv(path, int(argv[3]))
    elif mode == "folded":
        check_folded(path, int(argv[3]), int(argv[4]) if len(argv) > 4 else None)
    elif mode == "text":
        check_text(path)
    else:
        fail(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv)
