/**
 * What a cron run needs before it may touch anything (05 §5 steps 1–2): the
 * main flag, the D1 binding, both Telegram secrets and an acceptable API
 * origin. Anything missing or malformed fails closed as `misconfigured`:
 * nothing is read, written or sent, so nothing is lost either.
 *
 * Threat model: the token ends up inside a URL path and the chat id inside a
 * request body. A token that is not the Bot API's `<digits>:<base64url>` form
 * could smuggle path segments or a query into that URL, and an API origin
 * that is not the default or a loopback stand-in would send the token to a
 * third party; both are refused here rather than "fixed".
 */
import { PREVIEW_MODE_METADATA_ONLY } from "../contracts/flags";
import type { Env } from "../config/env";
import { isOn } from "../config/flags";
import { loopbackOverride } from "../edge/outbound";

/** Production origin of the Bot API (00 §7). */
export const TELEGRAM_DEFAULT_API_ORIGIN = "https://api.telegram.org";

const BOT_TOKEN_PATTERN = /^[0-9]{1,20}:[A-Za-z0-9_-]{1,200}$/;
/** A numeric chat id (private chats, groups, supergroups) or a public @username. */
const CHAT_ID_PATTERN = /^(?:-?[0-9]{1,20}|@[A-Za-z0-9_]{4,64})$/;

export type PreviewMode = "excerpt" | "metadata_only";

export interface NotifyConfig {
  db: D1Database;
  token: string;
  chatId: string;
  apiOrigin: string;
  previewMode: PreviewMode;
}

export type NotifyConfigResult = { kind: "disabled" } | { kind: "misconfigured" } | { kind: "ready"; config: NotifyConfig };

export function readNotifyConfig(env: Env): NotifyConfigResult {
  if (!isOn(env, "TELEGRAM_NOTIFICATIONS_ENABLED")) return { kind: "disabled" };
  const db = env.CONTACTS;
  const token = env.TELEGRAM_BOT_TOKEN;
  const chatId = env.TELEGRAM_OWNER_CHAT_ID;
  const apiOrigin = loopbackOverride(env.TELEGRAM_API_ORIGIN, TELEGRAM_DEFAULT_API_ORIGIN);
  if (db === undefined || apiOrigin === null) return { kind: "misconfigured" };
  if (token === undefined || !BOT_TOKEN_PATTERN.test(token)) return { kind: "misconfigured" };
  if (chatId === undefined || !CHAT_ID_PATTERN.test(chatId)) return { kind: "misconfigured" };
  return { kind: "ready", config: { db, token, chatId, apiOrigin, previewMode: previewModeOf(env) } };
}

/** `metadata_only` exactly → no visitor text in any message; anything else → excerpt mode (05 §1). */
export function previewModeOf(env: Env): PreviewMode {
  return env.TELEGRAM_PREVIEW_MODE === PREVIEW_MODE_METADATA_ONLY ? "metadata_only" : "excerpt";
}
