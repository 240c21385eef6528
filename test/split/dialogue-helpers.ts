/**
 * Driving the dialogue variant of the split deployment (07, C.1; see
 * ./dialogue-fixture.ts and ./topology.ts): the public gateway entry with its
 * `CORE` pointed at `magnt-core-dialogue` (a real Service Binding), the owner
 * gateway `magnt-owner-dialogue` in front of that core's `OwnerEntrypoint`,
 * and both Workers' test taps (their console lines).
 */
import { env } from "cloudflare:workers";
import type { Client } from "@modelcontextprotocol/client";
import type { RequestEvent } from "../../worker/contracts/events";
import type { TestTaps } from "./workers/taps";
import { connectThroughGateway, gatewayFetch, parseEvents } from "./helpers";
import { gatewayFetchOf, type GatewayFetch } from "./owner-helpers";

interface DialogueBindings {
  /** magnt-core-dialogue's default `fetch` (what the public gateway's CORE reaches). */
  DIALOGUE_CORE?: Fetcher;
  DIALOGUE_OWNER_GATEWAY?: Fetcher;
  TEST_DIALOGUE_CORE?: Service<TestTaps>;
  TEST_DIALOGUE_OWNER?: Service<TestTaps>;
}
const runner = env as unknown as DialogueBindings;

function bound<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`${name} is bound only in the split project`);
  return value;
}

/** The public gateway's overrides that route its CORE binding to the dialogue core. */
export function dialogueGatewayOverrides(): { CORE: Fetcher } {
  return { CORE: bound(runner.DIALOGUE_CORE, "DIALOGUE_CORE") };
}

/** A `fetch` into the public gateway entry whose CORE is the dialogue core. */
export function dialogueDoorFetch() {
  return gatewayFetch(dialogueGatewayOverrides());
}

/** The official v2 client at the public door (gateway → magnt-core-dialogue). */
export function connectVisitor(): Promise<Client> {
  return connectThroughGateway(dialogueGatewayOverrides());
}

/** The owner gateway in front of the dialogue core. */
export const dialogueOwnerFetch: GatewayFetch = gatewayFetchOf(() => runner.DIALOGUE_OWNER_GATEWAY, "DIALOGUE_OWNER_GATEWAY");

export const dialogueCoreTaps = () => bound(runner.TEST_DIALOGUE_CORE, "TEST_DIALOGUE_CORE");
export const dialogueOwnerTaps = () => bound(runner.TEST_DIALOGUE_OWNER, "TEST_DIALOGUE_OWNER");

export async function dialogueCoreEvents(): Promise<RequestEvent[]> {
  return parseEvents(await dialogueCoreTaps().lines());
}
