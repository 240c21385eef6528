/** The one quoting helper of 08 §4 and the integer guard. */
import { describe, expect, it } from "vitest";
import { sqlInteger, sqlLiteral } from "../../cli/lib/sql";

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
