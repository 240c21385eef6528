/**
 * The dialogue variant of the split deployment (07, C.1): flags and the token
 * key of a second core (`magnt-core-dialogue`) and the owner gateway in front
 * of it (`magnt-owner-dialogue`). Plain constants only, so both the Node-side
 * topology and the suites inside workerd can import them.
 *
 * Why a second pair and not the flags on `magnt-core`: the suites that prove
 * the public surface is unchanged compare `magnt-core` through the gateway
 * with the monolith byte for byte, with every dialogue flag off (07 §1: off →
 * nothing public changes). The dialogue variant runs beside it on the same D1.
 * Test-only values: the key below derives no real token.
 */

/** Base64url of 32 fixed bytes (test only): a valid DIALOGUE_TOKEN_KEY (07 §2). */
export const SPLIT_DIALOGUE_TOKEN_KEY = "c3BsaXQtZGlhbG9ndWUtdGVzdC10b2tlbi1rZXktMzI";

/** Every C.1 flag on, with the key (07 §1): what core reads. */
export const DIALOGUE_CORE_VARS = {
  DIALOGUE_ENABLED: "true",
  DIALOGUE_REPLIES_ENABLED: "true",
  DIALOGUE_READ_RECEIPTS_ENABLED: "true",
  DIALOGUE_TOKEN_KEY: SPLIT_DIALOGUE_TOKEN_KEY,
} as const;
