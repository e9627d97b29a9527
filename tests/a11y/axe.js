// The accessibility run of the HTML report (tests/test_report.py): open each page given
// on the command line in headless Chromium (playwright-core, pointed at the system's
// Chromium by PCSC_CHROMIUM), run axe-core on it at WCAG 2.0/2.1 levels A and AA, and
// print one JSON object: per page, axe's version, the rules it ran, and every violation
// with the nodes it failed on. The exit code is 0 whatever axe finds: the test judges.
"use strict";
const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");
const { chromium } = require("playwright-core");

const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

async function main() {
  const pages = process.argv.slice(2);
  const executablePath = process.env.PCSC_CHROMIUM;
  if (!executablePath || pages.length === 0) {
    console.error("usage: PCSC_CHROMIUM=/path/to/chromium node axe.js PAGE.html ...");
    process.exit(2);
  }
  const axeSource = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  const browser = await chromium.launch({
    executablePath,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
  });
  const out = {};
  try {
    for (const file of pages) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true });
      const page = await context.newPage();
      await page.goto(pathToFileURL(path.resolve(file)).href, { waitUntil: "load" });
      await page.addScriptTag({ content: axeSource });
      out[file] = await page.evaluate(async (tags) => {
        const result = await window.axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
        return {
          axe: window.axe.version,
          rules: [...result.passes, ...result.violations, ...result.incomplete, ...result.inapplicable].map((r) => r.id).sort(),
          violations: result.violations.map((v) => ({
            id: v.id,
            impact: v.impact,
            help: v.help,
            nodes: v.nodes.map((n) => ({ target: n.target, summary: n.failureSummary })),
          })),
        };
      }, TAGS);
      await context.close();
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
