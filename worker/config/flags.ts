import { readReceiptsInForce, type FlagName } from "../contracts/flags";
import type { Env } from "./env";

/**
 * Whether a flag is on. Exactly the string "true" turns a flag on: no trimming,
 * no case folding, so a stray "TRUE" or " true" in the dashboard can never
 * switch on a feature by accident (00 §6).
 */
export function isOn(env: Env, name: FlagName): boolean {
  return env[name] === "true";
}

/** The dialogue flags as they take effect (07 §1). */
export interface DialogueFlags {
  /** `DIALOGUE_ENABLED`. */
  readonly dialogue: boolean;
  /** `DIALOGUE_REPLIES_ENABLED`, only while `DIALOGUE_ENABLED` is on. */
  readonly replies: boolean;
  /** `DIALOGUE_READ_RECEIPTS_ENABLED`, only while `DIALOGUE_ENABLED` is on. */
  readonly readReceipts: boolean;
}

/**
 * The one reading of the dialogue flags' dependency (07 §1): replies and read
 * receipts need the dialogue, so with DIALOGUE_ENABLED off they count as off
 * even when still set — `magnt flags disable DIALOGUE_ENABLED` leaves them in
 * place, and a secret can be set without `magnt flags`, whose `enable` refuses
 * them while the dialogue is off. Publishing, fetching, revoking and read
 * receipts therefore all stop together.
 */
export function dialogueFlags(env: Env): DialogueFlags {
  const dialogue = isOn(env, "DIALOGUE_ENABLED");
  return {
    dialogue,
    replies: dialogue && isOn(env, "DIALOGUE_REPLIES_ENABLED"),
    readReceipts: readReceiptsInForce((name) => isOn(env, name)),
  };
}
