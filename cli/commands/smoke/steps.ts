/**
 * The steps of 08 §6 as a table: one function per step name, each taking the
 * session and returning what may be printed (or throwing `StepFailure`). The
 * `satisfies` mapped type makes a missing or extra step a compile error, so
 * the plan in plan.ts and this table cannot drift apart.
 */
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import {
  CONTACT_ID_PATTERN,
  CONTACT_STATUS,
  CONTRIBUTE_STATUS,
  MCP_LEGACY_PROTOCOL_VERSIONS,
  MCP_MODERN_PROTOCOL_VERSION,
  OWNER_TOOL_PREFIX,
  PROFILE_RESOURCE_URI,
  PUBLIC_TOOL_NAMES,
  SEARCH_RECEIPT_PATTERN,
  SEARCH_STATUS,
  SIGNAL_ID_PATTERN,
  TOOL_ABOUT,
  TOOL_CONTRIBUTE,
  TOOL_FETCH_REPLY,
  TOOL_PROPOSE_CONTACT,
} from "../../../worker/contracts";
import { expectPattern, expectStatus, isRecord, matchIds, safeWord, StepFailure } from "./expectations";
import { PROFILE_NAME, TEST_CONTACT, type StepDetail, type StepName } from "./plan";
import { required, type SmokeSession } from "./session";

export type StepRun = (session: SmokeSession) => Promise<StepDetail>;

export const STEPS = {
  async connect(session) {
    const { version, era } = await session.connect();
    const expected = session.legacy
      ? { version: MCP_LEGACY_PROTOCOL_VERSIONS[0], era: "legacy" }
      : { version: MCP_MODERN_PROTOCOL_VERSION, era: "modern" };
    if (version !== expected.version || era !== expected.era) {
      throw new StepFailure(`negotiated ${version} (${era}), expected ${expected.version} (${expected.era})`);
    }
    return { protocol_version: version, era };
  },

  async list_tools(session) {
    const names = await session.toolNames();
    const owner = names.filter((name) => name.startsWith(OWNER_TOOL_PREFIX));
    if (owner.length > 0) throw new StepFailure(`owner tools listed publicly: ${owner.join(", ")}`);
    const publicNames = names.filter((name) => name !== TOOL_FETCH_REPLY).sort();
    const expected = [...PUBLIC_TOOL_NAMES].sort();
    if (!isDeepStrictEqual(publicNames, expected)) {
      throw new StepFailure(`tools are ${publicNames.join(", ") || "(none)"}; expected ${expected.join(", ")}`);
    }
    return { tools: names, dialogue: names.includes(TOOL_FETCH_REPLY) };
  },

  async list_resources(session) {
    const uris = await session.resourceUris();
    if (!uris.includes(PROFILE_RESOURCE_URI)) throw new StepFailure(`${PROFILE_RESOURCE_URI} is not listed`);
    return { resources: uris };
  },

  async read_profile(session) {
    const text = await session.resourceText(PROFILE_RESOURCE_URI);
    if (text === undefined) throw new StepFailure(`${PROFILE_RESOURCE_URI} has no text content`);
    try {
      session.carried.profile = JSON.parse(text);
    } catch {
      throw new StepFailure(`${PROFILE_RESOURCE_URI} is not JSON`);
    }
    const profile = session.carried.profile;
    if (!isRecord(profile) || profile.name !== PROFILE_NAME) throw new StepFailure(`profile name is not ${PROFILE_NAME}`);
    return { profile_name: PROFILE_NAME };
  },

  async call_about_magnt(session) {
    const content = await session.callTool(TOOL_ABOUT, {});
    if (!isDeepStrictEqual(content, session.carried.profile)) throw new StepFailure(`${TOOL_ABOUT} differs from ${PROFILE_RESOURCE_URI}`);
    const contact = isRecord(content.contact) ? content.contact : {};
    if (typeof contact.storage_available !== "boolean") throw new StepFailure("contact.storage_available is not a boolean");
    return { storage_available: contact.storage_available };
  },

  async propose_contact(session) {
    const args = { ...TEST_CONTACT, submission_id: randomUUID() };
    session.carried.contactArgs = args;
    const content = await session.callTool(TOOL_PROPOSE_CONTACT, args);
    expectStatus(content, CONTACT_STATUS.accepted);
    const contactId = expectPattern(content, "contact_id", CONTACT_ID_PATTERN);
    if (content.duplicate !== false) throw new StepFailure("duplicate is not false on the first submission");
    session.carried.contactId = contactId;
    const dialogue = isRecord(content.dialogue) && typeof content.dialogue.status === "string" ? safeWord(content.dialogue.status) : undefined;
    return {
      contact_id: contactId,
      result: CONTACT_STATUS.accepted,
      self_reported_test: true,
      ...(dialogue === undefined ? {} : { dialogue_status: dialogue }),
    };
  },

  async propose_contact_retry(session) {
    const content = await session.callTool(TOOL_PROPOSE_CONTACT, required(session.carried.contactArgs));
    expectStatus(content, CONTACT_STATUS.accepted);
    const contactId = expectPattern(content, "contact_id", CONTACT_ID_PATTERN);
    if (contactId !== session.carried.contactId) throw new StepFailure("the identical retry returned a different contact_id");
    if (content.duplicate !== true) throw new StepFailure("duplicate is not true on the identical retry");
    return { contact_id: contactId, duplicate_retry_verified: true };
  },

  async search_before(session) {
    const content = await session.search(true);
    expectStatus(content, SEARCH_STATUS.noMatch);
    const receipt = expectPattern(content, "search_receipt", SEARCH_RECEIPT_PATTERN);
    session.carried.receipt = receipt;
    return { result: SEARCH_STATUS.noMatch, search_receipt: receipt };
  },

  async contribute(session) {
    const args = { ...session.taskArgs(true), submission_id: randomUUID(), search_receipt: required(session.carried.receipt) };
    session.carried.contributeArgs = args;
    const content = await session.callTool(TOOL_CONTRIBUTE, args);
    expectStatus(content, CONTRIBUTE_STATUS.accepted);
    const signalId = expectPattern(content, "signal_id", SIGNAL_ID_PATTERN);
    session.carried.signalId = signalId;
    return { result: CONTRIBUTE_STATUS.accepted, signal_id: signalId };
  },

  async contribute_retry(session) {
    const content = await session.callTool(TOOL_CONTRIBUTE, required(session.carried.contributeArgs));
    expectStatus(content, CONTRIBUTE_STATUS.duplicate);
    const signalId = expectPattern(content, "signal_id", SIGNAL_ID_PATTERN);
    if (signalId !== session.carried.signalId) throw new StepFailure("the identical retry returned a different signal_id");
    return { result: CONTRIBUTE_STATUS.duplicate, signal_id: signalId };
  },

  async search_after(session) {
    const content = await session.search(true);
    expectStatus(content, SEARCH_STATUS.matches);
    if (!matchIds(content).includes(required(session.carried.signalId))) throw new StepFailure("the test cohort search does not return the contributed signal_id");
    return { result: SEARCH_STATUS.matches, test_cohort_match_verified: true };
  },

  async search_ordinary(session) {
    const content = await session.search(false);
    const status = content.status;
    if (status !== SEARCH_STATUS.matches && status !== SEARCH_STATUS.noMatch) {
      throw new StepFailure(`status ${safeWord(status)} (expected ${SEARCH_STATUS.matches} or ${SEARCH_STATUS.noMatch})`);
    }
    if (matchIds(content).includes(required(session.carried.signalId))) throw new StepFailure("the ordinary cohort search returned the test signal_id");
    return { result: status, ordinary_cohort_isolated: true };
  },
} satisfies { readonly [S in StepName]: StepRun };
