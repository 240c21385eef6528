/** Shared-memory calls for the workers suites. */
import { callToolModern, type RawOptions } from "./mcp";
import { db } from "./db";

export type Structured = Record<string, any>;

export async function search(args: unknown, options: RawOptions = {}) {
  const { result, message } = await callToolModern("search_shared_experience", args, options);
  return { result, message, structured: result?.structuredContent as Structured | undefined };
}

export async function contribute(args: unknown, options: RawOptions = {}) {
  const { result, message } = await callToolModern("contribute_task_signal", args, options);
  return { result, message, structured: result?.structuredContent as Structured | undefined };
}

/** A word no other test uses, so each test owns its corpus slice. */
export function uniqueWord(prefix = "w"): string {
  return `${prefix}${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

/** Inserts a signal row directly (to control created_at, status and cohort). */
export async function seedSignal(row: {
  goal: string;
  blocker?: string | null;
  tried?: string | null;
  learned?: string | null;
  createdAt?: string;
  isTest?: boolean;
  status?: "active" | "hidden";
  signalId?: string;
}): Promise<string> {
  const signalId = row.signalId ?? `ts_${crypto.randomUUID()}`;
  await db()
    .prepare(
      `INSERT INTO task_signals (signal_id, created_at, goal, blocker, tried, learned, submission_id, payload_hash, self_reported_test, status)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'seeded', ?, ?)`,
    )
    .bind(
      signalId,
      row.createdAt ?? new Date().toISOString(),
      row.goal,
      row.blocker ?? null,
      row.tried ?? null,
      row.learned ?? null,
      crypto.randomUUID(),
      row.isTest ? 1 : 0,
      row.status ?? "active",
    )
    .run();
  return signalId;
}
