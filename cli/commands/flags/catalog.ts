/**
 * The eight flags of 00 §6 as `magnt flags` knows them: which Worker roles
 * read each one, the value `enable` writes, and the prerequisites `enable`
 * checks for a given role (migrations applied, secrets present, the cron,
 * other flags on). Names come from worker/contracts; this table is the CLI's
 * reading of the spec's prerequisite column.
 */
import { FLAG_NAMES, MIGRATION_FILES, PREVIEW_MODE_METADATA_ONLY, type FlagName, type Role, type SecretName } from "../../../worker/contracts";

/** The migration files whose absence means a release is not built yet (09 §3). */
export const OWNER_MIGRATION = "0006_owner_state.sql";
export const DIALOGUE_MIGRATION = "0007_dialogue.sql";
/** The cron every notifying Worker's config must carry (05 §1). */
export const NOTIFY_CRON = "* * * * *";

export interface RolePrerequisites {
  migrations: readonly string[];
  secrets: readonly SecretName[];
  cron: boolean;
  flags: readonly FlagName[];
}

export interface FlagSpec {
  name: FlagName;
  /** What `enable` writes (00 §6: `true`, or `metadata_only` for the preview mode). */
  enableValue: string;
  /** How the default is described in `list`. */
  defaultLabel: string;
  /** Roles that read the flag, each with its prerequisites. */
  readBy: Partial<Record<Role, RolePrerequisites>>;
  /** Migration files that must exist in this codebase before the flag can be enabled at all. */
  release?: { migrations: readonly string[]; label: string };
  /** What turning the flag off stops, where the Worker's code says exactly that (`disable` and its --help). */
  offEffect?: OffEffect;
}

/**
 * What `disable` tells the operator about a flag other flags depend on. Each
 * sentence restates what the Worker's code does with the flag off (for the
 * dialogue: worker/config/flags.ts `dialogueFlags`), so it is kept next to the
 * prerequisites that make the dependents.
 */
export interface OffEffect {
  /** One line for `magnt flags disable --help`. */
  summary: string;
  /** What stops on a Worker of each role that reads the flag, printed before the confirmation. */
  stops: Partial<Record<Role, string>>;
  /** How a dependent flag left set behaves while this one is off (it follows the dependent's name). */
  dependents: string;
}

const none: RolePrerequisites = { migrations: [], secrets: [], cron: false, flags: [] };
const prereq = (fields: Partial<RolePrerequisites>): RolePrerequisites => ({ ...none, ...fields });

const OWNER_RELEASE = { migrations: [OWNER_MIGRATION], label: "the owner release (B.1)" } as const;
const DIALOGUE_RELEASE = { migrations: [OWNER_MIGRATION, DIALOGUE_MIGRATION], label: "the dialogue release (C.1)" } as const;

const telegram = prereq({
  migrations: ["0004_owner_notifications.sql"],
  secrets: ["TELEGRAM_BOT_TOKEN", "TELEGRAM_OWNER_CHAT_ID"],
  cron: true,
});
const goals = prereq({
  migrations: ["0003_observed_task_signals.sql", "0004_owner_notifications.sql", "0005_goal_notifications.sql"],
  flags: ["TELEGRAM_NOTIFICATIONS_ENABLED"],
});
const ownerSecrets: readonly SecretName[] = ["OWNER_GITHUB_ID", "OWNER_TOKEN_SIGNING_KEY"];
const dialogue = prereq({ migrations: [OWNER_MIGRATION, DIALOGUE_MIGRATION], secrets: ["DIALOGUE_TOKEN_KEY"] });

const KEPT = "dialogues, replies and read marks stay stored (a published reply stays unchangeable) and are served again once it is enabled";
/** 07 §1: with DIALOGUE_ENABLED off, tokens, publishing, fetching, revoking and read receipts all stop. */
const DIALOGUE_OFF: OffEffect = {
  summary: "new dialogue tokens, follow-ups, publishing, fetching, revoking and read receipts all stop; stored dialogues, replies and read marks are kept",
  stops: {
    monolith:
      "propose_contact neither issues nor accepts dialogue tokens, fetch_contact_reply is gone (visitors cannot fetch replies, even published ones) " +
      `and visitors see no read receipts; ${KEPT}`,
    core:
      "propose_contact neither issues nor accepts dialogue tokens, fetch_contact_reply is gone (visitors cannot fetch replies, even published ones), " +
      "owner_publish_reply and owner_revoke_dialogue are gone, the owner's reads are not recorded and no read receipts or dialogue state are shown; " +
      KEPT,
  },
  dependents: "stays set but does nothing while DIALOGUE_ENABLED is off, and takes effect again as soon as it is enabled",
};

export const FLAG_SPECS: Record<FlagName, FlagSpec> = {
  TELEGRAM_NOTIFICATIONS_ENABLED: { name: "TELEGRAM_NOTIFICATIONS_ENABLED", enableValue: "true", defaultLabel: "off", readBy: { monolith: telegram, core: telegram } },
  TELEGRAM_GOAL_NOTIFICATIONS_ENABLED: {
    name: "TELEGRAM_GOAL_NOTIFICATIONS_ENABLED",
    enableValue: "true",
    defaultLabel: "off",
    readBy: { monolith: goals, core: goals },
  },
  TELEGRAM_PREVIEW_MODE: {
    name: "TELEGRAM_PREVIEW_MODE",
    enableValue: PREVIEW_MODE_METADATA_ONLY,
    defaultLabel: "unset (excerpt mode)",
    readBy: { monolith: none, core: none },
  },
  OWNER_MCP_ENABLED: {
    name: "OWNER_MCP_ENABLED",
    enableValue: "true",
    defaultLabel: "off",
    readBy: {
      core: prereq({ migrations: [OWNER_MIGRATION], secrets: ownerSecrets }),
      owner_gateway: prereq({ secrets: [...ownerSecrets, "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET"] }),
    },
    release: OWNER_RELEASE,
  },
  OWNER_MCP_WRITE_ENABLED: {
    name: "OWNER_MCP_WRITE_ENABLED",
    enableValue: "true",
    defaultLabel: "off",
    readBy: { core: prereq({ flags: ["OWNER_MCP_ENABLED"] }), owner_gateway: prereq({ flags: ["OWNER_MCP_ENABLED"] }) },
    release: OWNER_RELEASE,
  },
  DIALOGUE_ENABLED: {
    name: "DIALOGUE_ENABLED",
    enableValue: "true",
    defaultLabel: "off",
    readBy: { monolith: dialogue, core: dialogue },
    release: DIALOGUE_RELEASE,
    offEffect: DIALOGUE_OFF,
  },
  DIALOGUE_REPLIES_ENABLED: {
    name: "DIALOGUE_REPLIES_ENABLED",
    enableValue: "true",
    defaultLabel: "off",
    readBy: { core: prereq({ flags: ["DIALOGUE_ENABLED", "OWNER_MCP_ENABLED", "OWNER_MCP_WRITE_ENABLED"] }) },
    release: DIALOGUE_RELEASE,
  },
  DIALOGUE_READ_RECEIPTS_ENABLED: {
    name: "DIALOGUE_READ_RECEIPTS_ENABLED",
    enableValue: "true",
    defaultLabel: "off",
    readBy: { monolith: prereq({ flags: ["DIALOGUE_ENABLED"] }), core: prereq({ flags: ["DIALOGUE_ENABLED"] }) },
    release: DIALOGUE_RELEASE,
  },
};

/** The flags any of these roles reads, in the order of 00 §6 (one role, or the local split run's three). */
export function flagsReadBy(roles: readonly Role[]): FlagName[] {
  return FLAG_NAMES.filter((name) => readersOf(FLAG_SPECS[name], roles).length > 0);
}

/** The roles among `roles` that read the flag. */
export function readersOf(spec: FlagSpec, roles: readonly Role[]): Role[] {
  return roles.filter((role) => spec.readBy[role] !== undefined);
}

/**
 * The prerequisites of a flag on these roles together: every migration,
 * secret and flag any reader needs, and the cron if any reader needs it —
 * the local split run's one `.dev.vars` serves all of its Workers, so a flag
 * on there must satisfy each Worker that reads it.
 */
export function prerequisitesOn(spec: FlagSpec, roles: readonly Role[]): RolePrerequisites {
  const readers = readersOf(spec, roles).map((role) => spec.readBy[role]!);
  const union = <T>(pick: (prerequisites: RolePrerequisites) => readonly T[]): T[] => [...new Set(readers.flatMap(pick))];
  return { migrations: union((p) => p.migrations), secrets: union((p) => p.secrets), cron: readers.some((p) => p.cron), flags: union((p) => p.flags) };
}

/** Flags whose prerequisites name `name` on any of these roles (warned about on `disable`). */
export function dependentsOf(name: FlagName, roles: readonly Role[]): FlagName[] {
  return FLAG_NAMES.filter((other) => roles.some((role) => FLAG_SPECS[other].readBy[role]?.flags.includes(name) === true));
}

/** Flags whose prerequisites name `name` on any Worker (for `disable --help`). */
export function dependentsOnAnyRole(name: FlagName): FlagName[] {
  return FLAG_NAMES.filter((other) => Object.values(FLAG_SPECS[other].readBy).some((prerequisites) => prerequisites.flags.includes(name)));
}

/** Migration files of a flag's release that this codebase does not have yet. */
export function missingReleaseMigrations(spec: FlagSpec, known: readonly string[] = MIGRATION_FILES): string[] {
  return (spec.release?.migrations ?? []).filter((file) => !known.includes(file));
}
