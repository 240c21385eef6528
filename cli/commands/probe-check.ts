/**
 * `magnt probe-check <url>` (08 §8): the deployment release gate. Fetches the
 * probe of the site the URL belongs to and checks status, headers, versions,
 * release markers, storage flags, the dialogue flag and that no unknown key
 * appeared (the probe must never start leaking new facts unnoticed).
 */
import {
  DIALOGUE_RELEASE,
  MCP_DOOR_VERSION,
  OWNER_RELEASE,
  SHARED_MEMORY_VERSION,
} from "../../worker/contracts";
import { examples, withRuntime, type ParentCommand } from "../lib/command";
import type { CliContext } from "../lib/context";
import { CheckFailed, EnvironmentError } from "../lib/errors";
import { controlledFetch, parseHttpUrl, type ReachTracker } from "../lib/http";
import { parseChoiceOption, parseIntegerOption } from "../lib/options";
import { PROBE_FIELDS, PROBE_PATH } from "../lib/probe-fields";
import type { LayoutColumn } from "../lib/table-layout";

export const PROBE_DEFAULT_TIMEOUT_MS = 10_000;
const DIALOGUE_EXPECTATIONS = ["on", "off", "any"] as const;

/**
 * The human table: the check's name and verdict always whole; the values cut
 * to what is left (at 80 columns both keep 16 or more), the actual value
 * before the expected one when one must go. `--json` has them whole.
 */
const PROBE_TABLE: readonly LayoutColumn[] = [
  { name: "check", shape: "id", priority: 1 },
  { name: "ok", shape: "word", priority: 2 },
  { name: "expected", shape: "text", priority: 4, minWidth: 10 },
  { name: "actual", shape: "text", priority: 3, minWidth: 10 },
];

export interface ProbeCheck {
  id: string;
  ok: boolean;
  expected: unknown;
  actual: unknown;
}

export function registerProbeCheck(program: ParentCommand, ctx: CliContext): void {
  program
    .command("probe-check")
    .description("check a deployment's /__magnt_probe against the expected release")
    .argument("<url>", "any URL of the site (the probe is its origin + /__magnt_probe)")
    .option("--expect-mcp-door-version <v>", "expected mcp_door_version", MCP_DOOR_VERSION)
    .option("--expect-shared-memory-version <v>", "expected shared_memory_version", SHARED_MEMORY_VERSION)
    .option("--expect-owner-release <r>", "expected owner_release", OWNER_RELEASE)
    .option("--expect-dialogue-release <r>", "expected dialogue_release", DIALOGUE_RELEASE)
    .option("--expect-storage", "expect both storage flags true (default)", true)
    .option("--no-expect-storage", "do not check the storage flags")
    .option("--expect-dialogue <on|off|any>", "expected dialogue_enabled", "any")
    .option("--timeout <ms>", "request timeout", String(PROBE_DEFAULT_TIMEOUT_MS))
    .addHelpText(
      "after",
      examples([
        "magnt probe-check https://magnt.ru/",
        "magnt probe-check http://127.0.0.1:8787/__magnt_probe --expect-dialogue off --json",
      ]),
    )
    .action(
      withRuntime(ctx, async (rt, url, options) => {
        const probeUrl = probeUrlFor(url);
        const timeout = parseIntegerOption("--timeout", options.timeout, 1, 600_000);
        const expectDialogue = parseChoiceOption("--expect-dialogue", options.expectDialogue, DIALOGUE_EXPECTATIONS);
        const tracker: ReachTracker = { responses: 0 };
        let response: Response;
        let body: string;
        try {
          response = await controlledFetch(tracker)(probeUrl, { signal: AbortSignal.timeout(timeout) });
          body = await response.text();
        } catch {
          throw new EnvironmentError(`cannot reach ${probeUrl.href}: ${tracker.networkError ?? "timed out"}`);
        }
        const checks = evaluateProbe(response.status, response.headers, body, {
          versions: {
            mcp_door_version: options.expectMcpDoorVersion,
            shared_memory_version: options.expectSharedMemoryVersion,
            owner_release: options.expectOwnerRelease,
            dialogue_release: options.expectDialogueRelease,
          },
          storage: options.expectStorage,
          dialogue: expectDialogue,
        });
        const ok = checks.every((check) => check.ok);
        if (rt.out.json) rt.out.jsonLine({ url: probeUrl.href, ok, checks });
        else {
          rt.out.line(probeUrl.href);
          const hidden = rt.out.fittedTable(
            PROBE_TABLE,
            checks.map((check) => [check.id, check.ok ? rt.out.paint.ok("ok") : rt.out.paint.fail("FAIL"), check.expected, check.actual]),
          );
          if (hidden.length > 0) rt.out.info(`not shown at ${rt.out.width} columns: ${hidden.join(", ")} (a wider terminal or --json shows them)`);
        }
        if (!ok) {
          const failed = checks.filter((check) => !check.ok).map((check) => check.id);
          throw new CheckFailed(`probe check failed: ${failed.join(", ")}`);
        }
      }),
    );
}

/** The probe URL for any URL of the site: its origin + the probe path (kept when already the probe). */
export function probeUrlFor(raw: string): URL {
  const url = parseHttpUrl(raw);
  return url.pathname === PROBE_PATH ? new URL(url.href) : new URL(PROBE_PATH, url.origin);
}

/** Pure evaluation of one probe answer (08 §8), so the rules are testable without a server. */
export function evaluateProbe(
  status: number,
  headers: Headers,
  body: string,
  expect: { versions: Record<string, string>; storage: boolean; dialogue: "on" | "off" | "any" },
): ProbeCheck[] {
  const contentType = headers.get("content-type") ?? "";
  const cacheControl = headers.get("cache-control") ?? "";
  const checks: ProbeCheck[] = [
    { id: "http_status", ok: status === 200, expected: 200, actual: status },
    { id: "content_type", ok: /^application\/json\b/i.test(contentType), expected: "application/json", actual: contentType },
    { id: "cache_control", ok: /(^|[\s,])no-store([\s,;]|$)/i.test(cacheControl), expected: "no-store", actual: cacheControl },
  ];
  let doc: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) doc = parsed as Record<string, unknown>;
  } catch {
    doc = undefined;
  }
  checks.push({ id: "json", ok: doc !== undefined, expected: "a JSON object", actual: doc === undefined ? "not a JSON object" : "JSON object" });
  if (doc === undefined) return checks;
  const expectValue = (id: string, expected: unknown): void => {
    checks.push({ id, ok: doc[id] === expected, expected, actual: doc[id] ?? null });
  };
  expectValue("ok", true);
  for (const [id, expected] of Object.entries(expect.versions)) expectValue(id, expected);
  if (expect.storage) {
    expectValue("contact_storage_configured", true);
    expectValue("shared_memory_storage_configured", true);
  }
  if (expect.dialogue !== "any") expectValue("dialogue_enabled", expect.dialogue === "on");
  const known: readonly string[] = PROBE_FIELDS;
  const unknown = Object.keys(doc).filter((key) => !known.includes(key));
  checks.push({ id: "known_fields", ok: unknown.length === 0, expected: "only probe fields (01 §7)", actual: unknown.length === 0 ? "none unknown" : unknown });
  return checks;
}
