/**
 * The probe `/__magnt_probe` (01 §7): versions and whether storage is bound.
 * It never reports counts, row contents, secrets, schema state or flag values
 * other than `dialogue_enabled` — it answers "is this the build I deployed?",
 * not "is the data there?".
 */
import {
  DIALOGUE_RELEASE,
  MCP_DOOR_VERSION,
  OWNER_RELEASE,
  SERVICE_NAMES,
  SHARED_MEMORY_VERSION,
} from "../contracts/versions";
import type { Role } from "../contracts/events";
import type { ProbeField } from "../contracts/probe";
import { siteOrigin, type Env } from "../config/env";
import type { DoorRequest, Handler } from "../edge/pipeline";
import { classifyUserAgent } from "../edge/ua";

/** The probe document. `magnt probe-check` rejects any key outside this shape. */
export interface ProbeDocument {
  ok: true;
  service: string;
  role: Role;
  mcp_door_version: string;
  shared_memory_version: string;
  owner_release: string;
  dialogue_release: string;
  dialogue_enabled: boolean;
  contact_storage_configured: boolean;
  shared_memory_storage_configured: boolean;
  core_reachable?: boolean;
  origin: string;
  time: string;
  host: string;
  path: string;
  clientKind: string;
  clientName: string;
  country: string;
  colo: string;
}

/** Compile-time proof that the document and the shared key list agree (`never` unless they differ). */
type KeysOutsideContract = Exclude<keyof ProbeDocument, ProbeField> | Exclude<ProbeField, keyof ProbeDocument>;
const probeMatchesContract: [KeysOutsideContract] extends [never] ? true : never = true;
void probeMatchesContract;

/** Storage facts of the Worker where tools execute (the gateway asks core for them). */
/** Reserved for the gateway (B.1), which builds its probe from core's facts. */
export interface StorageFacts {
  dialogue_enabled: boolean;
  contact_storage_configured: boolean;
  shared_memory_storage_configured: boolean;
}

/**
 * `dialogueServed` is the public server's own answer to "is fetch_contact_reply
 * registered?", so the probe never reports a dialogue the tools do not serve (01 §7).
 */
function localStorageFacts(req: DoorRequest, dialogueServed: boolean): StorageFacts {
  const bound = req.env.CONTACTS !== undefined;
  return {
    dialogue_enabled: dialogueServed,
    contact_storage_configured: bound,
    shared_memory_storage_configured: bound,
  };
}

/** Also used by the gateway (B.1) with core's facts and `core_reachable`. */
export function buildProbe(req: DoorRequest, facts: StorageFacts, coreReachable?: boolean): ProbeDocument {
  const origin = siteOrigin(req.env);
  const cf = (req.request as { cf?: Record<string, unknown> }).cf ?? {};
  const ua = classifyUserAgent(req.request.headers.get("user-agent") ?? "");
  return {
    ok: true,
    service: SERVICE_NAMES[req.role],
    role: req.role,
    mcp_door_version: MCP_DOOR_VERSION,
    shared_memory_version: SHARED_MEMORY_VERSION,
    owner_release: OWNER_RELEASE,
    dialogue_release: DIALOGUE_RELEASE,
    ...facts,
    ...(coreReachable === undefined ? {} : { core_reachable: coreReachable }),
    origin: origin === "" ? "builtin" : origin.replace(/^[a-z][a-z0-9+.-]*:\/\//i, ""),
    time: new Date().toISOString(),
    host: req.url.hostname,
    path: req.url.pathname,
    ...ua,
    country: typeof cf.country === "string" ? cf.country : "",
    colo: typeof cf.colo === "string" ? cf.colo : "",
  };
}

/** GET and HEAD of the probe in the monolith and core roles. */
export function localProbe(dialogueServed: (env: Env) => boolean): Handler {
  return (req) => probeResponse(req, buildProbe(req, localStorageFacts(req, dialogueServed(req.env))));
}

/** Reserved for the gateway's probe (B.1). */
export function probeResponse(req: DoorRequest, probe: ProbeDocument): Response {
  return new Response(req.request.method === "HEAD" ? null : JSON.stringify(probe, null, 2), {
    status: 200,
    headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" },
  });
}

/**
 * The gateway's probe (01 §7): its own versions and edge facts, with the
 * storage facts and `dialogue_enabled` of core, asked over the `CORE` binding.
 * When core does not answer 200 with a probe, those are `false` and
 * `core_reachable` is `false`; core's other fields are never copied.
 */
export async function gatewayProbe(req: DoorRequest): Promise<Response> {
  const unreachable: StorageFacts = {
    dialogue_enabled: false,
    contact_storage_configured: false,
    shared_memory_storage_configured: false,
  };
  const core = req.env.CORE;
  if (!core) return probeResponse(req, buildProbe(req, unreachable, false));
  try {
    const answer = await core.fetch(new Request(new URL("/__magnt_probe", req.url), { method: "GET" }));
    if (answer.status !== 200) return probeResponse(req, buildProbe(req, unreachable, false));
    const facts = (await answer.json()) as Record<string, unknown>;
    return probeResponse(
      req,
      buildProbe(
        req,
        {
          dialogue_enabled: facts.dialogue_enabled === true,
          contact_storage_configured: facts.contact_storage_configured === true,
          shared_memory_storage_configured: facts.shared_memory_storage_configured === true,
        },
        true,
      ),
    );
  } catch {
    return probeResponse(req, buildProbe(req, unreachable, false));
  }
}
