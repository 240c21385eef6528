/**
 * The owner activation guides say what a key rotation does to clients (issue
 * 17 item 6, 06 §3.6): registration is stateless, so rotating
 * `OWNER_TOKEN_SIGNING_KEY` invalidates every registered client id. Both
 * guides (English and Russian) must state it in the revoking section, in the
 * bullet that follows the epoch bump, with what a client gets
 * (`invalid_client`) and what it must do (register again at `/oauth/register`).
 * The behaviour itself is tested in test/worker/owner-oauth-consent.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..");

/** The top-level bullets of the `## 5.` section of a guide. */
function revokingBullets(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const section = /^## 5\..*$([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(text)?.[1];
  if (section === undefined) throw new Error(`${file}: no section 5`);
  return section
    .split(/^- /m)
    .slice(1)
    .map((bullet) => bullet.replace(/\s+/g, " ").trim());
}

describe("key rotation is documented next to the epoch bump (issue 17 item 6)", () => {
  for (const [file, clientIds] of [
    ["docs/owner-activation.md", /every registered client id/],
    ["docs/ru/owner-activation.md", /все зарегистрированные client id/],
  ] as const) {
    it(file, () => {
      const bullets = revokingBullets(file);
      const epoch = bullets.findIndex((bullet) => bullet.includes("wrangler secret put OWNER_TOKEN_EPOCH"));
      expect(epoch, "the epoch bump bullet").toBeGreaterThanOrEqual(0);
      const rotation = bullets[epoch + 1] ?? "";
      expect(rotation).toContain("`OWNER_TOKEN_SIGNING_KEY`");
      expect(rotation).toMatch(clientIds);
      expect(rotation).toContain("`invalid_client`");
      expect(rotation).toContain("`/oauth/register`");
    });
  }
});
