/**
 * `magnt metrics --html <file>` (issue 22, 08 §5.4): one self-contained page,
 * checked in Debian's Chromium (through playwright-core, as the owner suites
 * do): the funnel and the per-day charts render as SVG, the counts are tables,
 * no console error, no request leaves the page's own file, and a screenshot
 * is taken in the run. Escaping is checked on the page's text helper. The
 * `--json` document next to `--html` is the one without it.
 */
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { escapeHtml } from "../../cli/commands/metrics/html";
import { CHROMIUM, CHROMIUM_ARGS } from "../helpers/chromium";
import { expectedMonolithSummary } from "../fixtures/metrics/scenario";
import { REPO_ROOT, runMagnt } from "./harness";

const fixture = (name: string) => join(REPO_ROOT, "test/fixtures/metrics", name);

describe("magnt metrics --html", () => {
  it("escapes every piece of text it writes", () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y'`)).toBe("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;");
  });

  it("writes a self-contained page next to an unchanged --json summary", async () => {
    const dir = mkdtempSync(join(tmpdir(), "magnt-metrics-html-"));
    const page = join(dir, "report.html");
    const result = await runMagnt(["metrics", fixture("monolith.ndjson"), "--html", page, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.lines).toHaveLength(1);
    expect(JSON.parse(result.lines[0]!)).toEqual(expectedMonolithSummary());
    expect(result.stderr).toBe(`wrote ${page}\n`);
    const html = readFileSync(page, "utf8");
    expect(html).not.toMatch(/<script|<link|<img|<iframe|src=|href=|url\(|@import/i);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
  });

  it("a page that cannot be written → exit 3 naming it", async () => {
    const result = await runMagnt(["metrics", fixture("monolith.ndjson"), "--html", join(tmpdir(), "no-such-dir-magnt", "x.html")]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/cannot write .*x\.html: ENOENT/);
  });

  it("renders in Chromium: funnel and daily charts, count tables, no console error, nothing fetched", async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: this test renders the page in Debian's chromium (apt-get install chromium; .ci/run installs it when absent)`);
    }
    const dir = mkdtempSync(join(tmpdir(), "magnt-metrics-html-"));
    const page = join(dir, "report.html");
    const result = await runMagnt(["metrics", fixture("gateway.ndjson"), fixture("core.json"), "--html", page]);
    expect(result.code, result.stderr).toBe(0);

    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    try {
      const tab = await browser.newPage({ viewport: { width: 1000, height: 800 } });
      const problems: string[] = [];
      const requests: string[] = [];
      tab.on("console", (message) => {
        if (message.type() === "error" || message.type() === "warning") problems.push(`${message.type()}: ${message.text()}`);
      });
      tab.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
      tab.on("request", (request) => requests.push(request.url()));
      const url = pathToFileURL(page).href;
      await tab.goto(url, { waitUntil: "load" });

      expect(await tab.title()).toBe("magnt metrics");
      const text = await tab.locator("body").innerText();
      for (const expected of ["Funnel", "tools/list requests", "contributions (signals accepted)", "Per day (UTC)", "valid searches — 8 in 2 days", "2026-05-01", "2026-05-02", "records read", "A2A protocol version"]) {
        expect(text).toContain(expected);
      }
      // The funnel: six bars, the widest the largest step (8), each titled with its count.
      const funnel = tab.locator('svg[aria-label="Funnel"] rect');
      expect(await funnel.count()).toBe(6);
      expect(await funnel.nth(1).locator("title").textContent()).toBe("valid searches: 8");
      const widths = await funnel.evaluateAll((rects) => rects.map((rect) => rect.getBoundingClientRect().width));
      expect(widths[1]).toBeGreaterThan(widths[0]!);
      expect(widths[1]).toBeCloseTo(widths[3]!, 0);
      // Five daily charts of two days each, drawn (a non-zero size on screen).
      const daily = tab.locator('svg[aria-label$="per day"]');
      expect(await daily.count()).toBe(5);
      const box = await daily.first().boundingBox();
      expect(box!.width).toBeGreaterThan(100);
      expect(await daily.first().locator("rect").count()).toBe(2);
      // Count tables: the inputs, the window, the days and every counter group.
      expect(await tab.locator("table").count()).toBe(13);
      expect(await tab.locator("table", { hasText: "records read" }).locator("tr", { hasText: "records read" }).locator("td.n").textContent()).toBe("99");

      const shot = join(dir, "report.png");
      await tab.screenshot({ path: shot, fullPage: true });
      const png = readFileSync(shot);
      expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
      expect(statSync(shot).size).toBeGreaterThan(10_000);

      expect(problems).toEqual([]);
      expect(requests).toEqual([url]);
    } finally {
      await browser.close();
    }
    // Chromium starts slowly on a loaded machine; the limit is room for that, not a speed claim.
  }, 150_000);
});
