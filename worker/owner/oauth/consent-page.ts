/**
 * The consent page (06 §3.3): what the owner reads before his click mints a
 * grant. A plain HTML form, no script: the signed consent request and the CSRF
 * nonce in hidden inputs, and two submit buttons named `decision` with values
 * `approve` and `deny`. Every value a client chose is escaped.
 */
import type { OwnerScope } from "./scopes";
import { escapeHtml } from "../../lib/html";
import { page } from "./html";

/** Plain-language meaning of each scope as the owner reads it. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<OwnerScope, string>> = {
  "owner.read": "read the contacts and observed goals visitors left at the door",
  "owner.write": "save private drafts and change the state of contacts (nothing is sent)",
  "owner.publish": "lets this client publish replies that visitors can read",
};

export interface ConsentView {
  readonly clientName: string;
  readonly redirectHost: string;
  readonly scopes: readonly OwnerScope[];
  /** The signed consent request (opaque to the page). */
  readonly consent: string;
  /** The CSRF nonce, also set as the cookie. */
  readonly nonce: string;
}

export function consentPageHtml(view: ConsentView): string {
  const ordinary = view.scopes.filter((scope) => scope !== "owner.publish");
  const lines = ordinary
    .map((scope) => `<li><code>${escapeHtml(scope)}</code>: ${escapeHtml(SCOPE_DESCRIPTIONS[scope])}</li>`)
    .join("");
  const publish = view.scopes.includes("owner.publish")
    ? `<p class="publish"><strong>Also requested: <code>owner.publish</code></strong> — ${escapeHtml(SCOPE_DESCRIPTIONS["owner.publish"])}.</p>`
    : "";
  const body =
    `<h1>Allow ${escapeHtml(view.clientName)} to act for the owner of MAGNT?</h1>` +
    `<p>After approval you sign in with GitHub; only the owner's GitHub account is accepted. ` +
    `The answer goes to <strong>${escapeHtml(view.redirectHost)}</strong>.</p>` +
    (lines === "" ? "" : `<p>This client asks to:</p><ul>${lines}</ul>`) +
    publish +
    `<form method="post" action="/oauth/authorize">` +
    `<input type="hidden" name="consent" value="${escapeHtml(view.consent)}">` +
    `<input type="hidden" name="csrf" value="${escapeHtml(view.nonce)}">` +
    `<button type="submit" name="decision" value="approve">Approve</button>` +
    `<button type="submit" name="decision" value="deny">Deny</button>` +
    `</form>`;
  return page("Authorize a client — MAGNT owner", body);
}
