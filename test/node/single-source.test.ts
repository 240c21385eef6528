/**
 * Security-critical code exists once (issue 18): read from the source text of
 * worker/ (comments stripped), each piece below may be written only in its one
 * module — base64 in lib/base64url.ts, the constant-time comparison in
 * lib/constant-time.ts (and no hand-written XOR loop anywhere), the header
 * names a gateway sets for core and the prefixes it scrubs in
 * contracts/forwarding.ts (never assembled from a template). The checker is
 * run on synthetic sources too, so each rule is known to fire.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FORWARDING_HEADERS, SCRUBBED_HEADER_PREFIXES } from "../../worker/contracts/forwarding";
import { ROOT, sourcesUnder, withoutComments, type SourceFile } from "../helpers/sources";

interface Rule {
  readonly what: string;
  readonly home: string;
  readonly pattern: RegExp;
}

const quoted = (name: string) => new RegExp(`["'\`]${name.replace(/[-/\\^$*+?.()|[\]{}]/g, "\\$&")}["'\`]`);

const RULES: readonly Rule[] = [
  { what: "base64 (btoa/atob)", home: "worker/lib/base64url.ts", pattern: /\b(?:btoa|atob)\s*\(/ },
  { what: "a timing-safe comparison", home: "worker/lib/constant-time.ts", pattern: /timingSafeEqual\s*\(/ },
  { what: "a hand-written XOR comparison loop", home: "(nowhere)", pattern: /\|=\s*[^;\n]*\^/ },
  { what: "a forwarded header name built from a template", home: "(nowhere)", pattern: /`x-magnt-[a-z-]*\$\{/ },
  ...[FORWARDING_HEADERS.forwarded, FORWARDING_HEADERS.clientKey, ...Object.values(FORWARDING_HEADERS.edge), ...SCRUBBED_HEADER_PREFIXES].map(
    (name): Rule => ({ what: `the header name ${name}`, home: "worker/contracts/forwarding.ts", pattern: quoted(name) }),
  ),
];

/** Every piece written outside its one module, one line each. */
export function singleSourceViolations(files: readonly SourceFile[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const code = withoutComments(file.text);
    for (const rule of RULES) {
      if (file.path !== rule.home && rule.pattern.test(code)) problems.push(`${file.path}: ${rule.what} (only in ${rule.home})`);
    }
  }
  return problems;
}

describe("security-critical code exists once in worker/", () => {
  it("each piece is written only in its module", () => {
    const files = sourcesUnder("worker");
    expect(files.length).toBeGreaterThan(50);
    expect(singleSourceViolations(files)).toEqual([]);
  });

  it("the homes really hold them (the rules track the code)", () => {
    const text = (path: string) => withoutComments(readFileSync(join(ROOT, path), "utf8"));
    expect(text("worker/lib/base64url.ts")).toMatch(/\batob\(/);
    expect(text("worker/lib/constant-time.ts")).toMatch(/timingSafeEqual\(/);
    expect(text("worker/contracts/forwarding.ts")).toContain('"x-magnt-edge-country"');
  });
});

describe("the checker can fail (synthetic sources)", () => {
  const check = (path: string, text: string) => singleSourceViolations([{ path, text }]);

  it.each([
    ["worker/owner/store.ts", "const b = atob(x);", /base64/],
    ["worker/owner/oauth/encoding.ts", "return btoa(binary);", /base64/],
    ["worker/lib/dialogue-token.ts", "return crypto.subtle.timingSafeEqual(a, b);", /timing-safe/],
    ["worker/owner/oauth/encoding.ts", "for (let i = 0; i < n; i++) difference |= left[i]! ^ right[i]!;", /XOR/],
    ["worker/edge/telemetry.ts", "const header = (name) => request.headers.get(`x-magnt-edge-${name}`);", /template/],
    ["worker/entries/owner-routes.ts", 'headers.push(["x-magnt-edge-country", fact(cf.country)]);', /x-magnt-edge-country/],
    ["worker/edge/rate-limit.ts", "request.headers.get('x-magnt-client-key')", /x-magnt-client-key/],
    ["worker/edge/forward.ts", 'if (lower.startsWith("x-magnt-") || lower.startsWith("cf-")) continue;', /x-magnt-/],
  ])("%s: %s", (path, text, message) => {
    const problems = check(path, text);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join("\n")).toMatch(message);
  });

  it("ignores comments and the home module itself", () => {
    expect(check("worker/edge/forward.ts", "/** drops every `x-magnt-*` header; see \"x-magnt-edge-country\" */\nexport {};")).toEqual([]);
    expect(check("worker/lib/base64url.ts", "return atob(x);")).toEqual([]);
  });
});
