/**
 * The Worker's environment, written by hand (spec 10 §8) so that every binding is
 * optional: each deployable has a different subset, and the code must behave as
 * specified when one is missing (for example `not_saved` without `CONTACTS`).
 */

/** Workers Rate Limiting binding (01 §14). */
export interface RateLimitBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

/** Analytics Engine dataset binding (01 §13). */
export interface AnalyticsBinding {
  writeDataPoint(point: { blobs?: string[]; doubles?: number[]; indexes?: string[] }): void;
}

/** `handleOwnerMcp`'s request (06 §5): structured-clone values only, no `Request` object. */
export interface OwnerMcpRpcRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: [string, string][];
  /** At most 24 576 bytes; null when there is none. */
  readonly body: ArrayBuffer | null;
}

/** The token the owner gateway verified and the claims it read from it; core verifies both again (06 §5). */
export interface OwnerMcpRpcAuth {
  readonly token: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

/** `handleOwnerMcp`'s answer: a buffered body for an answer that ends, the unread stream otherwise (06 §5). */
export interface OwnerMcpRpcResponse {
  readonly status: number;
  readonly headers: [string, string][];
  readonly body: ArrayBuffer | ReadableStream<Uint8Array> | null;
}

/** Core's named entrypoint `OwnerEntrypoint` as the owner gateway's `OWNER_CORE` binding sees it (06 §5). */
export interface OwnerCoreBinding {
  handleOwnerMcp(req: OwnerMcpRpcRequest, auth: OwnerMcpRpcAuth): Promise<OwnerMcpRpcResponse>;
  /** True only for the first caller with `id`; throws when core refuses (owner off or misconfigured) or cannot store. */
  spendOnce(id: string, kind: "code" | "refresh" | "family", expiresAt: string): Promise<boolean>;
  isSpent(id: string): Promise<boolean>;
}

export interface Env {
  // Variables (00 §7).
  PUBLIC_ORIGIN?: string;
  ALLOWED_HOSTS?: string;
  SITE_ORIGIN?: string;
  OWNER_ORIGIN?: string;
  OWNER_REDIRECT_ORIGINS?: string;
  /** Telegram Bot API origin; only the default or a loopback stand-in is accepted (00 §7, 05 §5). */
  TELEGRAM_API_ORIGIN?: string;

  // Bindings.
  CONTACTS?: D1Database;
  ANALYTICS?: AnalyticsBinding;
  PUBLIC_WRITES?: RateLimitBinding;
  CORE?: Fetcher;
  /** Owner gateway only: core's `OwnerEntrypoint` (00 §3, 06 §5). */
  OWNER_CORE?: OwnerCoreBinding;

  // Flags and secrets arrive as strings (00 §6, §7); read flags only through isOn().
  TELEGRAM_NOTIFICATIONS_ENABLED?: string;
  TELEGRAM_GOAL_NOTIFICATIONS_ENABLED?: string;
  TELEGRAM_PREVIEW_MODE?: string;
  OWNER_MCP_ENABLED?: string;
  OWNER_MCP_WRITE_ENABLED?: string;
  DIALOGUE_ENABLED?: string;
  DIALOGUE_REPLIES_ENABLED?: string;
  DIALOGUE_READ_RECEIPTS_ENABLED?: string;
  TELEGRAM_BOT_TOKEN?: string;
  TELEGRAM_OWNER_CHAT_ID?: string;
  DIALOGUE_TOKEN_KEY?: string;
}

/** Production default of PUBLIC_ORIGIN, used only when the variable is absent. */
const DEFAULT_PUBLIC_ORIGIN = "https://magnt.ru";

/** The canonical public origin without a trailing slash. Never derived from the request URL. */
export function publicOrigin(env: Env): string {
  const configured = (env.PUBLIC_ORIGIN ?? "").trim().replace(/\/+$/, "");
  return configured === "" ? DEFAULT_PUBLIC_ORIGIN : configured;
}

/** The static-site origin without a trailing slash, or "" for the built-in page. */
export function siteOrigin(env: Env): string {
  return (env.SITE_ORIGIN ?? "").trim().replace(/\/+$/, "");
}
