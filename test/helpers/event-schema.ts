/**
 * The telemetry event schema now lives in the contracts (worker/contracts/event-schema.ts);
 * this re-export keeps the test imports short and stable.
 */
export {
  assertValidEvent,
  assertValidScheduledEvent,
  assertValidTelemetryEvent,
  requestEventSchema,
  scheduledEventSchema,
  telemetryEventSchema,
} from "../../worker/contracts/event-schema";
