/**
 * Typed ids (issue 18): a `ContactId`, `DraftId` or `ReplyId` is an id already
 * normalised to the stored lower case. Only the input schemas
 * (`lib/input-schemas.ts`) and rows read back from D1 produce them, so the
 * stores never lower-case again and an id typed by a person cannot reach SQL
 * un-normalised. Types only; nothing here exists at run time.
 */
declare const brand: unique symbol;
type Branded<Name extends string> = string & { readonly [brand]: Name };

export type ContactId = Branded<"ContactId">;
export type DraftId = Branded<"DraftId">;
export type ReplyId = Branded<"ReplyId">;
