/**
 * Input pieces every write tool shares (02 §5.1, 03 §2), kept in one neutral
 * module so the capabilities that use them never import each other.
 */
import * as z from "zod";

/** A trimmed, non-empty string of at most `max` UTF-16 code units (limits apply after trimming). */
export const trimmedText = (max: number) => z.string().trim().min(1).max(max);

/** A client UUID (zod's RFC 9562 layout, either case), stored lower-cased. */
export const submissionIdSchema = z.string().trim().toLowerCase().uuid();
