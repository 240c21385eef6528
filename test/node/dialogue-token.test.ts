/**
 * The pure pieces of the dialogue token (07 §2, §5.3): the key decoder's
 * accept/refuse rules and the UTC-hour attempt window.
 */
import { describe, expect, it } from "vitest";
import { decodeBase64urlKey } from "../../worker/lib/base64url";
import { attemptWindow, MIN_DIALOGUE_KEY_BYTES } from "../../worker/lib/dialogue-token";

const encode = (bytes: number) => Buffer.alloc(bytes, 0xfb).toString("base64url");

describe("decodeBase64urlKey", () => {
  it("accepts base64url of at least 32 bytes, with or without complete padding", () => {
    expect(decodeBase64urlKey(encode(32), MIN_DIALOGUE_KEY_BYTES)).toHaveLength(32);
    expect(decodeBase64urlKey(encode(64), MIN_DIALOGUE_KEY_BYTES)).toHaveLength(64);
    expect(decodeBase64urlKey(`${encode(32)}=`, MIN_DIALOGUE_KEY_BYTES)).toHaveLength(32);
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["31 bytes", encode(31)],
    ["standard base64 alphabet", Buffer.alloc(32, 0xfb).toString("base64")],
    ["whitespace", ` ${encode(32)}`],
    ["impossible length", `${encode(32)}A`.slice(0, 41)],
    ["incomplete padding", `${encode(33)}=`],
  ])("refuses %s", (_label, value) => {
    expect(decodeBase64urlKey(value, MIN_DIALOGUE_KEY_BYTES)).toBeNull();
  });
});

describe("attemptWindow", () => {
  it("starts at the UTC hour and retries when it ends", () => {
    const start = Date.UTC(2026, 4, 3, 17, 0, 0, 0);
    expect(attemptWindow(start)).toEqual({ start: "2026-05-03T17:00:00.000Z", retryAfterS: 3600 });
    expect(attemptWindow(start + 3_599_400)).toEqual({ start: "2026-05-03T17:00:00.000Z", retryAfterS: 1 });
    expect(attemptWindow(start + 3_600_000).start).toBe("2026-05-03T18:00:00.000Z");
    expect(attemptWindow(start + 1_800_000).retryAfterS).toBe(1800);
  });
});
