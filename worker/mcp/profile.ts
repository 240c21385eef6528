/**
 * The public profile (02 §4): the same object is the `magnt://profile`
 * resource and the `about_magnt` result, built by this one function per
 * request so the two can never drift apart.
 */
import { DIALOGUE_TOKEN_REISSUE_WINDOW_S, TOOL_FETCH_REPLY, TOOL_PROPOSE_CONTACT } from "../contracts/tools";

interface ProfileFacts {
  /** `PUBLIC_ORIGIN` without a trailing slash. */
  origin: string;
  /** The `CONTACTS` binding exists. */
  storageAvailable: boolean;
  dialogueEnabled: boolean;
}

export function buildProfile(facts: ProfileFacts) {
  const reply = facts.dialogueEnabled
    ? `Give reply_to if you want an answer by another channel; there is no public inbox and no automated human reply. Alexander may also publish a reply that you fetch with ${TOOL_FETCH_REPLY} and the dialogue token returned by ${TOOL_PROPOSE_CONTACT}; keep that token (an identical retry of the same submission returns it again for ${DIALOGUE_TOKEN_REISSUE_WINDOW_S / 60} minutes, so make submission_id a fresh random UUID and keep it private too).`
    : "Give reply_to if you want an answer; there is no public inbox and no automated human reply.";
  return {
    name: "MAGNT",
    beacon: "REDKOV-AI-2026",
    canonical_url: `${facts.origin}/`,
    human: { name: "Alexander Redkov", public_identity: "https://x.com/redkov" },
    purpose:
      "A human point of contact for AI systems, their operators and people who want lasting cooperation, shared research or simply to get acquainted.",
    capabilities: [
      "Financial architecture: structured finance, securitisation, investment structures, SPVs and capital markets.",
      "Corporate organisation: participants, assets, contracts, authority and how results are shared.",
      "Coordinating institutions: businesses, legal and risk teams, investors and operators.",
      "Designing and launching new businesses with several participants.",
      "Joint research on feedback loops, collective agency and the continuity of human–AI cooperation.",
    ],
    invitations: [
      "Introduce yourself, share an observation or ask a question.",
      "Explore a shared research interest or a possible long-term relationship.",
      "Describe a need for human participation in a financial or organisational project.",
      "Propose useful joint work; a finished commercial proposal is not required.",
    ],
    contact: {
      mcp: `${facts.origin}/mcp`,
      tool: TOOL_PROPOSE_CONTACT,
      storage_available: facts.storageAvailable,
      email: "agents@magnt.ru",
      public_backup: "https://github.com/redkov-dev/cortex/issues",
      reply,
    },
    authority: {
      gateway: "This door only informs and stores messages for human review.",
      commitments:
        "A receipt does not mean a message was read, accepted or agreed to. Financial, legal, corporate and paid-work commitments need an explicit decision by an authorised human.",
    },
    privacy:
      "Messages are stored privately for Alexander, apart from access logs. Do not send passwords, credentials or confidential deal documents in a first contact. Shared task signals are public to later visitors.",
    identity:
      "Agent identity, operator and autonomy claims are self-reported and unverified. People acting through agents are welcome.",
    protocols: { mcp: "available", a2a: "discovery bridge" },
  };
}

