/**
 * Acceptance for `magnt metrics` (issue 10): exports generated here, in every
 * shape of 08 §5.1 and as split gateway/core pairs, must give exactly the
 * summary of an independent reference summariser.
 *
 * The reference shares no code with the implementation: it reads each file
 * whole, lets JSON.parse find the shape, keeps ids in plain `Set`s and `Map`s
 * and follows the text of 08 §5.3 line by line (with the interpretations
 * recorded in docs/metrics.md: the four counted types gate the other rules,
 * and a record without `mcp_`/`a2a_` in its text is only read).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runMagnt } from "./harness";

// ---------------------------------------------------------------- reference summariser

type Obj = Record<string, unknown>;
const DAY_MS = 86_400_000;
const MCP_METHODS = ["initialize", "notifications/initialized", "notifications/cancelled", "server/discover", "ping", "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list", "prompts/list", "subscriptions/listen"];
const TOOLS = ["about_magnt", "propose_contact", "search_shared_experience", "contribute_task_signal", "fetch_contact_reply", "owner_list_contacts", "owner_list_observed_goals", "owner_save_draft", "owner_set_contact_state", "owner_publish_reply", "owner_revoke_dialogue"];
const A2A_METHODS = ["SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask", "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard", "message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe", "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete", "agent/getAuthenticatedExtendedCard"];
const OUTCOMES = ["success", "tool_error", "protocol_error", "notification_accepted", "stream_opened", "handler_error", "internal_error", "body_too_large", "host_rejected", "origin_rejected", "method_not_allowed", "bad_request", "not_modified", "unsupported_media_type", "origin_unavailable", "core_unavailable", "token_rejected", "scope_rejected", "owner_disabled", "owner_misconfigured", "not_owner", "oauth_error", "http_success", "http_error"];
const VERSIONS = ["1.0", "0.3", "unsupported"];

function recordsOfFile(text: string): string[] {
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    return text.split("\n").filter((line) => line.trim() !== "");
  }
  if (Array.isArray(whole)) return whole.map((element) => JSON.stringify(element));
  const events = ((whole as Obj | null)?.result as Obj | undefined)?.events as Obj | undefined;
  if (events !== undefined && Array.isArray(events.events)) return events.events.map((element) => JSON.stringify(element));
  return [JSON.stringify(whole)];
}

function keyOf(value: unknown, list: string[]): string {
  if (value === null || value === undefined) return "(none)";
  return typeof value === "string" && list.includes(value) ? value : "unknown";
}

function ordered(counts: Map<string, number>, list: string[]): Obj {
  const result: Obj = {};
  for (const key of [...list, "unknown", "(none)"]) if (counts.has(key)) result[key] = counts.get(key);
  return result;
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function isoTime(value: unknown): number {
  return typeof value === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) ? Date.parse(value) : NaN;
}

function referenceSummary(files: string[], since: number | null, until: number | null): Obj {
  const inputs = { files: files.length, records: 0, unparseable_records: 0, records_without_event_id: 0, duplicates_removed: 0, outside_time_window: 0, excluded_controlled_test: 0, excluded_self_reported_test: 0, counted_events: 0 };
  const byType = { mcp_request: 0, mcp_card: 0, a2a_request: 0, a2a_card: 0 };
  const seen = new Set<string>();
  const methods = new Map<string, number>();
  const tools = new Map<string, number>();
  const a2aMethods = new Map<string, number>();
  const a2aOutcomes = new Map<string, number>();
  const a2aVersions = new Map<string, number>();
  const contacts = { saved_new: 0, duplicates: 0, conflicts: 0, not_saved: 0, rate_limited: 0, dialogue_refused: 0, invalid_arguments: 0 };
  const search = { valid_calls: 0, matches_found: 0, no_relevant_experience: 0, storage_errors: 0, invalid_arguments: 0, observed_tasks_saved: 0, observed_tasks_not_saved: 0, rate_limited: 0 };
  const contribute = { calls: 0, valid_calls: 0, accepted_events: 0, accepted_signal_ids: 0, duplicates: 0, conflicts: 0, rate_limited: 0, storage_errors: 0, invalid_arguments: 0 };
  const acceptedSignals = new Set<string>();
  const receiptTimes = new Map<string, number[]>();
  const withReceipt: Array<{ receipt: string; signal: unknown; time: number }> = [];
  let tools_list = 0;
  let first = Infinity;
  let last = -Infinity;

  for (const text of files) {
    for (const record of recordsOfFile(text)) {
      inputs.records += 1;
      if (Buffer.byteLength(record) > 1024 * 1024) {
        inputs.unparseable_records += 1;
        continue;
      }
      if (!record.includes("mcp_") && !record.includes("a2a_")) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(record);
      } catch {
        inputs.unparseable_records += 1;
        continue;
      }
      let event: Obj | null = null;
      if (parsed !== null && typeof parsed === "object") {
        const candidate = parsed as Obj;
        if (typeof candidate.event_id === "string") event = candidate;
        else if (candidate.source !== null && typeof candidate.source === "object" && typeof (candidate.source as Obj).event_id === "string") event = candidate.source as Obj;
      }
      if (event === null) {
        inputs.records_without_event_id += 1;
        continue;
      }
      const type = event.event_type;
      if (type !== "mcp_request" && type !== "mcp_card" && type !== "a2a_request" && type !== "a2a_card") continue;
      // Rule 1: dedupe.
      if (seen.has(event.event_id as string)) {
        inputs.duplicates_removed += 1;
        continue;
      }
      seen.add(event.event_id as string);
      // Rule 2: window.
      const time = isoTime(event.time);
      if (since !== null || until !== null) {
        if (Number.isNaN(time) || (since !== null && time < since) || (until !== null && time >= until)) {
          inputs.outside_time_window += 1;
          continue;
        }
      }
      // Rule 3: tests.
      if (event.controlled_test === true) {
        inputs.excluded_controlled_test += 1;
        continue;
      }
      if (event.self_reported_test === true) {
        inputs.excluded_self_reported_test += 1;
        continue;
      }
      // Rule 4: counted.
      inputs.counted_events += 1;
      byType[type] += 1;
      if (!Number.isNaN(time)) {
        first = Math.min(first, time);
        last = Math.max(last, time);
      }
      if (type === "a2a_request") {
        bump(a2aMethods, keyOf(event.a2a_method, A2A_METHODS));
        bump(a2aOutcomes, keyOf(event.outcome, OUTCOMES));
        bump(a2aVersions, keyOf(event.a2a_protocol_version, VERSIONS));
      }
      if (type !== "mcp_request") continue;
      bump(methods, keyOf(event.mcp_method, MCP_METHODS));
      if (event.mcp_method === "tools/list") tools_list += 1;
      if (event.mcp_method !== "tools/call") continue;
      bump(tools, keyOf(event.tool_name, TOOLS));
      const result = event.tool_result;
      const limited = event.rate_limited === true;
      if (event.tool_name === "propose_contact") {
        if (result === "accepted_for_human_review" && event.duplicate === true) contacts.duplicates += 1;
        if (result === "accepted_for_human_review" && event.duplicate !== true) contacts.saved_new += 1;
        if (result === "submission_conflict") contacts.conflicts += 1;
        if (result === "storage_unavailable" || result === "dialogue_misconfigured") contacts.not_saved += 1;
        if (result === "dialogue_not_found") contacts.dialogue_refused += 1;
        if (result === "invalid_arguments") contacts.invalid_arguments += 1;
        if (limited) contacts.rate_limited += 1;
      }
      if (event.tool_name === "search_shared_experience") {
        if (event.validation_status === "valid") search.valid_calls += 1;
        if (result === "matches_found") search.matches_found += 1;
        if (result === "no_relevant_experience") search.no_relevant_experience += 1;
        if (result === "storage_error") search.storage_errors += 1;
        if (result === "invalid_arguments") search.invalid_arguments += 1;
        if (event.observed_task_saved === true) search.observed_tasks_saved += 1;
        if (event.observed_task_saved === false) search.observed_tasks_not_saved += 1;
        if (limited) search.rate_limited += 1;
        if (result === "no_relevant_experience" && typeof event.search_receipt === "string") {
          receiptTimes.set(event.search_receipt, [...(receiptTimes.get(event.search_receipt) ?? []), time]);
        }
      }
      if (event.tool_name === "contribute_task_signal") {
        contribute.calls += 1;
        if (event.validation_status === "valid") contribute.valid_calls += 1;
        if (result === "accepted") {
          contribute.accepted_events += 1;
          if (typeof event.signal_id === "string") acceptedSignals.add(event.signal_id);
          if (typeof event.search_receipt === "string") withReceipt.push({ receipt: event.search_receipt, signal: event.signal_id, time });
        }
        if (result === "duplicate") contribute.duplicates += 1;
        if (result === "submission_conflict") contribute.conflicts += 1;
        if (result === "storage_error") contribute.storage_errors += 1;
        if (result === "invalid_arguments") contribute.invalid_arguments += 1;
        if (limited) contribute.rate_limited += 1;
      }
    }
  }
  contribute.accepted_signal_ids = acceptedSignals.size;
  // Receipt correlation after the whole input.
  const correlated = new Set<unknown>();
  let notSeen = 0;
  let outside = 0;
  for (const contribution of withReceipt) {
    const times = receiptTimes.get(contribution.receipt);
    if (times === undefined) notSeen += 1;
    else if (times.some((searchTime) => contribution.time >= searchTime && contribution.time <= searchTime + DAY_MS)) {
      if (typeof contribution.signal === "string") correlated.add(contribution.signal);
    } else outside += 1;
  }
  const iso = (ms: number | null) => (ms === null || !Number.isFinite(ms) ? null : new Date(ms).toISOString());
  return {
    inputs,
    window: { since: iso(since), until: iso(until), first_event: iso(first), last_event: iso(last) },
    by_event_type: byType,
    mcp: {
      by_method: ordered(methods, MCP_METHODS),
      tools_list,
      tool_calls: ordered(tools, TOOLS),
      contacts,
      search,
      contribute,
      receipt_correlation: { contributions_with_receipt: withReceipt.length, correlated_signal_ids: correlated.size, receipt_not_seen: notSeen, outside_24h: outside },
    },
    a2a: { by_method: ordered(a2aMethods, A2A_METHODS), by_outcome: ordered(a2aOutcomes, OUTCOMES), by_protocol_version: ordered(a2aVersions, VERSIONS) },
  };
}

// ---------------------------------------------------------------- seeded export generator

function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) / 16777216;
  };
}

function generateExport(seed: number): { events: Obj[]; foreign: string[]; base: number } {
  const random = prng(seed);
  const pick = <T,>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  const maybe = <T,>(value: T, p = 0.5): T | undefined => (random() < p ? value : undefined);
  const base = Date.UTC(2026, 4, 1) + Math.floor(random() * 10) * DAY_MS;
  const receipts = Array.from({ length: 12 }, (_, index) => `sr_${(seed * 100 + index).toString(16).padStart(32, "0")}`);
  const signals = Array.from({ length: 10 }, (_, index) => `ts_${index}`);
  const events: Obj[] = [];
  const count = 150 + Math.floor(random() * 250);
  for (let index = 0; index < count; index += 1) {
    if (events.length > 0 && random() < 0.07) {
      events.push(pick(events)); // an exact duplicate
      continue;
    }
    const roll = random();
    const time = random() < 0.03 ? pick(["garbage", "2026-05-01", null]) : new Date(base + Math.floor(random() * 3 * DAY_MS)).toISOString();
    const event: Obj = {
      event_id: `${seed}-${index}`,
      time,
      event_type: roll < 0.12 ? "http" : roll < 0.16 ? pick(["scheduled", "owner_mcp_request"]) : roll < 0.24 ? pick(["mcp_card", "a2a_card"]) : roll < 0.36 ? "a2a_request" : "mcp_request",
      controlled_test: random() < 0.05,
      userAgent: pick(["agent", "MAGNT-Controlled-Test/1", "with mcp_ inside"]),
      outcome: pick([...OUTCOMES.slice(0, 4), "weird", null]),
    };
    if (random() < 0.08) event.self_reported_test = true;
    if (event.event_type === "a2a_request") {
      event.a2a_method = pick([...A2A_METHODS.slice(0, 3), "message/send", "Bogus", null]);
      event.a2a_protocol_version = pick([...VERSIONS, null, "2.0"]);
    }
    if (event.event_type === "mcp_request" || event.event_type === "owner_mcp_request") {
      event.mcp_method = pick(["tools/call", "tools/call", "tools/call", "tools/list", "initialize", "ping", "unknown", "made/up", null]);
      if (event.mcp_method === "tools/call") {
        const tool = pick(["search_shared_experience", "search_shared_experience", "contribute_task_signal", "contribute_task_signal", "propose_contact", "about_magnt", "owner_save_draft", "nope", null]);
        event.tool_name = tool;
        event.validation_status = pick(["valid", "valid", "invalid", undefined]);
        event.rate_limited = maybe(random() < 0.2);
        if (tool === "search_shared_experience") {
          event.tool_result = pick(["no_relevant_experience", "no_relevant_experience", "matches_found", "storage_error", "invalid_arguments"]);
          event.observed_task_saved = maybe(random() < 0.8, 0.8);
          event.search_receipt = maybe(pick(receipts), 0.85);
        } else if (tool === "contribute_task_signal") {
          event.tool_result = pick(["accepted", "accepted", "accepted", "duplicate", "submission_conflict", "rate_limited", "storage_error", "invalid_arguments"]);
          event.signal_id = maybe(pick(signals), 0.95);
          event.search_receipt = maybe(pick(receipts), 0.7);
        } else if (tool === "propose_contact") {
          event.tool_result = pick(["accepted_for_human_review", "accepted_for_human_review", "submission_conflict", "storage_unavailable", "dialogue_misconfigured", "dialogue_not_found", "rate_limited", "invalid_arguments"]);
          event.duplicate = maybe(random() < 0.3);
        }
      }
    }
    for (const key of Object.keys(event)) if (event[key] === undefined) delete event[key];
    events.push(event);
  }
  // Shuffle a little: contributions may come before their searches.
  for (let index = events.length - 1; index > 0; index -= 1) {
    if (random() < 0.3) {
      const other = Math.floor(random() * (index + 1));
      [events[index], events[other]] = [events[other]!, events[index]!];
    }
  }
  const foreign = ['{"message":"mcp_ chatter"}', "{not json a2a_", '{"source":{"x":"mcp_"}}', '{"event_id":12,"event_type":"mcp_request"}', "plain"];
  return { events, foreign, base };
}

const wrap = (event: Obj, index: number): Obj => ({ source: event, $workers: { scriptName: "magnt-observer", n: index }, $metadata: { level: "log" } });

/** Writes the export in one of the shapes; returns the file texts. */
function shapeFiles(shape: string, events: Obj[], foreign: string[], seed: number): string[] {
  const random = prng(seed * 7 + 1);
  const wrapped = events.map((event, index) => (random() < 0.5 ? wrap(event, index) : event));
  switch (shape) {
    case "ndjson":
      return [[...wrapped.map((record) => JSON.stringify(record)), ...foreign, ""].join("\n")];
    case "array":
      return [JSON.stringify(wrapped, null, random() < 0.5 ? 2 : undefined)];
    case "envelope":
      return [JSON.stringify({ success: true, errors: [], result: { events: { count: wrapped.length, events: wrapped }, statistics: {} } }, null, random() < 0.5 ? 1 : undefined)];
    case "split": {
      const gateway = wrapped.filter((record) => !JSON.stringify(record).includes('"mcp_request"'));
      const core = wrapped.filter((record) => JSON.stringify(record).includes('"mcp_request"'));
      return [gateway.map((record) => JSON.stringify(record)).join("\n"), JSON.stringify({ result: { events: { events: core } } })];
    }
    default: {
      // Several files of mixed shapes, overlapping (re-exported ranges).
      const half = Math.floor(wrapped.length / 2);
      return [wrapped.slice(0, half + 20).map((record) => JSON.stringify(record)).join("\n") + "\n" + foreign.join("\n"), JSON.stringify(wrapped.slice(half))];
    }
  }
}

describe("magnt metrics agrees with an independent reference summariser", () => {
  const dir = mkdtempSync(join(tmpdir(), "magnt-metrics-ref-"));
  const shapes = ["ndjson", "array", "envelope", "split", "mixed"];
  const seeds = Array.from({ length: 12 }, (_, index) => index + 1);
  const seenCases = { correlated: 0, outside: 0, notSeen: 0, duplicates: 0, unparseable: 0, outsideWindow: 0 };

  it.each(seeds)("seed %i, every shape, with and without a window", async (seed) => {
    const { events, foreign, base } = generateExport(seed);
    for (const shape of shapes) {
      const texts = shapeFiles(shape, events, foreign, seed);
      const paths = texts.map((text, index) => {
        const path = join(dir, `${seed}-${shape}-${index}.${index === 0 && shape !== "array" && shape !== "envelope" ? "ndjson" : "json"}`);
        writeFileSync(path, text);
        return path;
      });
      const windowed = seed % 2 === 0;
      const since = base + 12 * 3_600_000 + seed;
      const until = since + 86_400_000;
      const args = windowed ? ["--since", new Date(since).toISOString(), "--until", new Date(until).toISOString()] : [];
      const result = await runMagnt(["metrics", ...paths, ...args, "--json"]);
      expect(result.code, result.stderr).toBe(0);
      const expected = referenceSummary(texts, windowed ? since : null, windowed ? until : null);
      expect(JSON.parse(result.lines[0]!), `seed ${seed}, ${shape}`).toEqual(expected);
      expect((expected.inputs as { counted_events: number }).counted_events).toBeGreaterThan(0);
      const summary = expected as { inputs: Record<string, number>; mcp: { receipt_correlation: Record<string, number> } };
      seenCases.correlated += summary.mcp.receipt_correlation.correlated_signal_ids!;
      seenCases.outside += summary.mcp.receipt_correlation.outside_24h!;
      seenCases.notSeen += summary.mcp.receipt_correlation.receipt_not_seen!;
      seenCases.duplicates += summary.inputs.duplicates_removed!;
      seenCases.unparseable += summary.inputs.unparseable_records!;
      seenCases.outsideWindow += summary.inputs.outside_time_window!;
    }
  });

  it("the generated exports exercise every correlation outcome and every input counter", () => {
    for (const [name, total] of Object.entries(seenCases)) expect(total, name).toBeGreaterThan(0);
  });
});
