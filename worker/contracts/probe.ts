/**
 * The probe document's path and keys (01 §7). `magnt probe-check` refuses any
 * key outside this list; worker/site/probe.ts checks at compile time that its
 * `ProbeDocument` has exactly these keys.
 */
export const PROBE_PATH = "/__magnt_probe";

export const PROBE_FIELDS = [
  "ok",
  "service",
  "role",
  "mcp_door_version",
  "shared_memory_version",
  "owner_release",
  "dialogue_release",
  "dialogue_enabled",
  "contact_storage_configured",
  "shared_memory_storage_configured",
  "core_reachable",
  "origin",
  "time",
  "host",
  "path",
  "clientKind",
  "clientName",
  "country",
  "colo",
] as const;

export type ProbeField = (typeof PROBE_FIELDS)[number];
