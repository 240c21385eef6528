/**
 * Owner capability (06): the local OAuth 2.1 server pinned to one GitHub
 * account, the bearer check, and the owner's own data. What other layers may
 * use; the owner gateway's route table and core's `OwnerEntrypoint` are wired
 * in worker/entries, and the Service Binding's wire is contracts/owner-wire.ts.
 *
 * - config.ts          secrets/flags → OwnerConfig, fail closed (§1)
 * - http.ts            handler input/deps/answer, the gate (404 off / 503 misconfigured)
 * - gateway.ts         the owner gateway's side: handlers for the pipeline, the gate on 405 /
 *                      preflight / unknown paths, the ledger over OWNER_CORE, `/mcp` handed to core
 * - bearer.ts          /mcp bearer check and challenges (§4), shared with core (§5)
 * - spent.ts           the single-use ledger on D1 (§5)
 * - contacts.ts        owner_list_contacts' listing (§6.1); dialogue-view.ts its `dialogue` object
 * - goals.ts           owner_list_observed_goals (§6.2)
 * - drafts.ts          owner_save_draft (§6.3); state.ts owner_set_contact_state (§6.4)
 * - cursor.ts          the listings' opaque cursor; paging.ts the one keyset pager
 * - visitor-content.ts the untrusted-visitor-content group (§6)
 * - tools.ts           the four owner tools as tool definitions (§6), for core's owner server
 * - oauth/             metadata, registration, client metadata documents (§3.7) and who a
 *                      client_id is (clients.ts), authorize + consent, GitHub link, token (§3)
 *
 * The owner's data is read and written through the storage groups
 * (`storage/contacts`, `storage/owner`, `storage/observations`,
 * `storage/dialogue`, `storage/oauth`); nothing here holds SQL.
 *
 * Handlers are `(input, env, deps) => Promise<OwnerAnswer>` and return their
 * telemetry facts (`outcome`, `step`) as values; nothing here logs.
 */
export {
  DEFAULT_GITHUB_API_ORIGIN,
  DEFAULT_GITHUB_OAUTH_ORIGIN,
  DEFAULT_OWNER_ORIGIN,
  parseOwnerConfig,
  resolveOwner,
  type OwnerConfig,
  type OwnerEnv,
  type OwnerRole,
  type OwnerState,
} from "./config";
export {
  closedGate,
  gated,
  openGate,
  ownerInput,
  type OwnerAnswer,
  type OwnerDeps,
  type OwnerGate,
  type OwnerHandler,
  type OwnerInput,
  type OwnerStep,
  type SpentKind,
  type SpentLedger,
} from "./http";
export {
  advertisedScope,
  authenticateOwnerMcp,
  decideBearer,
  insufficientScopeChallenge,
  insufficientScopeResponse,
  readBearer,
  renderBearerRejection,
  resourceMetadataUrl,
  type BearerDecision,
  type OwnerAuthentication,
} from "./bearer";
export { d1SpentLedger } from "./spent";
export {
  coreSpentLedger,
  forwardOwnerMcp,
  gatedMethodNotAllowed,
  gatewayDeps,
  ownerHandler,
  ownerMcpPreflight,
  sendOwnerAnswer,
  serveConsentForm,
  unknownOwnerPath,
  type AnswerHeaders,
} from "./gateway";
export { deriveOwnerKeys, type OwnerKeys } from "./oauth/keys";
export { verifyAccessToken, type AccessClaims } from "./oauth/objects";
export { OWNER_SCOPES, scopesOf, type OwnerScope } from "./oauth/scopes";
export {
  authorizationServerMetadata,
  protectedResourceMetadata,
  serveAuthorizationServerMetadata,
  serveOAuthPreflight,
  serveProtectedResourceMetadata,
} from "./oauth/metadata";
export { serveRegister } from "./oauth/register";
export { serveAuthorize, serveConsent } from "./oauth/authorize";
export { serveGithubCallback } from "./oauth/github";
export { serveToken } from "./oauth/token";
export type { OwnerContactState } from "../contracts/owner-state";
export { decodeCursor, encodeCursor } from "./cursor";
export { listContacts, type ContactItem, type DraftItem, type ListContactsQuery, type ListResult } from "./contacts";
export { dialogueViewsOf, type OwnerDialogueView, type OwnerReplyView } from "./dialogue-view";
export { saveDraft, type SaveDraftCommand, type SaveDraftResult } from "./drafts";
export { listObservedGoals, type ListObservedGoalsQuery, type ObservedGoalItem } from "./goals";
export { setContactState, type SetContactStateResult } from "./state";
export {
  labelVisitorContent,
  previewText,
  VISITOR_CONTENT_LABEL,
  VISITOR_CONTENT_NOTICE,
  type VisitorContent,
} from "./visitor-content";
export {
  listContactsInputSchema,
  listObservedGoalsInputSchema,
  parseSince,
  saveDraftInputSchema,
  setContactStateInputSchema,
  type ListContactsInput,
  type ListObservedGoalsInput,
  type SaveDraftInput,
  type SetContactStateInput,
} from "./schemas";
export {
  ownerListContactsTool,
  ownerListObservedGoalsTool,
  ownerSaveDraftTool,
  ownerSetContactStateTool,
  ownerTools,
  WRITE_TOOL_SCOPES,
  type OwnerTool,
  type OwnerToolName,
} from "./tools";
