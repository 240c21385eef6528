/**
 * Shared pieces of the dialogue suites (07): the flag set, a known token key,
 * official clients with the dialogue on, raw calls for byte comparisons, and
 * direct D1 writes for replies (owner publishing is wired on the owner server,
 * so the public-side suites insert published replies themselves).
 */
import type { Env } from "../../worker/config/env";
import { db, selectRows } from "../helpers/db";
import { callToolModern, connectV1, connectV2, type RawOptions } from "../helpers/mcp";

export type Structured = Record<string, any>;
type Overrides = Partial<Record<keyof Env, unknown>>;

/** Base64url of 32 fixed bytes: a valid DIALOGUE_TOKEN_KEY the tests can recompute tokens with. */
export const KEY_BYTES = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) & 0xff);
export const TOKEN_KEY = base64url(KEY_BYTES);
/** A second valid key (the operator changed the key). */
export const OTHER_KEY = base64url(Uint8Array.from({ length: 48 }, (_, i) => (i * 53 + 7) & 0xff));

export const DIALOGUE_ON: Overrides = { DIALOGUE_ENABLED: "true", DIALOGUE_TOKEN_KEY: TOKEN_KEY };
export const RECEIPTS_ON: Overrides = { ...DIALOGUE_ON, DIALOGUE_READ_RECEIPTS_ENABLED: "true" };

export function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The token 07 §2 prescribes for `dialogueId` under `keyBytes`, computed independently of the Worker. */
export async function expectedToken(dialogueId: string, keyBytes: Uint8Array = KEY_BYTES): Promise<string> {
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(dialogueId));
  return `dt_${base64url(new Uint8Array(mac))}`;
}

/** A raw modern tools/call with the dialogue on (or other overrides): structured result plus the exact text bytes. */
export async function call(name: string, args: unknown, overrides: Overrides = DIALOGUE_ON, options: RawOptions = {}) {
  const { result, message } = await callToolModern(name, args, { ...options, overrides: { ...overrides, ...options.overrides } });
  return {
    result,
    error: message.error,
    structured: result?.structuredContent as Structured | undefined,
    text: result?.content[0]?.text ?? "",
    isError: result?.isError === true,
  };
}

export const propose = (args: Record<string, unknown>, overrides: Overrides = DIALOGUE_ON) => call("propose_contact", args, overrides);
export const fetchReply = (args: Record<string, unknown>, overrides: Overrides = DIALOGUE_ON) => call("fetch_contact_reply", args, overrides);

/** Opens a dialogue; returns the receipt, the token and the stored dialogue id. */
export async function openDialogue(summary = "Hello, a dialogue please", extra: Record<string, unknown> = {}, overrides: Overrides = DIALOGUE_ON) {
  const { structured } = await propose({ summary, is_test: true, ...extra }, overrides);
  if (structured?.dialogue?.status !== "token_issued") throw new Error(`no token issued: ${JSON.stringify(structured)}`);
  const contactId = structured.contact_id as string;
  const token = structured.dialogue.dialogue_token as string;
  return { receipt: structured, contactId, token, dialogueId: await dialogueIdOf(contactId) };
}

export async function dialogueIdOf(contactId: string): Promise<string> {
  const [row] = await selectRows<{ dialogue_id: string }>("SELECT dialogue_id FROM dialogue_contacts WHERE contact_id = ?", contactId);
  if (!row) throw new Error("contact has no dialogue");
  return row.dialogue_id;
}

let replySequence = 0;

/** Inserts a published reply directly (what owner_publish_reply stores), `published_at` strictly increasing. */
export async function insertReply(dialogueId: string, contactId: string, body: string, publishedAt?: string) {
  replySequence += 1;
  const replyId = `rp_${crypto.randomUUID()}`;
  const at = publishedAt ?? new Date(Date.UTC(2026, 0, 1, 0, 0, replySequence)).toISOString();
  await db()
    .prepare(
      `INSERT INTO dialogue_replies (reply_id, dialogue_id, contact_id, draft_id, draft_revision, body, published_at, fetched_at)
       VALUES (?, ?, ?, ?, 1, ?, ?, NULL)`,
    )
    .bind(replyId, dialogueId, contactId, `dr_${crypto.randomUUID()}`, body, at)
    .run();
  return { replyId, publishedAt: at };
}

export { connectV1, connectV2 };
