/**
 * The pieces behind `magnt review`'s human output: sanitising untrusted text,
 * measuring it in terminal columns, cutting and wrapping it on grapheme
 * boundaries, choosing table columns for a width, and which width is used.
 */
import { describe, expect, it } from "vitest";
import { terminalSafeJson, terminalWidth } from "../../cli/lib/output";
import { layoutTable, type LayoutColumn } from "../../cli/lib/table-layout";
import { displayWidth, hasTerminalControls, sanitiseTerminalText, truncateToWidth, wrapToWidth } from "../../cli/lib/terminal-text";
import { hasDisplayControls, stripDisplayControls } from "../../worker/contracts/display-controls";

describe("sanitiseTerminalText", () => {
  it("removes sequences with their payload and keeps the visible text", () => {
    expect(sanitiseTerminalText("a\u001b[1;31mb\u001b[0mc", { lineBreaks: "mark" })).toBe("abc");
    expect(sanitiseTerminalText("a\u001b]0;title\u0007b\u001b]8;;http://x\u001b\\c", { lineBreaks: "mark" })).toBe("abc");
    expect(sanitiseTerminalText("a\u001bPpayload\u001b\\b\u009dx\u009cc\u009b2Jd", { lineBreaks: "mark" })).toBe("abcd");
    expect(sanitiseTerminalText("a\u001b(0b\u001bcc\u001b7d", { lineBreaks: "mark" })).toBe("abcd");
  });

  it("line breaks: ⏎ in tables, \\n in the record view; tabs become spaces", () => {
    expect(sanitiseTerminalText("a\r\nb\rc\nd\te", { lineBreaks: "mark" })).toBe("a⏎b⏎c⏎d e");
    expect(sanitiseTerminalText("a\r\nb\rc\nd", { lineBreaks: "keep" })).toBe("a\nb\nc\nd");
  });

  it("removes every C0/C1 control, DEL, U+2028/9 and bidi control; keeps ZWJ emoji and accents", () => {
    const all = Array.from({ length: 0xa0 }, (_, code) => String.fromCharCode(code)).join("") + "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c";
    const cleaned = sanitiseTerminalText(all, { lineBreaks: "keep" });
    expect(cleaned).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/);
    expect(sanitiseTerminalText("👩‍💻 é é", { lineBreaks: "mark" })).toBe("👩‍💻 é é");
  });

  it("removes exactly the characters of the shared class the consent page uses (worker/contracts/display-controls.ts)", () => {
    // Tab and the line breaks are turned into text first; every other character is removed by the terminal iff the shared class removes it.
    for (let code = 0; code < 0x10000; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCharCode(code);
      if (char === "\t" || char === "\n" || char === "\r") continue;
      expect(sanitiseTerminalText(char, { lineBreaks: "keep" }), `U+${code.toString(16)}`).toBe(stripDisplayControls(char));
      expect(hasTerminalControls(char)).toBe(hasDisplayControls(char));
    }
  });
});

describe("columns", () => {
  it("measures wide and combining characters", () => {
    expect(displayWidth("abc")).toBe(3);
    expect(displayWidth("漢字")).toBe(4);
    expect(displayWidth("😀")).toBe(2);
    expect(displayWidth("é")).toBe(1);
    expect(displayWidth("я⏎…")).toBe(3);
  });

  it("truncates to a width with … and never splits a grapheme", () => {
    expect(truncateToWidth("abcdef", 6)).toBe("abcdef");
    expect(truncateToWidth("abcdefg", 6)).toBe("abcde…");
    expect(truncateToWidth("漢字漢字", 6)).toBe("漢字…");
    expect(truncateToWidth("👩‍💻👩‍💻👩‍💻", 5)).toBe("👩‍💻👩‍💻…");
    expect(displayWidth(truncateToWidth("漢".repeat(10), 7))).toBeLessThanOrEqual(7);
  });

  it("wraps at spaces, breaks long words, keeps every character", () => {
    expect(wrapToWidth("aaa bbb ccc", 7)).toEqual(["aaa bbb", "ccc"]);
    expect(wrapToWidth("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    const text = "lorem ipsum dolor sit amet, consectetur adipiscing elit";
    const lines = wrapToWidth(text, 12);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(12);
    expect(lines.join(" ")).toBe(text);
  });
});

describe("layoutTable", () => {
  const columns: LayoutColumn[] = [
    { name: "id", shape: "id", priority: 1 },
    { name: "created_at", shape: "date", priority: 3 },
    { name: "text", shape: "text", priority: 2 },
    { name: "status", shape: "word", priority: 4 },
  ];
  const cells = [["mc_0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b", "2026-01-01T00:00:00.000Z", "x".repeat(100), "pending"]];
  const total = (widths: number[]): number => widths.reduce((sum, w) => sum + w + 3, 1);

  it("keeps ids and dates whole, gives text the rest, and never exceeds the width", () => {
    for (const width of [60, 80, 100, 140, 200]) {
      const layout = layoutTable(columns, cells, width);
      expect(total(layout.shown.map((s) => s.width))).toBeLessThanOrEqual(width);
      for (const shown of layout.shown) if (shown.column.shape !== "text") expect(shown.width).toBeGreaterThanOrEqual(displayWidth(cells[0]![shown.index]!));
    }
  });

  it("drops columns lowest priority first, keeping a prefix of the priority order", () => {
    expect(layoutTable(columns, cells, 80).hidden).toEqual(["created_at", "status"]);
    expect(layoutTable(columns, cells, 100).hidden).toEqual(["status"]);
    expect(layoutTable(columns, cells, 103).hidden).toEqual([]);
    expect(layoutTable(columns, cells, 300).hidden).toEqual([]);
    expect(layoutTable(columns, cells, 300).shown.find((s) => s.column.name === "text")?.width).toBe(60);
  });

  it("always shows the first column, even when it alone is too wide", () => {
    const layout = layoutTable(columns, cells, 20);
    expect(layout.shown.map((s) => s.column.name)).toEqual(["id"]);
  });
});

describe("the width human output is fitted to", () => {
  it("the TTY's columns, else COLUMNS, else 80", () => {
    expect(terminalWidth(Object.assign({ write: () => true, isTTY: true }, { columns: 123 }), {})).toBe(123);
    expect(terminalWidth(Object.assign({ write: () => true, isTTY: true }, { columns: 123 }), { COLUMNS: "200" })).toBe(123);
    expect(terminalWidth({ write: () => true, isTTY: false }, { COLUMNS: "200" })).toBe(200);
    expect(terminalWidth({ write: () => true, isTTY: true }, {})).toBe(80);
    expect(terminalWidth({ write: () => true }, { COLUMNS: "wide" })).toBe(80);
    expect(terminalWidth({ write: () => true }, { COLUMNS: "0" })).toBe(80);
  });
});

describe("terminalSafeJson", () => {
  it("escapes DEL, C1, separators and bidi controls, and parses back to the same value", () => {
    const value = { a: "x\u007f\u009b\u2028\u202e\u2066\u200f\u061cy", b: ["\u001b[31m"] };
    const json = terminalSafeJson(value);
    expect(json).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/);
    expect(JSON.parse(json)).toEqual(value);
  });
});
