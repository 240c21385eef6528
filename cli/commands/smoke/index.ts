/**
 * `magnt smoke [url]` (08 §6): the release check of a running door with the
 * official MCP client. One line (or one JSON object) per step; the first
 * failed step stops the run and the rest are reported as skipped.
 *
 * Privacy: the output only ever carries receipts, statuses and flags. Task
 * text, the contact summary, profile prose and the random task tokens are
 * never printed, and every error message is scrubbed before it is shown,
 * because a server error could echo them back.
 *
 * Layout: plan.ts (which steps, the test content), steps.ts (one function per
 * step, dispatched by name), session.ts (the client and carried values),
 * expectations.ts (checks and failure kinds), reporter.ts (lines or JSON lines).
 */
import { examples, withRuntime, type ParentCommand } from "../../lib/command";
import type { CliContext } from "../../lib/context";
import { CheckFailed, describeUnknown, EnvironmentError } from "../../lib/errors";
import { parseHttpUrl } from "../../lib/http";
import { parseIntegerOption } from "../../lib/options";
import { StepFailure, Unreachable } from "./expectations";
import { SMOKE_DEFAULT_TIMEOUT_MS, SMOKE_DEFAULT_URL, smokePlan, type StepName } from "./plan";
import { createReporter } from "./reporter";
import { SmokeSession } from "./session";
import { STEPS } from "./steps";

export { BASE_STEPS, randomToken, SHARED_MEMORY_STEPS, SMOKE_DEFAULT_TIMEOUT_MS, SMOKE_DEFAULT_URL, SUBMIT_STEPS, syntheticTask, TEST_CONTACT } from "./plan";
export type { StepName } from "./plan";
export type { StepRecord } from "./reporter";

export function registerSmoke(program: ParentCommand, ctx: CliContext): void {
  program
    .command("smoke")
    .description("release check of a running door with the official MCP client")
    .argument("[url]", "the door's MCP endpoint", SMOKE_DEFAULT_URL)
    .option("--submit-test", "also send a test contact and its identical retry", false)
    .option("--shared-memory-test", "also search, contribute and re-search a random synthetic task (test cohort)", false)
    .option("--legacy", "use the client's legacy 2025-11-25 handshake instead of auto negotiation", false)
    .option("--timeout <ms>", "per request and for connect", String(SMOKE_DEFAULT_TIMEOUT_MS))
    .addHelpText(
      "after",
      examples([
        "magnt smoke",
        "magnt smoke https://magnt.ru/mcp --submit-test --shared-memory-test",
        "magnt smoke http://127.0.0.1:8787/mcp --legacy --json",
      ]),
    )
    .action(
      withRuntime(ctx, async (rt, rawUrl, options) => {
        // An empty argument (`magnt smoke ""`) has always meant the default, like an absent one.
        const url = parseHttpUrl(rawUrl === "" ? SMOKE_DEFAULT_URL : rawUrl);
        const timeout = parseIntegerOption("--timeout", options.timeout, 1, 600_000);
        const plan = smokePlan(options);
        const reporter = createReporter(rt);
        const session = await SmokeSession.open(url, timeout, options.legacy);
        let failure: { step: StepName; message: string; unreachable: boolean } | undefined;
        try {
          for (const step of plan) {
            if (failure !== undefined) {
              reporter.step({ step, status: "skipped" });
              continue;
            }
            try {
              const detail = await STEPS[step](session);
              reporter.step({ step, status: "passed", detail });
            } catch (error) {
              const message = session.scrub(error instanceof StepFailure || error instanceof Unreachable ? error.message : describeUnknown(error));
              failure = { step, message, unreachable: error instanceof Unreachable };
              reporter.step({ step, status: "failed", message });
            }
          }
        } finally {
          await session.close();
        }
        const failed = failure === undefined ? 0 : 1;
        await reporter.finish({ ok: failure === undefined, steps: plan.length, failed });
        if (failure === undefined) return;
        const text = `smoke failed at step ${failure.step}: ${failure.message}`;
        throw failure.unreachable ? new EnvironmentError(text) : new CheckFailed(text);
      }),
    );
}
