"""cdp.py — a small Chrome DevTools Protocol client over a pipe, Python
standard library only: starts headless Chromium with
--remote-debugging-pipe (commands on its fd 3, replies on its fd 4, each
message JSON ended by a NUL byte), opens one page and drives it.

    with Browser() as b:
        page = b.open("file:///tmp/report.html")
        page.wait_for("document.body.dataset.ready === '1'")
        page.click(100, 200)
        png = page.screenshot()
"""
import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
    "--remote-debugging-pipe",
]


class CDPError(Exception):
    pass


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, binary=None, timeout=30.0):
        self.binary = binary or os.environ.get("GL_CHROMIUM") or find_chromium()
        if not self.binary:
            raise CDPError("no chromium found (Debian: apt-get install chromium; or set GL_CHROMIUM)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="gl-chromium-")
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()
        cmd = [self.binary] + FLAGS + ["--user-data-dir=" + self.profile, "about:blank"]
        # the shell puts the two pipe ends at fds 3 and 4, then becomes chromium
        shell = 'exec "$@" 3<&%d 4>&%d' % (to_child_r, from_child_w)
        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")
        self.proc = subprocess.Popen(["sh", "-c", shell, "sh"] + cmd, pass_fds=(to_child_r, from_child_w),
                                     stdout=self.log, stderr=subprocess.STDOUT)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next = 1
        self.events = []  # every event received: {"method", "params", "sessionId"}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.send("Browser.close", timeout=5)
            except (CDPError, OSError):
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("no reply from chromium in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise CDPError("chromium closed the pipe (exit %s)" % self.proc.poll())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=None):
        """Send a command and wait for its reply; events meanwhile are kept."""
        mid = self._next
        self._next += 1
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            m = self._read_message(deadline)
            if m.get("id") == mid:
                if "error" in m:
                    raise CDPError("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def pump(self, seconds):
        """Collect events for a while."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read_message(deadline))
        except CDPError:
            pass

    def open(self, url, width=1400, height=1000):
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.call(domain + ".enable")
        page.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        page.call("Page.navigate", {"url": url})
        return page


class Page:
    def __init__(self, browser, session):
        self.b = browser
        self.session = session

    def call(self, method, params=None, timeout=None):
        return self.b.send(method, params, self.session, timeout)

    def eval(self, expression, timeout=None):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, timeout)
        if "exceptionDetails" in r:
            raise CDPError("evaluating %r: %s" % (expression[:80], r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def wait_for(self, expression, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.eval(expression):
                return
            time.sleep(0.05)
        raise CDPError("timed out waiting for %s" % expression)

    def errors(self):
        """Console errors, uncaught exceptions and error log entries so far."""
        out = []
        for e in self.b.events:
            if e.get("sessionId") != self.session:
                continue
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: %s %s" % (d.get("text"), d.get("exception", {}).get("description", "")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description")))
                                                                 for a in p.get("args", []))))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: %s %s" % (p["entry"].get("text"), p["entry"].get("url", "")))
        return out

    def requests(self):
        """Every URL the page asked for so far (itself included)."""
        return [e["params"]["request"]["url"] for e in self.b.events
                if e.get("sessionId") == self.session and e.get("method") == "Network.requestWillBeSent"]

    def requests_blocked(self):
        return [e for e in self.errors() if "Content Security Policy" in e]

    def mouse(self, kind, x, y, buttons=0, button="none", clicks=0):
        self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": button,
                                               "buttons": buttons, "clickCount": clicks})

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, 1, "left", 1)
        self.mouse("mouseReleased", x, y, 0, "left", 1)

    def drag(self, x0, y0, x1, y1, steps=8):
        self.mouse("mouseMoved", x0, y0)
        self.mouse("mousePressed", x0, y0, 1, "left", 1)
        for k in range(1, steps + 1):
            self.mouse("mouseMoved", x0 + (x1 - x0) * k / steps, y0 + (y1 - y0) * k / steps, 1, "left")
        self.mouse("mouseReleased", x1, y1, 0, "left", 1)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                         timeout=60)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
