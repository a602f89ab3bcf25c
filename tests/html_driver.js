// Drives an HTML report in headless Chromium (puppeteer-core, tests/package.json)
// and prints, as JSON, what the page shows after each step.
//
//   node tests/html_driver.js CHROMIUM PAGE.html STEPS.json
//
// STEPS: a list of {"op": ...}: "state"; "wheel" (section, frac: where
// across the plot, dy); "key" (section, key); "drag" (section, dx);
// "click_row" (section, gap: the gap's row index); "click_gap" (section,
// gap: clicks the gap where the timeline draws it); "click_flame" (section,
// frame: the flame graph's frame, by its index in the page, clicked in
// its middle); "screenshot" (path, width, height). Each step's result is
// the page's state: per timeline its window (data-from-ns, data-to-ns and
// the text shown), the selected gap, the highlighted rows, the info line,
// the lanes and every item the last frame drew; per flame graph the line
// under it and the frame selected; and whether anything the trace holds
// ran as script.
"use strict";
const path = require("path");
const puppeteer = require(path.join(__dirname, "node_modules", "puppeteer-core"));

async function state(page) {
  return page.evaluate(() => {
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
    return out;
  });
}

async function canvasPoint(page, section, frac, t, laneOf) {
  return page.evaluate((section, frac, t, laneOf) => {
    const tl = window.gputraceTimelines[section];
    const r = tl.canvas.getBoundingClientRect();
    let x;
    if (t !== null) x = tl.xOf(t);
    else x = tl.xOf(tl.from + frac * (tl.to - tl.from));
    let y = tl.height / 2;
    if (laneOf !== null) {
      const lane = tl.lanes.find((l) => l.kind === "gaps" && l.dev === laneOf);
      y = lane.y + lane.h / 2;
    }
    return {x: r.left + x, y: r.top + y};
  }, section, frac, t, laneOf);
}

async function main() {
  const [chromium, page_path, steps_path] = process.argv.slice(2);
  const steps = JSON.parse(require("fs").readFileSync(steps_path, "utf8"));
  const browser = await puppeteer.launch({
    executablePath: chromium, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const results = [];
  try {
    const page = await browser.newPage();
    await page.setViewport({width: 1280, height: 900});
    const errors = [], requests = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
    await page.goto("file://" + path.resolve(page_path), {waitUntil: "load"});
    for (const st of steps) {
      const s = String(st.section || 0);
      if (st.op === "wheel") {
        const p = await canvasPoint(page, s, st.frac, null, null);
        await page.mouse.move(p.x, p.y);
        await page.mouse.wheel({deltaY: st.dy});
      } else if (st.op === "key") {
        await page.focus("div.gt-tl[data-section=\"" + s + "\"]");
        await page.keyboard.press(st.key);
      } else if (st.op === "drag") {
        const p = await canvasPoint(page, s, 0.5, null, null);
        await page.mouse.move(p.x, p.y);
        await page.mouse.down();
        for (let i = 1; i <= 5; i++) await page.mouse.move(p.x + st.dx * i / 5, p.y);
        await page.mouse.up();
      } else if (st.op === "click_row") {
        await page.click("#gap-" + s + "-" + st.gap + " td");
      } else if (st.op === "click_gap") {
        const g = await page.evaluate((s, i) => window.gputraceTimelines[s].gaps[i], s, st.gap);
        await page.evaluate(() => window.scrollTo(0, 0));
        const p = await canvasPoint(page, s, 0, (g.s + g.e) / 2, g.dev);
        await page.mouse.click(p.x, p.y);
      } else if (st.op === "click_flame") {
        const p = await page.evaluate((s, i) => {
          const f = document.querySelectorAll("#flame-" + s + " svg.fl")[i];
          f.scrollIntoView({block: "center"});
          const b = f.getBoundingClientRect();
          return {x: b.left + b.width / 2, y: b.top + b.height / 2};
        }, s, st.frame);
        await page.mouse.click(p.x, p.y);
      } else if (st.op === "screenshot") {
        await page.setViewport({width: st.width || 1280, height: st.height || 900});
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({path: st.path});
      }
      await new Promise((r) => setTimeout(r, 30));
      const res = await state(page);
      res.op = st.op;
      res.errors = errors.slice();
      res.requests = requests.slice();
      res.scroll_y = await page.evaluate(() => window.scrollY);
      results.push(res);
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(results));
}

main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
