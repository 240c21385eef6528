/**
 * Every URL the A2A bridge publishes (04 §1, §2, §4). They are derived from
 * `PUBLIC_ORIGIN` only, never from the request URL, so a request sent to an
 * allowed alias host (or with a forged Host) cannot make the door advertise
 * another origin.
 */
import { publicOrigin, type Env } from "../config/env";

export interface A2aUrls {
  /** The canonical origin without a trailing slash. */
  readonly origin: string;
  readonly site: string;
  readonly mcp: string;
  readonly serverCard: string;
  readonly agentCard: string;
  readonly endpoint: string;
  readonly documentation: string;
}

export function a2aUrlsFor(origin: string): A2aUrls {
  return {
    origin,
    site: `${origin}/`,
    mcp: `${origin}/mcp`,
    serverCard: `${origin}/mcp/server-card`,
    agentCard: `${origin}/.well-known/agent-card.json`,
    endpoint: `${origin}/a2a`,
    documentation: `${origin}/agents.md`,
  };
}

export function a2aUrls(env: Env): A2aUrls {
  return a2aUrlsFor(publicOrigin(env));
}
