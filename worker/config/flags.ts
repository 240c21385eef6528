import type { FlagName } from "../contracts/flags";
import type { Env } from "./env";

/**
 * Whether a flag is on. Exactly the string "true" turns a flag on: no trimming,
 * no case folding, so a stray "TRUE" or " true" in the dashboard can never
 * switch on a feature by accident (00 §6).
 */
export function isOn(env: Env, name: FlagName): boolean {
  return env[name] === "true";
}
