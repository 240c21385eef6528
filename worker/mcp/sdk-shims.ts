/**
 * The door's replacement for the SDK's workerd shim
 * (`@modelcontextprotocol/server/_shims`), put in its place by the `alias` of
 * every Wrangler config that bundles the SDK (issue 21, docs/decisions.md).
 *
 * Why: the SDK's workerd shim exports `@cfworker/json-schema` as the default
 * JSON Schema validator, about 22 KB minified, which the SDK uses only to check
 * a client's answer to an elicitation form (and for `fromJsonSchema` schemas).
 * The door sends no elicitation and registers only zod schemas, so the
 * validator is dead weight in every cold start. Passing the SDK's own
 * `jsonSchemaValidator` option would not help: the shim is imported
 * statically, so the bundle would still carry it.
 *
 * Same exports as the SDK's shim (a test compares the lists, so an SDK
 * upgrade that adds one fails the build of the tests, not production). The
 * validator fails closed: should a future code path ever ask it to validate
 * something, the answer is "invalid", never a silent pass. The SDK's shim also
 * calls `preloadSchemas()`; `serve.ts` does that at module scope instead
 * (importing the SDK here would close an import cycle).
 */
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/server";

const REFUSED = "This server validates no JSON Schema forms (the door sends no elicitation).";

export class DefaultJsonSchemaValidator implements jsonSchemaValidator {
  getValidator<T>(_schema: JsonSchemaType): JsonSchemaValidator<T> {
    return () => ({ valid: false, data: undefined, errorMessage: REFUSED });
  }
}

function notSupported(): never {
  throw new Error("StdioServerTransport is not supported in this environment. Use StreamableHTTPServerTransport instead.");
}

/** The SDK shim's stub: stdio does not exist in workerd. */
export const process = {
  get stdin(): never {
    return notSupported();
  },
  get stdout(): never {
    return notSupported();
  },
};
