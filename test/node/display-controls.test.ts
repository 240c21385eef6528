/**
 * The one class of display controls (worker/contracts/display-controls.ts)
 * shared by the owner's terminal, the consent page and its client names, and
 * the Telegram excerpt: exactly the characters of issue 17 item 1, over every
 * code point of the BMP and a sample beyond it.
 */
import { describe, expect, it } from "vitest";
import { hasDisplayControls, replaceDisplayControls, stripDisplayControls } from "../../worker/contracts/display-controls";

/** C0/C1 controls, DEL, U+2028/U+2029 and every bidirectional control, by code point. */
function listed(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    code === 0x061c
  );
}

const BMP = Array.from({ length: 0x10000 }, (_, code) => code).filter((code) => code < 0xd800 || code > 0xdfff);

describe("display controls", () => {
  it("removes exactly the listed characters and nothing else", () => {
    const removed = BMP.filter((code) => stripDisplayControls(String.fromCharCode(code)) === "");
    expect(removed).toEqual(BMP.filter(listed));
    for (const code of BMP) expect(hasDisplayControls(`a${String.fromCharCode(code)}b`)).toBe(listed(code));
    for (const astral of ["😀", "👩‍💻", "\u{1d400}", "\u{e0041}"]) expect(stripDisplayControls(astral)).toBe(astral);
  });

  it("keepLineFeeds leaves \\n and only \\n", () => {
    const all = BMP.filter(listed).map((code) => String.fromCharCode(code)).join("");
    expect(stripDisplayControls(all, { keepLineFeeds: true })).toBe("\n");
    expect(stripDisplayControls(all)).toBe("");
    expect(hasDisplayControls("a\nb", { keepLineFeeds: true })).toBe(false);
    expect(hasDisplayControls("a\nb")).toBe(true);
  });

  it("the reversing name of the issue loses its override; other scripts, ZWNJ and ZWJ stay", () => {
    expect(stripDisplayControls("Claude \u202Eetirw.renwo daer\u202C")).toBe("Claude etirw.renwo daer");
    expect(stripDisplayControls("می\u200cخواهم עברית 👩‍💻 é")).toBe("می\u200cخواهم עברית 👩‍💻 é");
    expect(replaceDisplayControls("a\u2028b\u202ec", () => " ")).toBe("a b c");
    // The global pattern keeps no state between calls.
    expect([hasDisplayControls("x\u202e"), hasDisplayControls("x\u202e"), hasDisplayControls("x")]).toEqual([true, true, false]);
  });
});
