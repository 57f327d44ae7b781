#!/usr/bin/env python3
"""test_report_html.py — the interactive HTML report in a real browser
(headless Chromium driven over the DevTools protocol, cdp.py).

For the demo run, a generated 1-million-event run and a run with hostile
strings: the page opens from disk with no console error and nothing
fetched; a click on the timeline selects a moment whose ledger (every row:
bytes, count, category, frames) equals `gpuledger report --at '#N' --format
json` for that event (and the database's own answer); the OOM's ledger
equals the report's; a page made with --at opens at that moment; a drag
shows what changed in the window; a click on the flame graph zooms into
that frame; rows whose stacks share their innermost frames read apart
(exact labels, as the text report's chains); hostile strings stay text; a
run of one event and one allocation says so in the singular; a recording
that did not finish says so. Screenshots,
the pages and their load times go to BUILD/tests/browser-artifacts/.

    test_report_html.py BUILD_DIR
Exit 0 pass, 1 fail, 77 skip (no chromium; CI installs it).
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
GL = os.path.join(BUILD, "report", "gpuledger")
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ART = os.path.join(BUILD, "tests", "browser-artifacts")
LOAD_LIMIT_S = 5.0
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def run(*argv, **kw):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), r.returncode, r.stderr.strip()))
    return r.stdout


def report_json(db, *extra):
    return json.loads(run(GL, "report", "--format", "json", "--top", "1000000", *extra, db))


def frame_key(symbol, module, offset):
    """A frame as the page names it: its symbol, else module+0xoffset."""
    return symbol or "%s+0x%x" % (os.path.basename(module) if module else "?", offset or 0)


def json_rows(ledger):
    """A JSON ledger as comparable rows."""
    return sorted((g["bytes"], g["count"], g["category"],
                   tuple(frame_key(f["symbol"], f["module"], f["offset"]) for f in g["frames"])) for g in ledger)


DOM_ROWS = """(() => {
  const more = document.querySelector('#ledger tr.more button');
  if (more) more.click();
  return [...document.querySelectorAll('#ledger tr.lrow')].map((tr) => {
    const li = [...tr.querySelectorAll('li')].sort((a, b) => a.value - b.value);
    return [Number(tr.dataset.bytes), Number(tr.dataset.count), tr.dataset.cat, li.map((x) => x.dataset.sym || x.dataset.name)];
  });
})()"""


def dom_rows(page):
    return sorted((b, c, cat, tuple(syms[:64])) for b, c, cat, syms in page.eval(DOM_ROWS))


def selected(page):
    return page.eval("(() => { const s = document.getElementById('sel-event'); "
                     "return s ? [Number(s.dataset.seq), s.dataset.to ? Number(s.dataset.to) : null] : null; })()")


def rect(page, selector):
    """Where an element is in the viewport, after scrolling it into view
    (a click outside the viewport reaches nothing)."""
    return page.eval("(() => { const e = document.querySelector(%s); e.scrollIntoView({block: 'nearest'}); "
                     "const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()"
                     % json.dumps(selector))


def open_report(browser, html, name):
    t0 = time.monotonic()
    page = browser.open("file://" + html)
    page.url = "file://" + html
    page.wait_for("document.body && document.body.dataset.ready === '1'", timeout=60)
    wall = time.monotonic() - t0
    ms = int(page.eval("document.body.dataset.readyMs"))
    check(ms / 1000.0 <= LOAD_LIMIT_S, "%s: interactive after %d ms (limit %.0f s)" % (name, ms, LOAD_LIMIT_S))
    print("%s: %d bytes, interactive %d ms after the page started (%.2f s with the browser's start)"
          % (name, os.path.getsize(html), ms, wall))
    return page, ms


def no_errors(page, name):
    page.b.pump(0.2)
    errs = page.errors()
    check(not errs, "%s: console errors: %s" % (name, errs))
    asked = [u for u in page.requests() if u != page.url]
    check(not asked, "%s: the page fetched %s" % (name, asked[:3]))


def click_moment(page, frac):
    """Click the timeline's plot at a fraction of its width; the event selected."""
    x, y, w, h = rect(page, "#timeline")
    px = x + 74 + (w - 74 - 12) * frac
    page.click(px, y + 22 + 120)
    return selected(page)


# the kinds counted toward device memory in a version-1 database (no
# kind_names.layer yet)
COUNTED_V1 = ("device", "async", "managed", "physical", "static")


def counted_kinds(con):
    """The kinds whose bytes count toward what CUDA holds, from the
    database's own vocabulary (kind_names.layer, schema 2)."""
    cols = [r[1] for r in con.execute("PRAGMA table_info(kind_names)")]
    if "layer" not in cols:
        return COUNTED_V1
    return tuple(r[0] for r in con.execute("SELECT name FROM kind_names WHERE layer = 'device'"))


def sql_ledger(db, seq, device=0):
    """What was live on the device right after event seq, from the SQL
    contract alone: rows of (bytes, count, frame symbols), grouped by the
    chain of frame names as the report merges stacks."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    kinds = counted_kinds(con)
    frames = {}
    for sid, sym, mod, off in con.execute("SELECT stack_id, symbol, module, offset FROM stack_frames "
                                          "ORDER BY stack_id, depth"):
        frames.setdefault(sid, []).append(frame_key(sym, mod, off))
    rows = {}
    for sid, size in con.execute("SELECT stack_id, size FROM allocations WHERE id <= ? AND (free_seq IS NULL OR "
                                 "free_seq > ?) AND device = ? AND kind IN (%s)" % ",".join("?" * len(kinds)),
                                 (seq, seq, device) + kinds):
        key = tuple(frames.get(sid, []))
        b, c = rows.get(key, (0, 0))
        rows[key] = (b + size, c + 1)
    con.close()
    return sorted((b, c, k) for k, (b, c) in rows.items())


def compare_at(page, db, seq, name, sql=True):
    """The ledger the page shows equals `report --at '#seq' --format json`
    (every row: bytes, count, category, frames), and (sql) the database's
    own CUDA memory."""
    want = json_rows(report_json(db, "--at", "#%d" % seq)["processes"][0]["devices"][0]["at"]["ledger"])
    got = dom_rows(page)
    if check(got == want, "%s: ledger at event #%d: page shows %d rows, report --at %d rows; first differences %s" % (
            name, seq, len(got), len(want),
            [x for x in got if x not in want][:2] + [x for x in want if x not in got][:2])):
        print("%s: ledger at event #%d: %d rows equal to report --at '#%d' --format json" % (name, seq, len(got), seq))
    if sql:
        check(sorted((b, c, syms) for b, c, _, syms in got) == sql_ledger(db, seq),
              "%s: ledger at event #%d equals the database's" % (name, seq))


def zoom_flame(page, name):
    x, y, w, h = rect(page, "#flame")
    page.click(x + 12, y + 18 + 9)  # the first frame under the root
    frame = page.eval("document.getElementById('flame-zoom').dataset.frame")
    check(bool(frame), "%s: clicking the flame graph zoomed into a frame" % name)
    text = page.eval("document.getElementById('flame-zoom').textContent")
    check(text.startswith("zoomed into " + (frame or "?")), "%s: flame says %r" % (name, text))
    page.click(x + 12, y + 9)  # the root bar: zoom back out
    check(page.eval("document.getElementById('flame-zoom').dataset.frame") == "", "%s: zoomed back out" % name)
    return frame


def demo_checks(browser, db, html):
    page, ms = open_report(browser, html, "demo")
    no_errors(page, "demo")
    page.screenshot(os.path.join(ART, "demo-report.png"))
    rep = report_json(db)["processes"][0]["devices"][0]
    # the page opens at the peak: its ledger is the report's peak ledger
    check(selected(page) == [rep["peak"]["seq"], None], "demo: opens at the peak (%s)" % selected(page))
    check(dom_rows(page) == json_rows(rep["peak"]["ledger"]), "demo: peak ledger equals report's")
    # what no allocation API shows, as the text report has it
    out = rep.get("outside_api")
    heading = page.eval("document.querySelector('h2').textContent")
    check(out is not None and "outside any allocation API" in heading and
          run(GL, "report", db).count("\n  outside any allocation API: ") == 1,
          "demo: the remainder in the heading (%r)" % heading)
    # with the sample's distance from the peak, as the text report says it
    line = next(t for t in run(GL, "report", db).splitlines() if t.startswith("  outside any allocation API: "))
    near = re.search(r" at the peak( \(sampled [^)]*\))?,", line)
    check(near is not None and (" at the peak%s and " % (near.group(1) or "")) in heading,
          "demo: the peak sample's distance in the heading (%r, text: %r)" % (heading, line))
    # a click somewhere on the timeline
    for frac in (0.5, 0.999):
        seq, _ = click_moment(page, frac)
        compare_at(page, db, seq, "demo")
    # the OOM's button selects the moment before the failure
    bx, by, bw, bh = rect(page, "#ooms button")
    page.click(bx + bw / 2, by + bh / 2)
    oom = rep["oom"][0]
    check(selected(page) == [oom["seq"], None], "demo: OOM button selects event #%d" % oom["seq"])
    check(dom_rows(page) == json_rows(oom["ledger"]), "demo: OOM ledger equals report's")
    compare_at(page, db, oom["seq"], "demo (oom)")
    # a drag: what changed across a window
    x, y, w, h = rect(page, "#timeline")
    page.drag(x + 80, y + 140, x + w - 20, y + 140)
    sel = selected(page)
    check(sel and sel[1] is not None and sel[1] > sel[0], "demo: a drag selects a window (%s)" % sel)
    check("What changed" in page.eval("document.querySelector('#ledger h3').textContent"), "demo: window heading")
    page.screenshot(os.path.join(ART, "demo-window.png"))
    click_moment(page, 0.999)
    frame = zoom_flame(page, "demo")
    page.click(rect(page, "#flame")[0] + 12, rect(page, "#flame")[1] + 27)
    page.screenshot(os.path.join(ART, "demo-flame-zoomed.png"))
    no_errors(page, "demo")
    print("demo: flame graph zoomed into %r" % frame)
    # a page made with --at opens at that moment
    at_html = os.path.join(ART, "demo-at-oom.html")
    run(GL, "report", "--format", "html", "--at", "oom", "-o", at_html, db)
    page, _ = open_report(browser, at_html, "demo --at oom")
    check(selected(page) == [oom["seq"], None], "demo --at oom: opens at event #%d (%s)" % (oom["seq"], selected(page)))
    compare_at(page, db, oom["seq"], "demo --at oom")
    no_errors(page, "demo --at oom")
    return ms


def big_checks(browser, db, html, name):
    page, ms = open_report(browser, html, name)
    no_errors(page, name)
    seq, _ = click_moment(page, 0.37)
    compare_at(page, db, seq, name)
    zoom_flame(page, name)
    page.screenshot(os.path.join(ART, name + "-report.png"))
    no_errors(page, name)
    return ms


def torch_checks(browser, db, html):
    """A --torch blocks run (tests/golden/db/torch-train.db): the ledger
    has the tensors by stack and category (tags, lifetimes) and the caching
    allocator's free blocks as a row of their own, as the report's."""
    page, _ = open_report(browser, html, "torch-train")
    no_errors(page, "torch-train")
    rep = report_json(db)["processes"][0]["devices"][0]
    check(selected(page) == [rep["peak"]["seq"], None], "torch-train: opens at the peak (%s)" % selected(page))
    check(dom_rows(page) == json_rows(rep["peak"]["ledger"]), "torch-train: peak ledger equals report's: %s, want %s"
          % (dom_rows(page), json_rows(rep["peak"]["ledger"])))
    seen = set()
    for frac in (0.2, 0.45, 0.7, 0.999):
        seq, _ = click_moment(page, frac)
        compare_at(page, db, seq, "torch-train", sql=False)
        seen.update(r[2] for r in dom_rows(page))
    check({"allocator_cache", "parameters", "gradients", "optimizer_state"} <= seen,
          "torch-train: categories by identity and the allocator's cache seen (%s)" % sorted(seen))
    label = "[free blocks cached in the caching allocator's segments]"
    check(label in labels(page, "#ledger tr.lrow details.stack > summary"), "torch-train: the cache row says %r" % label)
    zoom_flame(page, "torch-train")
    page.screenshot(os.path.join(ART, "torch-train-report.png"))
    no_errors(page, "torch-train")


SUMMARIES = """[...document.querySelectorAll(%s)].map((s) => s.textContent)"""


def labels(page, selector):
    return page.eval(SUMMARIES % json.dumps(selector))


def chain_checks(browser, pages):
    """Rows whose stacks begin with the same frames read apart: each label
    shows the frame where its stack differs from the others' (the text
    report's chains, with its arrows)."""
    page, _ = open_report(browser, pages["leaks3"], "leaks3")
    no_errors(page, "leaks3")
    # four stacks through leak_one: once they all read 'leak_one'
    want = ["leak_one \u2190 main \u2190 libc.so.6+0x2724a \u2190 __libc_start_main \u2190 \u2026",
            "leak_one \u2190 leak_b \u2190 main \u2190 libc.so.6+0x2724a \u2190 \u2026",
            "leak_one \u2190 leak_a \u2190 main \u2190 libc.so.6+0x2724a \u2190 \u2026",
            "leak_one \u2190 leak_c \u2190 main \u2190 libc.so.6+0x2724a \u2190 \u2026"]
    got = labels(page, "#ledger tr.lrow details.stack > summary")
    check(got == want, "leaks3: peak ledger labels %s, want %s" % (got, want))
    got = labels(page, "#leaks tr.lrow details.stack > summary")
    check(got == want[1:], "leaks3: leak labels %s, want %s" % (got, want[1:]))
    got = labels(page, "label.top")
    want_top = ["7.00 MiB other leak_one \u2190 main \u2190 libc.so.6+0x2724a \u2190 \u2026",
                "3.00 MiB other leak_one \u2190 leak_b \u2190 main \u2190 \u2026",
                "2.00 MiB other leak_one \u2190 leak_a \u2190 main \u2190 \u2026",
                "2.00 MiB other leak_one \u2190 leak_c \u2190 main \u2190 \u2026"]
    check(got == want_top, "leaks3: top stacks %s, want %s" % (got, want_top))
    # two stacks through the same five layers: the caller that differs is
    # shown after the first four frames
    page, _ = open_report(browser, pages["deep"], "deep")
    no_errors(page, "deep")
    want = ["layer5 \u2190 layer4 \u2190 layer3 \u2190 layer2 \u2190 \u2026 \u2190 from_loader \u2190 \u2026",
            "layer5 \u2190 layer4 \u2190 layer3 \u2190 layer2 \u2190 \u2026 \u2190 from_trainer \u2190 \u2026"]
    got = labels(page, "#ledger tr.lrow details.stack > summary")
    check(got == want, "deep: peak ledger labels %s, want %s" % (got, want))
    check(labels(page, "#leaks tr.lrow details.stack > summary") == want, "deep: leak labels")
    got = labels(page, "label.top")
    want_top = ["3.00 MiB other layer5 \u2190 layer4 \u2190 layer3 \u2190 \u2026 \u2190 from_loader \u2190 \u2026",
                "2.00 MiB other layer5 \u2190 layer4 \u2190 layer3 \u2190 \u2026 \u2190 from_trainer \u2190 \u2026"]
    check(got == want_top, "deep: top stacks %s, want %s" % (got, want_top))
    if not [f for f in failures if f.startswith(("leaks3", "deep"))]:
        print("leaks3, deep: every ledger, leak and top-stack label reads apart, as the text report's chains")


def hostile_checks(browser, db, html):
    page, _ = open_report(browser, html, "hostile")
    no_errors(page, "hostile")
    check(page.eval("document.querySelectorAll('img, iframe, object, embed').length") == 0,
          "hostile: no element made from the data")
    check(page.eval("typeof window.pwned") == "undefined", "hostile: no script from the data ran")
    check("<img src=x" in page.eval("document.querySelector('.run code').textContent"),
          "hostile: the command line is shown as text")
    check("</script>" in page.eval("JSON.stringify(GL.model.load().processes[0].marks)"), "hostile: label kept")


def singular_checks(browser, html):
    """A run with one event, one allocation, one stack: no "1 events"."""
    page, _ = open_report(browser, html, "one")
    no_errors(page, "one")
    text = page.eval("document.body.innerText")
    check(" 1 event over " in text, "one: '1 event over' in the heading (%r)" % text[:400])
    check(" in 1 allocation, 1 stack — the peak" in text, "one: 'in 1 allocation, 1 stack' at the peak")
    bad = re.findall(r"(?<![0-9.])1 (?:event|allocation|hole|stack|row|step|slice|mark|byte|region|frame)s\b", text)
    check(not bad, "one: plural after 1: %s" % bad)


def unfinished_checks(browser, html):
    """A recording killed before it finished (misc killed: 4 MiB live):
    the page says so, and calls what was live "live when the recording
    stopped", never "never freed"."""
    page, _ = open_report(browser, html, "killed")
    no_errors(page, "killed")
    text = page.eval("document.body.innerText")
    check("The recording did not finish (killed, disk full, or still running)" in text,
          "killed: the page says the recording did not finish (%r)" % text[:400])
    check("4.00 MiB live when the recording stopped" in text and "never freed" not in text,
          "killed: 'live when the recording stopped', no 'never freed'")


def make_hostile(src, dst):
    shutil.copy(src, dst)
    db = sqlite3.connect(dst)
    evil = "</script><img src=x onerror=\"window.pwned=1\"><script>window.pwned=1</script>"
    db.execute("UPDATE run SET cmdline = ?", (evil + " \u2028 \\ \" ' &amp;",))
    db.execute("UPDATE run SET hostname = CAST(? AS TEXT)", (b"host\xff\xfe<!--".decode("latin-1"),))
    db.execute("INSERT INTO annotations(seq, ts_ns, tid, op, label, parent_seq) "
               "SELECT 5, ts_ns, 1, 'mark', ?, NULL FROM event_log WHERE seq = 5", (evil,))
    db.commit()
    db.close()


def main():
    if not os.access(GL, os.X_OK):
        print("no %s: build first" % GL)
        return 1
    if not cdp.find_chromium() and not os.environ.get("GL_CHROMIUM"):
        print("SKIP: no chromium (Debian: apt-get install chromium; scripts/install-deps.sh does)")
        return 77
    os.makedirs(ART, exist_ok=True)
    work = tempfile.mkdtemp(prefix="gl-browser-")
    t0 = time.monotonic()
    try:
        demo = os.path.join(work, "demo.db")
        run(GL, "run", "-q", "-o", demo, "--", os.path.join(BUILD, "tests", "demo"), cwd=work)
        big = os.path.join(work, "run-1m.db")
        run(os.path.join(BUILD, "bench", "bench_gen_db"), "--events", "1000000", "--out", big, "--write-only")
        hostile = os.path.join(work, "hostile.db")
        make_hostile(demo, hostile)
        deep = os.path.join(work, "deep.db")
        run(GL, "run", "-q", "-o", deep, "--", os.path.join(BUILD, "tests", "misc"), "deep", cwd=work)
        leaks3 = os.path.join(SRC, "tests", "golden", "db", "leaks3.db")  # normalised: libc's offset is fixed
        torch = os.path.join(SRC, "tests", "golden", "db", "torch-train.db")
        one = os.path.join(work, "one.db")  # one cudaMalloc, then _exit(3)
        subprocess.run([GL, "run", "-q", "-o", one, "--", os.path.join(BUILD, "tests", "misc"), "_exit", "3"],
                       cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        killed = os.path.join(work, "killed.db")  # 4 MiB live, stored, then SIGKILL: unfinished
        subprocess.run([GL, "run", "-q", "-o", killed, "--", os.path.join(BUILD, "tests", "misc"), "killed"],
                       cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pages = {}
        for name, db in (("killed", killed), ("demo", demo), ("run-1m", big), ("hostile", hostile), ("leaks3", leaks3), ("deep", deep),
                         ("one", one), ("torch-train", torch)):
            t = time.monotonic()
            pages[name] = os.path.join(ART, name + ".html")
            run(GL, "report", "--format", "html", "-o", pages[name], db)
            print("%s: report --format html took %.2f s" % (name, time.monotonic() - t))
        with cdp.Browser() as browser:
            demo_checks(browser, demo, pages["demo"])
            big_checks(browser, big, pages["run-1m"], "run-1m")
            hostile_checks(browser, hostile, pages["hostile"])
            chain_checks(browser, pages)
            torch_checks(browser, torch, pages["torch-train"])
            singular_checks(browser, pages["one"])
            unfinished_checks(browser, pages["killed"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("browser test: %.1f s, %d failure(s); artifacts in %s" % (time.monotonic() - t0, len(failures), ART))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
