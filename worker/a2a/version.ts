/**
 * Step 7 of the POST processing order (04 §3): the A2A version a client speaks.
 *
 * The bridge speaks A2A 1.0. A client that sends no version is a 0.3 client
 * by the A2A rules: of 0.3 it gets `message/send` answered, and `-32009`
 * naming the MCP URL for everything else (04 §6). This check runs before
 * dispatch precisely so that the version, not the method name, decides which
 * table answers, and every client still learns where MAGNT's tools are.
 */
import type { A2aVersionLabel } from "./labels";

/** `1.0` with an optional patch (ignored). ASCII digits only. */
const SUPPORTED_VERSION = /^1\.0(\.\d+)?$/;

const A2A_VERSION_HEADER = "A2A-Version";

/**
 * The header wins when present (even empty); otherwise the query parameter of
 * the same name. Trimmed; empty or absent means 0.3.
 */
export function readRequestedVersion(request: Request, url: URL): string {
  const raw = request.headers.get(A2A_VERSION_HEADER) ?? url.searchParams.get(A2A_VERSION_HEADER) ?? "";
  return raw.trim();
}

/**
 * The version class, which is also the telemetry label (04 §7): `1.0`; `0.3`
 * for an absent, empty or `0.`-prefixed version; `unsupported` otherwise.
 */
export function checkVersion(version: string): A2aVersionLabel {
  if (SUPPORTED_VERSION.test(version)) return "1.0";
  if (version === "" || version.startsWith("0.")) return "0.3";
  return "unsupported";
}
