/**
 * The name a client is registered and shown under (06 §3.2, §3.3).
 *
 * Threat model: `client_name` is chosen by whoever registers, and the consent
 * page shows it to the one person whose click mints owner tokens. A name
 * holding a right-to-left override (`Claude \u202Eetirw.renwo daer\u202C`)
 * would read "Claude read owner.write"; a line separator or a C1 control
 * would break or hide the text around it. So every display control (the
 * shared class of worker/contracts/display-controls.ts, the same as the
 * owner's terminal) is removed before anything else, then the name is trimmed
 * and measured. The rule runs at registration, so the signed client id and
 * the registration answer hold the cleaned name, and again when a verified
 * client id is read for the consent page: a client id never expires, and one
 * signed before this rule may still carry the raw name.
 */
import { stripDisplayControls } from "../../contracts/display-controls";

/** Longest `client_name` as stored, in code points (pinned in 06 §3.2). */
export const CLIENT_NAME_MAX = 100;
/** The name of a client that sent none, or nothing printable. */
export const DEFAULT_CLIENT_NAME = "MCP client";

/** `raw` without display controls, trimmed; `MCP client` when nothing is left. Length is the caller's check. */
export function clientDisplayName(raw: string): string {
  const name = stripDisplayControls(raw).trim();
  return name === "" ? DEFAULT_CLIENT_NAME : name;
}
