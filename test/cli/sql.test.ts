/** The one quoting helper of 08 §4 and the integer guard. */
import { describe, expect, it } from "vitest";
import { sqlInteger, sqlLiteral, inlineStatement } from "../../cli/lib/sql";

describe("sqlLiteral", () => {
  it("wraps in single quotes and doubles embedded quotes", () => {
    expect(sqlLiteral("abc")).toBe("'abc'");
    expect(sqlLiteral("")).toBe("''");
    expect(sqlLiteral("it's")).toBe("'it''s'");
    expect(sqlLiteral("ts_x'; DROP TABLE task_signals;--")).toBe("'ts_x''; DROP TABLE task_signals;--'");
    expect(sqlLiteral("''")).toBe("''''''");
  });
  it("refuses NUL", () => {
    expect(() => sqlLiteral("a\u0000b")).toThrow(RangeError);
  });
  it("keeps other characters verbatim", () => {
    expect(sqlLiteral('a"b\\c\nд😀')).toBe("'a\"b\\c\nд😀'");
  });
});

describe("sqlInteger", () => {
  it("accepts integers in range", () => {
    expect(sqlInteger(1, 1, 1000)).toBe("1");
    expect(sqlInteger(1000, 1, 1000)).toBe("1000");
  });
  it.each([0, 1001, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -1])("refuses %s", (value) => {
    expect(() => sqlInteger(value, 1, 1000)).toThrow(RangeError);
  });
});

describe("inlineStatement (a storage module's statement as wrangler d1 execute text)", () => {
  it("numbers ?N as SQLite does, a bare ? as one more than the largest so far", () => {
    expect(inlineStatement({ sql: "SELECT ?1, ?2, ?1", params: ["a", 2] })).toBe("SELECT 'a', 2, 'a'");
    expect(inlineStatement({ sql: "SELECT ?, ?, ?", params: ["a", null, 3] })).toBe("SELECT 'a', NULL, 3");
    expect(inlineStatement({ sql: "SELECT ?2, ?, ?1", params: ["x", "y", "z"] })).toBe("SELECT 'y', 'z', 'x'");
  });

  it("leaves ? inside quoted text and identifiers alone, and quotes values with sqlLiteral", () => {
    expect(inlineStatement({ sql: `SELECT '?', "a?b", 'it''s ?' || ?`, params: ["o'k"] })).toBe(`SELECT '?', "a?b", 'it''s ?' || 'o''k'`);
  });

  it.each([
    ["too few values", { sql: "SELECT ?, ?", params: ["a"] }],
    ["a value never used", { sql: "SELECT ?1", params: ["a", "b"] }],
    ["?0", { sql: "SELECT ?0", params: ["a"] }],
    ["a fraction", { sql: "SELECT ?", params: [1.5] }],
    ["a boolean", { sql: "SELECT ?", params: [true] }],
    ["an object", { sql: "SELECT ?", params: [{}] }],
    ["NUL in a string", { sql: "SELECT ?", params: ["a\u0000"] }],
    ["an unterminated quote", { sql: "SELECT 'a ?", params: ["a"] }],
  ])("refuses %s (a bug, never a silent text)", (_name, statement) => {
    expect(() => inlineStatement(statement)).toThrow();
  });
});
