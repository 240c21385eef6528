/**
 * Telemetry labels of the bridge (04 §7). Only allow-listed names and fixed
 * values reach the event: a raw method or version string from a visitor is
 * never logged, because it may carry anything (04 §7, 01 §12).
 */
import { A2A_METHOD_VALUES, UNKNOWN_VALUE, type A2A_PROTOCOL_VERSION_VALUES, type A2aMethodLabel } from "../contracts/events";

export type A2aVersionLabel = (typeof A2A_PROTOCOL_VERSION_VALUES)[number];

const KNOWN_METHODS: ReadonlySet<string> = new Set<string>(A2A_METHOD_VALUES);

/** One of the 11 v1.0 or 10 v0.3 method names, else `unknown`. */
export function a2aMethodLabel(method: string): A2aMethodLabel {
  return KNOWN_METHODS.has(method) ? (method as A2aMethodLabel) : UNKNOWN_VALUE;
}
