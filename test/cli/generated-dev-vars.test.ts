/**
 * The generated local-only `.dev.vars` of `magnt dev --owner`
 * (cli/lib/generated-dev-vars.ts): every value passes the Worker's own
 * configuration parsers (so the loop is never `misconfigured`), two files
 * never share a value, the marker is the first line, and an existing file —
 * generated or hand-written — is never overwritten.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDevVars } from "../../cli/lib/dev-vars";
import {
  createDevVarsOnce,
  GENERATED_FLAGS,
  GENERATED_MARKER,
  GENERATED_SECRETS,
  generatedDevVarsText,
  generatedValues,
  isGeneratedDevVars,
} from "../../cli/lib/generated-dev-vars";
import { FLAG_NAMES } from "../../worker/contracts";
import { readNotifyConfig } from "../../worker/notify/config";
import { parseOwnerConfig } from "../../worker/owner/config";

describe("generated local-only values", () => {
  it("pass the owner gateway's, core's and the notifier's own parsers", () => {
    const values = parseDevVars(generatedDevVarsText());
    const env = { ...Object.fromEntries(values), OWNER_ORIGIN: "http://localhost:8788", GITHUB_OAUTH_ORIGIN: "http://127.0.0.1:4000", GITHUB_API_ORIGIN: "http://127.0.0.1:4000" };
    expect(parseOwnerConfig(env as never, "gateway")).not.toBeNull();
    expect(parseOwnerConfig(env as never, "core")).not.toBeNull();
    expect(readNotifyConfig({ ...env, TELEGRAM_API_ORIGIN: "http://127.0.0.1:4001", CONTACTS: {} } as never)).toMatchObject({ kind: "ready" });
    expect(Buffer.from(values.get("DIALOGUE_TOKEN_KEY")!, "base64url").length).toBeGreaterThanOrEqual(32);
  });

  it("are random: two files share no value", () => {
    const [a, b] = [generatedValues(), generatedValues()];
    for (const name of GENERATED_SECRETS) expect(a[name]).not.toBe(b[name]);
  });

  it("the file: the marker first, every secret, the loop's flags on (only known flags, the goal and preview flags left off)", () => {
    const text = generatedDevVarsText();
    expect(text.split("\n")[0]).toBe(GENERATED_MARKER);
    expect(isGeneratedDevVars(text)).toBe(true);
    expect(isGeneratedDevVars(`# mine\n${text}`)).toBe(false);
    const values = parseDevVars(text);
    expect([...values.keys()]).toEqual([...GENERATED_SECRETS, ...GENERATED_FLAGS]);
    for (const flag of GENERATED_FLAGS) expect(FLAG_NAMES).toContain(flag);
    expect(GENERATED_FLAGS).not.toContain("TELEGRAM_GOAL_NOTIFICATIONS_ENABLED");
    expect(GENERATED_FLAGS).not.toContain("TELEGRAM_PREVIEW_MODE");
  });

  it("is deterministic given its random source (nothing else goes in)", () => {
    const fixed = (size: number) => Buffer.alloc(size, 7);
    expect(generatedDevVarsText(fixed)).toBe(generatedDevVarsText(fixed));
  });
});

describe("createDevVarsOnce", () => {
  it("creates the file (and its directory) with mode 0600", () => {
    const path = join(mkdtempSync(join(tmpdir(), "magnt-gen-")), "nested", ".dev.vars");
    expect(createDevVarsOnce(path, "A=1\n")).toBe(true);
    expect(readFileSync(path, "utf8")).toBe("A=1\n");
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("never overwrites an existing file, generated or hand-written", () => {
    const path = join(mkdtempSync(join(tmpdir(), "magnt-gen-")), ".dev.vars");
    writeFileSync(path, "# edited by hand\nOWNER_GITHUB_ID=42\n");
    expect(createDevVarsOnce(path, generatedDevVarsText())).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("# edited by hand\nOWNER_GITHUB_ID=42\n");
  });
});
