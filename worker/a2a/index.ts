/**
 * A2A v1.0 discovery bridge (spec 04): what the route table imports.
 *
 * - agent-card.ts  the strict v1.0 Agent Card and the 0.3-readable legacy card (§1)
 * - bridge.ts      POST processing order (§3)
 * - envelope.ts    media type, parse, batch, envelope, notification checks
 * - version.ts     the A2A-Version check
 * - methods.ts     the method tables (§4, §6); send-message.ts their one real answer
 * - errors.ts      JSON-RPC error builders (§5)
 * - responses.ts   headers, preflight and the route's rejections (§2)
 * - labels.ts      allow-listed telemetry labels (§7)
 */
export { serveAgentCard, serveLegacyAgentCard } from "./agent-card";
export { serveA2aPost } from "./bridge";
export { a2aRejections, serveA2aPreflight } from "./responses";
