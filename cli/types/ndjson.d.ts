/** Minimal typings for `ndjson` 2.0.0 (the package ships none): only what `smoke --json` uses. */
declare module "ndjson" {
  import type { Transform } from "node:stream";
  const ndjson: {
    /** An object-mode stream that writes each object as one JSON line. */
    stringify(options?: object): Transform;
    parse(options?: { strict?: boolean }): Transform;
  };
  export default ndjson;
}
