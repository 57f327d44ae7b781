#!/usr/bin/env python3
"""bench_html.py — size and load time of the HTML report for generated runs
(bench_gen_db: a training-like pattern over 300 stacks) in headless
Chromium. Prints a Markdown table for docs/html-report.md.

    bench/bench_html.py [--build build] [--events 1000000,10000000] [--keep DIR]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "browser"))
import cdp  # noqa: E402


def timed(argv):
    t = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--events", default="1000000,10000000")
    ap.add_argument("--keep", help="keep the databases and pages in this directory")
    a = ap.parse_args()
    gl = os.path.join(a.build, "report", "gpuledger")
    gen = os.path.join(a.build, "bench", "bench_gen_db")
    work = a.keep or tempfile.mkdtemp(prefix="gl-bench-html-")
    os.makedirs(work, exist_ok=True)
    print("| events | database | `report --format html` | page size | interactive (in the page) | with the browser's start |")
    print("|---|---|---|---|---|---|")
    for n in [int(x) for x in a.events.split(",")]:
        db = os.path.join(work, "run-%d.db" % n)
        html = os.path.join(work, "run-%d.html" % n)
        if not os.path.exists(db):
            timed([gen, "--events", str(n), "--out", db, "--write-only"])
        t_html = timed([gl, "report", "--format", "html", "-o", html, db])
        with cdp.Browser() as b:
            t0 = time.monotonic()
            page = b.open("file://" + os.path.abspath(html))
            page.wait_for("document.body && document.body.dataset.ready === '1'", timeout=120)
            wall = time.monotonic() - t0
            ms = int(page.eval("document.body.dataset.readyMs"))
            errs = page.errors()
        print("| %s | %.0f MiB | %.1f s | %.1f MB | %.2f s | %.2f s |%s" % (
            "{:,}".format(n), os.path.getsize(db) / 1048576, t_html, os.path.getsize(html) / 1e6, ms / 1000.0,
            wall, " console errors: %s" % errs if errs else ""))
        sys.stdout.flush()
        if not a.keep:
            os.unlink(db)
            os.unlink(html)
    if not a.keep:
        os.rmdir(work)


if __name__ == "__main__":
    main()
