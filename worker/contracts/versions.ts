/**
 * Versions and release markers (spec 00 §4). The Worker and the `magnt` CLI both
 * import these, so a release bump is a one-line change that the typecheck carries
 * everywhere (probe, server info, cards, smoke client, probe-check defaults).
 */

export const MCP_DOOR_VERSION = "0.2.0";
export const SHARED_MEMORY_VERSION = "0.2.0";
export const OWNER_RELEASE = "B.1";
export const DIALOGUE_RELEASE = "C.1";
export const PACKAGE_VERSION = "0.2.0";
export const AGENT_CARD_VERSION = "0.2.0";

/** MCP server identity of the public door (02 §2). */
export const MCP_SERVER_NAME = "ru.magnt/mcp-door";
export const MCP_SERVER_TITLE = "MAGNT MCP Door";
export const MCP_SERVER_VERSION = MCP_DOOR_VERSION;

/** The modern MCP revision the door serves statelessly (no initialize). */
export const MCP_MODERN_PROTOCOL_VERSION = "2026-07-28";
/** The 2025 revisions answered on the stateless legacy lane, newest first. */
export const MCP_LEGACY_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;
/**
 * Every revision the door advertises. Hard-coded on purpose: the SDK's own
 * "latest" constant still says 2025-11-25 and its exported list omits 2026-07-28.
 */
export const MCP_SUPPORTED_PROTOCOL_VERSIONS = [
  MCP_MODERN_PROTOCOL_VERSION,
  ...MCP_LEGACY_PROTOCOL_VERSIONS,
] as const;

/** Requests whose User-Agent starts with this are controlled tests (01 §9.1). Not authentication. */
export const CONTROLLED_TEST_UA_PREFIX = "MAGNT-Controlled-Test/";
/** The User-Agent the smoke test and probe-check send. */
export const CONTROLLED_TEST_USER_AGENT = `${CONTROLLED_TEST_UA_PREFIX}0.2`;

/** The smoke test's MCP client identity (08 §6). */
export const SMOKE_CLIENT_NAME = "magnt-owner-smoke";
export const SMOKE_CLIENT_VERSION = "0.2.0";

/** User-Agent of the static-site origin fetch (01 §6). */
export const ORIGIN_FETCH_USER_AGENT = "MAGNT-Origin-Fetch/1.0";

/** A2A protocol version served by the bridge (04). */
export const A2A_PROTOCOL_VERSION = "1.0";

/** Worker service names reported by the probe (01 §7). */
export const SERVICE_NAMES = {
  monolith: "magnt-observer",
  gateway: "magnt-observer",
  core: "magnt-core",
  owner_gateway: "magnt-owner",
} as const;
