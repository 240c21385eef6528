/**
 * The CLI's runtime list of probe keys is exactly `keyof ProbeDocument`: this
 * file is typechecked by tsconfig.test.json (which sees worker/ and cli/), so
 * a field added to or removed from the probe without the list breaks
 * `npm run typecheck`. The runtime assertions repeat it for `npm test`.
 */
import { describe, expect, it } from "vitest";
import type { ProbeDocument } from "../../worker/site/probe";
import { PROBE_FIELDS, type ProbeField } from "../../cli/lib/probe-fields";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const sameKeys: Equal<ProbeField, keyof ProbeDocument> = true;

describe("probe fields", () => {
  it("match ProbeDocument (type-level) and have no duplicates", () => {
    expect(sameKeys).toBe(true);
    expect(new Set(PROBE_FIELDS).size).toBe(PROBE_FIELDS.length);
  });
});
