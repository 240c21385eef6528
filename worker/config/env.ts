/**
 * The Worker's environment, written by hand (spec 10 §8) so that every binding is
 * optional: each deployable has a different subset, and the code must behave as
 * specified when one is missing (for example `not_saved` without `CONTACTS`).
 */
import type { OwnerCoreBinding } from "../contracts/owner-wire";

/** The owner binding's contract lives with its codec (contracts/owner-wire.ts); named here because `Env` types the binding. */
export type { OwnerCoreBinding, OwnerMcpRpcAuth, OwnerMcpRpcRequest, OwnerMcpRpcResponse } from "../contracts/owner-wire";

/** Workers Rate Limiting binding (01 §14). */
export interface RateLimitBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

/** Analytics Engine dataset binding (01 §13). */
export interface AnalyticsBinding {
  writeDataPoint(point: { blobs?: string[]; doubles?: number[]; indexes?: string[] }): void;
}

export interface Env {
  // Variables (00 §7).
  PUBLIC_ORIGIN?: string;
  ALLOWED_HOSTS?: string;
  SITE_ORIGIN?: string;
  OWNER_ORIGIN?: string;
  OWNER_REDIRECT_ORIGINS?: string;
  /** `https` origins whose URLs the owner gateway accepts as a `client_id` (Client ID Metadata Documents, 06 §3.7); empty: none. */
  OWNER_CLIENT_METADATA_ORIGINS?: string;
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
