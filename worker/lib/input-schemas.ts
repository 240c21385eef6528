/**
 * Input pieces every write tool shares (02 §5.1, 03 §2), kept in one neutral
 * module so the capabilities that use them never import each other.
 */
import * as z from "zod";
import { PREVIOUS_CONTACT_ID_PATTERN } from "../contracts/ids";
import type { ContactId, DraftId, ReplyId } from "../contracts/id-types";
import { REPLY_ID_INPUT_PATTERN } from "../contracts/tools";

/** A trimmed, non-empty string of at most `max` UTF-16 code units (limits apply after trimming). */
export const trimmedText = (max: number) => z.string().trim().min(1).max(max);

/** A client UUID (zod's RFC 9562 layout, either case), stored lower-cased. */
export const submissionIdSchema = z.string().trim().toLowerCase().uuid();

/** A draft id as the owner may type it: either case (spelled out so the JSON Schema keeps it). */
const DRAFT_ID_INPUT_PATTERN = /^[dD][rR]_[0-9a-fA-F-]{36}$/;

/**
 * The one place a typed id is normalised: either case is accepted and
 * lower-cased here, at the input boundary, and everything inward takes the
 * branded type. The cast only names the output type; the schema (and the JSON
 * Schema the SDK publishes from it) is the plain regex + lower-case.
 */
export const contactIdSchema = z.string().regex(PREVIOUS_CONTACT_ID_PATTERN).toLowerCase() as unknown as z.ZodType<ContactId, string>;
export const draftIdSchema = z.string().regex(DRAFT_ID_INPUT_PATTERN).toLowerCase() as unknown as z.ZodType<DraftId, string>;
/** The visitor's contact id, trimmed first (the public tools trim their text inputs). */
export const trimmedContactIdSchema = z.string().trim().regex(PREVIOUS_CONTACT_ID_PATTERN).toLowerCase() as unknown as z.ZodType<ContactId, string>;
export const trimmedReplyIdSchema = z.string().trim().regex(REPLY_ID_INPUT_PATTERN).toLowerCase() as unknown as z.ZodType<ReplyId, string>;
