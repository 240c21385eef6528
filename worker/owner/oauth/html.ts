/**
 * The owner gateway's HTML pages (06 §2, §3.3): the consent page and every
 * error page shown before the owner's decision.
 *
 * Threat model: the page shows values a stranger chose (client name, redirect
 * host, state) to the one person whose approval mints owner tokens. So every
 * interpolated value is escaped, the page runs no script (`default-src
 * 'none'`), cannot be framed (clickjacking on the Approve button), sends no
 * referrer, and may submit forms only to the gateway itself and to the GitHub
 * origin in use. The consent page additionally names the validated redirect
 * URI's origin in `form-action`: a browser applies `form-action` to the
 * redirects that follow a form submission, and Deny (and a stand-in GitHub
 * that approves at once) ends at that URI.
 */

import { escapeHtml } from "../../lib/html";

/** The CSP of 06 §2; `extraFormActions` are already validated origins. */
export function contentSecurityPolicy(githubOauthOrigin: string, extraFormActions: readonly string[] = []): string {
  const formAction = ["'self'", githubOauthOrigin, ...extraFormActions.filter((origin) => origin !== githubOauthOrigin)];
  return `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction.join(" ")}; frame-ancestors 'none'`;
}

/** Headers of every HTML page of the owner gateway. */
export function htmlHeaders(csp: string): Headers {
  return new Headers({
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Content-Security-Policy": csp,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
  });
}

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1a1a1a}" +
  "h1{font-size:1.4rem}ul{padding-left:1.2rem}.publish{border:2px solid #b00020;padding:.5rem;background:#fff4f4}" +
  ".warning{border:2px solid #8a5a00;padding:.5rem;background:#fff8e6}.verified{border-left:4px solid #1a7f37;padding-left:.5rem}" +
  "button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.6rem}code{word-break:break-all}";

/** A whole page around `body` (already escaped HTML). */
export function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`
  );
}

/** An HTML error page: the problem is named, nothing from the request is echoed. */
export function errorPage(status: number, title: string, message: string, csp: string, extraHeaders?: Headers): Response {
  const headers = htmlHeaders(csp);
  extraHeaders?.forEach((value, name) => headers.append(name, value));
  const body = `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`;
  return new Response(page(title, body), { status, headers });
}
