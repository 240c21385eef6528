/**
 * The consent page (06 §3.3): what the owner reads before his click mints a
 * grant. A plain HTML form, no script: the signed consent request and the CSRF
 * nonce in hidden inputs, and two submit buttons named `decision` with values
 * `approve` and `deny`.
 *
 * Threat model: everything the page shows about the client was chosen by
 * whoever registered it, and anyone can register a client and send the owner
 * the link. So:
 * - the page's own sentences hold no client text: the heading names no one,
 *   and the name (already cleaned of display controls, client-name.ts) stands
 *   on its own line inside `<bdi>`, labelled as the name the client chose for
 *   itself, so even a right-to-left name cannot reorder the words around it;
 * - the answer's destination is shown in full and in ASCII (redirect-uris.ts
 *   `redirectTarget`), so an IDN look-alike shows as punycode;
 * - a non-loopback destination — a hosted platform such as claude.ai, where
 *   anyone can hold an account — gets one sentence: approve only if you
 *   started this connection yourself, just now, from that site. A stranger's
 *   client with the platform's own callback would otherwise land the owner's
 *   tokens in the stranger's account there;
 * - a client described by a metadata document (client-metadata.ts) is shown
 *   with the one fact this server checked — the host that served the
 *   document, in ASCII, on its own line marked as verified — and its name
 *   stays labelled as self-chosen, so the two are never confused. Its
 *   loopback destination gets a sentence of its own: the document is public,
 *   so any program on the owner's machine can present that identity.
 * Every interpolated value is escaped.
 */
import type { OwnerScope } from "./scopes";
import { escapeHtml } from "../../lib/html";
import { page } from "./html";
import type { RedirectTarget } from "./redirect-uris";

/** Plain-language meaning of each scope as the owner reads it. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<OwnerScope, string>> = {
  "owner.read": "read the contacts and observed goals visitors left at the door",
  "owner.write": "save private drafts and change the state of contacts (nothing is sent)",
  "owner.publish": "lets this client publish replies that visitors can read",
};

export interface ConsentView {
  /** Already cleaned (`clientDisplayName`). */
  readonly clientName: string;
  /** The host (ASCII, `URL.host`) that served the client's metadata document; null for a registered client. */
  readonly verifiedHost: string | null;
  readonly redirect: RedirectTarget;
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
  const { redirect, verifiedHost } = view;
  const warning = !redirect.loopback
    ? `<p class="warning"><strong>Approve only if you started this connection yourself, just now, from ${escapeHtml(redirect.origin)}:</strong> ` +
      `the owner's tokens go to whichever account on that site started it.</p>`
    : verifiedHost !== null
      ? `<p class="warning"><strong>Approve only if you started this connection yourself, just now:</strong> ` +
        `the answer goes to a program on this computer, and any program can present the identity of ${escapeHtml(verifiedHost)}.</p>`
      : "";
  const verified =
    verifiedHost === null
      ? ""
      : `<p class="verified">Verified: <strong class="client-host">${escapeHtml(verifiedHost)}</strong> ` +
        `serves this client's metadata document over https.</p>`;
  const nameCheck = verifiedHost === null ? "nothing checks it" : "only the host above is checked";
  const body =
    `<h1>Allow a client to act for the owner of MAGNT?</h1>` +
    verified +
    `<p>The client calls itself <strong><bdi class="client-name">${escapeHtml(view.clientName)}</bdi></strong>. ` +
    `It chose that name for itself; ${nameCheck}.</p>` +
    `<p>The answer goes to <code class="redirect-uri">${escapeHtml(redirect.uri)}</code> ` +
    `on <strong class="redirect-host">${escapeHtml(redirect.host)}</strong>. ` +
    `After approval you sign in with GitHub; only the owner's GitHub account is accepted.</p>` +
    warning +
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
