/**
 * Step 7 of the POST processing order (04 §3): the A2A version a client speaks.
 *
 * The bridge is strict v1 only (04 §6). A client that sends no version is a
 * 0.3 client by the A2A rules, and it gets `-32009` naming the MCP URL: this
 * check runs before dispatch precisely so that such a client still learns
 * where MAGNT's tools are.
 */
import type { A2aVersionLabel } from "./labels";

/** `1.0` with an optional patch (ignored). ASCII digits only. */
const SUPPORTED_VERSION = /^1\.0(\.\d+)?$/;

const A2A_VERSION_HEADER = "A2A-Version";

type VersionCheck =
  | { readonly supported: true; readonly label: "1.0" }
  | { readonly supported: false; readonly label: Exclude<A2aVersionLabel, "1.0"> };

/**
 * The header wins when present (even empty); otherwise the query parameter of
 * the same name. Trimmed; empty or absent means 0.3.
 */
export function readRequestedVersion(request: Request, url: URL): string {
  const raw = request.headers.get(A2A_VERSION_HEADER) ?? url.searchParams.get(A2A_VERSION_HEADER) ?? "";
  return raw.trim();
}

export function checkVersion(version: string): VersionCheck {
  if (SUPPORTED_VERSION.test(version)) return { supported: true, label: "1.0" };
  if (version === "" || version.startsWith("0.")) return { supported: false, label: "0.3" };
  return { supported: false, label: "unsupported" };
}
