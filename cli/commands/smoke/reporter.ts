/**
 * Printing a smoke run (08 §6): one human line per step, or one JSON object
 * per step through `ndjson` followed by the summary object. The reporter only
 * ever sees `StepRecord`s, whose details are already restricted to receipts,
 * statuses and flags by the steps themselves.
 */
/// <reference path="../../types/ndjson.d.ts" />
import ndjson from "ndjson";
import type { CommandRuntime } from "../../lib/command";
import { ALL_STEPS, type StepDetail, type StepName } from "./plan";

export interface StepRecord {
  step: StepName;
  status: "passed" | "failed" | "skipped";
  detail?: StepDetail;
  message?: string;
}

export interface SmokeSummary {
  ok: boolean;
  steps: number;
  failed: number;
}

export interface Reporter {
  step(record: StepRecord): void;
  finish(summary: SmokeSummary): Promise<void>;
}

/** The reporter for `--json` (JSON lines) or human mode (aligned lines with ✔/✘/-). */
export function createReporter(rt: CommandRuntime): Reporter {
  return rt.out.json ? jsonReporter(rt) : humanReporter(rt);
}

function jsonReporter({ ctx }: CommandRuntime): Reporter {
  const stream = ndjson.stringify();
  stream.on("data", (line: Buffer | string) => ctx.stdout.write(String(line)));
  return {
    step(record) {
      stream.write({ step: record.step, status: record.status, ...(record.detail ?? {}), ...(record.message === undefined ? {} : { message: record.message }) });
    },
    finish(summary) {
      return new Promise<void>((resolve) => {
        stream.on("end", resolve);
        stream.end({ summary });
      });
    },
  };
}

function humanReporter({ out }: CommandRuntime): Reporter {
  const width = Math.max(...ALL_STEPS.map((name) => name.length));
  return {
    step(record) {
      const name = record.step.padEnd(width);
      // Long details and messages continue under the detail column, so each line fits the terminal (08 §6).
      const under = " ".repeat(width + 2);
      if (record.status === "passed") out.wrappedItems(`${name}  `, detailItems(record.detail ?? {}), "  ", under, { text: `${out.paint.ok("✔")} `, columns: 2 });
      else if (record.status === "failed") out.wrapped(`${name}  ${record.message ?? ""}`.trimEnd(), under, { text: `${out.paint.fail("✘")} `, columns: 2 });
      else out.line(`${out.paint.dim("-")} ${out.paint.dim(`${name}  skipped`)}`);
    },
    async finish(summary) {
      out.line(
        summary.ok
          ? out.paint.ok(`smoke passed (${summary.steps} steps)`)
          : out.paint.fail(`smoke failed (${summary.failed} of ${summary.steps} steps failed, the rest skipped)`),
      );
    },
  };
}

function detailItems(detail: StepDetail): string[] {
  return Object.entries(detail).map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(", ") : String(value)}`);
}
