/**
 * The canonical content of a contact and its hash (02 §5.2). Retries are
 * recognised by `submission_id`; the hash decides whether a retry carries the
 * same message (duplicate) or a different one (conflict). Ids and client
 * metadata are deliberately outside the hash.
 */
import { sha256Hex } from "../lib/hash";
import type { ContactInput } from "./schema";

export function canonicalContact(input: ContactInput) {
  return {
    summary: input.summary,
    intent: input.intent ?? null,
    what_you_need_from_human: input.what_you_need_from_human ?? null,
    agent_identity: input.agent_identity ?? null,
    operator: input.operator ?? null,
    reply_to: input.reply_to ?? null,
    found_via: input.found_via ?? null,
    previous_contact_id: input.previous_contact_id ?? null,
    self_reported_test: input.is_test === true ? 1 : 0,
  };
}

export function contactPayloadHash(input: ContactInput): Promise<string> {
  return sha256Hex(JSON.stringify(canonicalContact(input)));
}
