"""Drives an HTML report in headless Chromium through Selenium (from PyPI,
pinned in scripts/python-requirements.txt) and Debian's chromium-driver,
and prints, as JSON, what the page shows after each step. Runs under the
test venv's python (build/pyenv), not the python3 that runs the suite.

  build/pyenv/bin/python tests/html_driver.py CHROMIUM CHROMEDRIVER PAGE.html STEPS.json

STEPS: a list of {"op": ...}: "state"; "wheel" (section, frac: where
across the plot, dy); "key" (section, key); "drag" (section, dx);
"click_row" (section, gap: the gap's row index); "click_gap" (section,
gap: clicks the gap where the timeline draws it); "click_flame" (section,
frame: the flame graph's frame, by its index in the page, clicked in its
middle). Each step's result is the page's state: per timeline its window
(data-from-ns, data-to-ns and the text shown), the selected gap, the
highlighted rows, the info line, the lanes and every item the last frame
drew; per flame graph the line under it and the frame selected; whether
anything the trace holds ran as script; the page's errors (uncaught
exceptions and console errors) and every request that was not for a
file: URL, both from chromedriver's logs."""
import json
import os
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

WIDTH, HEIGHT = 1280, 900

STATE_JS = r"""
const out = {pwned: window.__pwned || null, scripts: document.scripts.length,
             imgs: document.images.length, highlighted: [], timelines: {}};
document.querySelectorAll("tr.gt-hl").forEach((r) => {
  const b = r.getBoundingClientRect();
  out.highlighted.push(r.id);
  out.highlighted_in_view = b.top >= 0 && b.bottom <= window.innerHeight;
});
out.flames = {};
document.querySelectorAll("div[id^='flame-']").forEach((d) => {
  const s = d.id.slice(6), frames = Array.from(d.querySelectorAll("svg.fl"));
  out.flames[s] = {says: document.getElementById("flame-" + s + "-says").textContent,
                   on: frames.findIndex((f) => f.classList.contains("on")), frames: frames.length};
});
const tls = window.gputraceTimelines || {};
for (const s of Object.keys(tls)) {
  const t = tls[s], root = t.root;
  out.timelines[s] = {
    from: Number(root.getAttribute("data-from-ns")), to: Number(root.getAttribute("data-to-ns")),
    window_text: root.querySelector(".gt-tl-win").textContent,
    selected: Number(root.getAttribute("data-selected-gap")),
    info: root.querySelector(".gt-tl-info").textContent,
    legend: root.querySelector(".gt-tl-legend").textContent,
    notes: Array.from(root.querySelectorAll(".gt-tl-note")).map((p) => p.textContent),
    lanes: t.lanes.map((l) => ({label: l.label, kind: l.kind, items: l.items.length, total: l.total, q: l.q})),
    drawn: t.drawn.map((d) => [d.lane, d.name, d.s, d.e, d.n, d.level, d.gap, d.fill]),
    timeline_in_view: (() => { const b = t.canvas.getBoundingClientRect();
                               return b.top < window.innerHeight && b.bottom > 0; })(),
    span: t.span,
  };
}
out.scroll_y = window.scrollY;
return out;
"""

# The viewport point of a time (or of a fraction across the window) on a
# timeline, on its gaps lane of a device when one is named.
POINT_JS = r"""
const [section, frac, t, laneOf] = arguments;
const tl = window.gputraceTimelines[section];
const r = tl.canvas.getBoundingClientRect();
const x = t !== null ? tl.xOf(t) : tl.xOf(tl.from + frac * (tl.to - tl.from));
let y = tl.height / 2;
if (laneOf !== null) {
  const lane = tl.lanes.find((l) => l.kind === "gaps" && l.dev === laneOf);
  y = lane.y + lane.h / 2;
}
return [r.left + x, r.top + y];
"""

FLAME_POINT_JS = r"""
const f = document.querySelectorAll("#flame-" + arguments[0] + " svg.fl")[arguments[1]];
f.scrollIntoView({block: "center"});
const b = f.getBoundingClientRect();
return [b.left + b.width / 2, b.top + b.height / 2];
"""

KEYS = {"ArrowLeft": Keys.ARROW_LEFT, "ArrowRight": Keys.ARROW_RIGHT, "ArrowUp": Keys.ARROW_UP,
        "ArrowDown": Keys.ARROW_DOWN}


def launch(chromium, chromedriver):
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=%d,%d" % (WIDTH, HEIGHT)):
        opts.add_argument(a)
    # browser: uncaught exceptions and console errors; performance: the
    # DevTools network events, for every request the page makes
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    # the driver named here, so Selenium Manager never looks for one online
    drv = webdriver.Chrome(options=opts, service=Service(executable_path=chromedriver))
    drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                        {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    return drv


class Logs:
    """The page's errors and its requests for anything but file: URLs, so
    far (chromedriver hands each log entry out once)."""

    def __init__(self, drv):
        self.drv, self.errors, self.requests = drv, [], []

    def drain(self):
        for e in self.drv.get_log("browser"):
            if e.get("level") == "SEVERE":
                self.errors.append(e.get("message", ""))
        for e in self.drv.get_log("performance"):
            msg = json.loads(e["message"])["message"]
            if msg.get("method") == "Network.requestWillBeSent":
                url = msg["params"]["request"]["url"]
                if not url.startswith("file:"):
                    self.requests.append(url)


def actions(drv):
    # no pause between pointer moves (Selenium's default is 250 ms each)
    return ActionBuilder(drv, duration=0)


def move_click(drv, x, y):
    a = actions(drv)
    a.pointer_action.move_to_location(round(x), round(y)).click()
    a.perform()


def step(drv, st):
    s = str(st.get("section", 0))
    op = st["op"]
    if op == "wheel":
        x, y = drv.execute_script(POINT_JS, s, st["frac"], None, None)
        a = actions(drv)
        a.pointer_action.move_to_location(round(x), round(y))
        a.perform()
        ActionChains(drv, duration=0).scroll_from_origin(
            ScrollOrigin.from_viewport(round(x), round(y)), 0, st["dy"]).perform()
    elif op == "key":
        el = drv.find_element(By.CSS_SELECTOR, 'div.gt-tl[data-section="%s"]' % s)
        drv.execute_script("arguments[0].focus()", el)
        ActionChains(drv, duration=0).send_keys(KEYS.get(st["key"], st["key"])).perform()
    elif op == "drag":
        x, y = drv.execute_script(POINT_JS, s, 0.5, None, None)
        a = actions(drv)
        a.pointer_action.move_to_location(round(x), round(y)).pointer_down()
        for i in range(1, 6):
            a.pointer_action.move_to_location(round(x + st["dx"] * i / 5), round(y))
        a.pointer_action.pointer_up()
        a.perform()
    elif op == "click_row":
        drv.find_element(By.CSS_SELECTOR, "#gap-%s-%d td" % (s, st["gap"])).click()
    elif op == "click_gap":
        g = drv.execute_script("return window.gputraceTimelines[arguments[0]].gaps[arguments[1]]", s, st["gap"])
        drv.execute_script("window.scrollTo(0, 0)")
        x, y = drv.execute_script(POINT_JS, s, 0, (g["s"] + g["e"]) / 2, g["dev"])
        move_click(drv, x, y)
    elif op == "click_flame":
        x, y = drv.execute_script(FLAME_POINT_JS, s, st["frame"])
        move_click(drv, x, y)
    elif op != "state":
        raise ValueError("unknown step %r" % op)


def main():
    chromium, chromedriver, page_path, steps_path = sys.argv[1:5]
    with open(steps_path) as f:
        steps = json.load(f)
    drv = launch(chromium, chromedriver)
    results = []
    try:
        logs = Logs(drv)
        drv.get("file://" + os.path.abspath(page_path))
        for st in steps:
            step(drv, st)
            time.sleep(0.03)
            res = drv.execute_script(STATE_JS)
            logs.drain()
            res["op"] = st["op"]
            res["errors"] = list(logs.errors)
            res["requests"] = list(logs.requests)
            results.append(res)
    finally:
        drv.quit()
    sys.stdout.write(json.dumps(results))


if __name__ == "__main__":
    main()
