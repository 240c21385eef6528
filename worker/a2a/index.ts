/**
 * A2A v1.0 discovery bridge (spec 04): what the route table imports.
 *
 * - agent-card.ts  the strict v1.0 Agent Card (§1)
 * - bridge.ts      POST processing order (§3)
 * - envelope.ts    media type, parse, batch, envelope, notification checks
 * - version.ts     the A2A-Version check
 * - methods.ts     the method table (§4); send-message.ts its one real answer
 * - errors.ts      JSON-RPC error builders (§5)
 * - responses.ts   headers, preflight and the route's rejections (§2)
 * - labels.ts      allow-listed telemetry labels (§7)
 */
export { serveAgentCard } from "./agent-card";
export { serveA2aPost } from "./bridge";
export { a2aRejections, serveA2aPreflight } from "./responses";
