/**
 * What the door records of a JSON answer (01 §9.2), read from its bytes
 * without decoding or parsing them: for each JSON-RPC message, whether it
 * carries an `error` object (and that error's numeric `code`), a `result`
 * object, the result's `isError: true`, and its string `protocolVersion`.
 * A search answer is 25–60 KB of visitor text; decoding it to a string and
 * parsing it whole, only to find those few members, was a tenth of the
 * search's allocation (decision 210).
 *
 * Exactness: the answer is the reference. This reader validates the whole
 * body by the JSON grammar (as `JSON.parse` of its UTF-8 decoding accepts
 * it) and reports only what parsing would report; anything it does not read
 * with certainty — invalid JSON, nesting deeper than it follows, a member
 * name or a protocol version written with an escape — is `unread`, and the
 * caller parses the text as before. Byte-level reading is exact because
 * UTF-8 decoding never turns a byte ≥ 0x80 into a character below U+0080
 * (an invalid sequence becomes U+FFFD and the next byte is read afresh), so
 * JSON's structure and ASCII member names are the same in bytes as in the
 * decoded text. A repeated member counts as `JSON.parse` counts it: the
 * last one.
 */
import { isRecord } from "../contracts/guards";

/** One message's members as `JSON.parse` would give them. */
export interface MessageFacts {
  /** `error` is an object; `code` its numeric code, or null. */
  readonly error: { readonly code: number | null } | null;
  /** `result` is an object; its `isError` is `true`, and its `protocolVersion` if a string. */
  readonly result: { readonly isError: boolean; readonly protocolVersion: string | null } | null;
}

/**
 * A message object's members as the byte reader reports them: for a parsed answer (response-reading.ts)
 * and a message as the server sent it (sent-messages.ts), so all three are classified alike.
 */
export function messageFacts(message: unknown): MessageFacts | null {
  if (!isRecord(message)) return null;
  const { error, result } = message;
  return {
    error: isRecord(error) ? { code: typeof error.code === "number" ? error.code : null } : null,
    result: isRecord(result)
      ? { isError: result.isError === true, protocolVersion: typeof result.protocolVersion === "string" ? result.protocolVersion : null }
      : null,
  };
}

/** The messages of a body (one, or a batch's elements), or `unread` when it must be parsed instead. */
export type JsonOutcome = { readonly kind: "read"; readonly messages: readonly (MessageFacts | null)[] } | { readonly kind: "unread" };

const UNREAD: JsonOutcome = { kind: "unread" };
/** Deeper than this the reader gives up and the caller parses (the SDK's answers nest a few levels). */
const MAX_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** For the bytes of one string's contents: a U+FEFF there is text, not a byte-order mark. */
const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** Thrown inside the reader for anything it does not read with certainty; never escapes this module. */
class Unread extends Error {
  constructor() {
    super("not read from the bytes");
    this.name = "Unread";
  }
}

export function readJsonOutcome(bytes: Uint8Array): JsonOutcome {
  try {
    return { kind: "read", messages: new Reader(bytes).body() };
  } catch (error) {
    if (error instanceof Unread || error instanceof RangeError) return UNREAD;
    throw error;
  }
}

/** Names compared byte for byte (a name with an escape is never compared: the reader gives up on it). */
const NAMES = {
  error: ascii("error"),
  result: ascii("result"),
  code: ascii("code"),
  isError: ascii("isError"),
  protocolVersion: ascii("protocolVersion"),
} as const;

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (character) => character.charCodeAt(0));
}

class Reader {
  private at = 0;

  constructor(private readonly bytes: Uint8Array) {
    // As TextDecoder does: a leading byte-order mark is not part of the text.
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) this.at = 3;
  }

  body(): (MessageFacts | null)[] {
    this.space();
    const messages: (MessageFacts | null)[] = [];
    if (this.peek() === 0x5b) {
      // A batch: each element is a message.
      this.elements(() => messages.push(this.message()));
    } else {
      messages.push(this.message());
    }
    this.space();
    if (this.at !== this.bytes.length) throw new Unread();
    return messages;
  }

  /** A message: an object's `error` and `result` members, or null for any other value. */
  private message(): MessageFacts | null {
    this.space();
    if (this.peek() !== 0x7b) {
      this.value(1);
      return null;
    }
    let error: MessageFacts["error"] = null;
    let result: MessageFacts["result"] = null;
    this.members(1, true, (name) => {
      if (this.is(name, NAMES.error)) error = this.errorValue();
      else if (this.is(name, NAMES.result)) result = this.resultValue();
      else this.value(2);
    });
    return { error, result };
  }

  private errorValue(): MessageFacts["error"] {
    if (this.peek() !== 0x7b) {
      this.value(2);
      return null;
    }
    let code: number | null = null;
    this.members(2, true, (name) => {
      if (this.is(name, NAMES.code)) {
        const start = this.at;
        const isNumber = this.isNumberStart();
        this.value(3);
        code = isNumber ? Number(decoder.decode(this.bytes.subarray(start, this.at))) : null;
      } else this.value(3);
    });
    return { code };
  }

  private resultValue(): MessageFacts["result"] {
    if (this.peek() !== 0x7b) {
      this.value(2);
      return null;
    }
    let isError = false;
    let protocolVersion: string | null = null;
    this.members(2, true, (name) => {
      if (this.is(name, NAMES.isError)) {
        isError = this.peek() === 0x74; // `true`; validated by value()
        this.value(3);
      } else if (this.is(name, NAMES.protocolVersion)) {
        if (this.peek() === QUOTE) {
          const [start, end, escaped] = this.string();
          if (escaped) throw new Unread();
          protocolVersion = decoder.decode(this.bytes.subarray(start, end));
        } else {
          protocolVersion = null;
          this.value(3);
        }
      } else this.value(3);
    });
    return { isError, protocolVersion };
  }

  /**
   * An object at `depth`, calling `onMember` with each name (as a span) with
   * the reader at its value. `compared`: the names are compared, so a name
   * with an escape (which may spell any name) is not read.
   */
  private members(depth: number, compared: boolean, onMember: (name: readonly [number, number]) => void): void {
    if (depth > MAX_DEPTH) throw new Unread();
    this.expect(0x7b);
    this.space();
    if (this.peek() === 0x7d) {
      this.at += 1;
      return;
    }
    for (;;) {
      this.space();
      if (this.peek() !== QUOTE) throw new Unread();
      const [start, end, escaped] = this.string();
      this.space();
      this.expect(0x3a);
      this.space();
      if (escaped && compared) throw new Unread();
      onMember([start, end]);
      this.space();
      if (this.comma()) continue;
      this.expect(0x7d);
      return;
    }
  }

  /** An array at the reader, calling `onElement` with the reader at each element. */
  private elements(onElement: () => void): void {
    this.expect(0x5b);
    this.space();
    if (this.peek() === 0x5d) {
      this.at += 1;
      return;
    }
    for (;;) {
      onElement();
      this.space();
      if (this.comma()) continue;
      this.expect(0x5d);
      return;
    }
  }

  /** Any JSON value, validated and skipped. */
  private value(depth: number): void {
    if (depth > MAX_DEPTH) throw new Unread();
    this.space();
    const first = this.peek();
    if (first === 0x7b) {
      this.members(depth, false, () => this.value(depth + 1));
    } else if (first === 0x5b) {
      this.elements(() => this.value(depth + 1));
    } else if (first === QUOTE) {
      this.string();
    } else if (first === 0x74) {
      this.literal("true");
    } else if (first === 0x66) {
      this.literal("false");
    } else if (first === 0x6e) {
      this.literal("null");
    } else {
      this.number();
    }
  }

  /** A string at the reader: the span of its contents, and whether it holds an escape. */
  private string(): [number, number, boolean] {
    this.expect(QUOTE);
    const { bytes } = this;
    const start = this.at;
    let escaped = false;
    // Most of an answer's bytes are in strings: this loop keeps its position in a local and leaves the
    // escapes (rare) to the general reader.
    for (let at = start; ; ) {
      if (at >= bytes.length) throw new Unread(); // the end of the body
      const byte = bytes[at]!;
      at += 1;
      if (byte === QUOTE) {
        this.at = at;
        return [start, at - 1, escaped];
      }
      if (byte < 0x20) throw new Unread(); // a control character
      if (byte === BACKSLASH) {
        escaped = true;
        this.at = at;
        const next = this.take();
        if (next === 0x75) {
          for (let digit = 0; digit < 4; digit += 1) if (!isHexDigit(this.take())) throw new Unread();
        } else if (!isEscapable(next)) throw new Unread();
        at = this.at;
      }
    }
  }

  private isNumberStart(): boolean {
    return this.peek() === 0x2d || isDigit(this.peek());
  }

  /** -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
  private number(): void {
    if (this.peek() === 0x2d) this.at += 1;
    if (this.peek() === 0x30) this.at += 1;
    else if (isDigit(this.peek())) this.digits();
    else throw new Unread();
    if (this.peek() === 0x2e) {
      this.at += 1;
      this.digits();
    }
    if (this.peek() === 0x65 || this.peek() === 0x45) {
      this.at += 1;
      if (this.peek() === 0x2b || this.peek() === 0x2d) this.at += 1;
      this.digits();
    }
  }

  /** One or more digits. */
  private digits(): void {
    if (!isDigit(this.peek())) throw new Unread();
    while (isDigit(this.peek())) this.at += 1;
  }

  private literal(word: string): void {
    for (let index = 0; index < word.length; index += 1) if (this.take() !== word.charCodeAt(index)) throw new Unread();
  }

  /** JSON's whitespace: space, tab, line feed, carriage return. */
  private space(): void {
    for (let byte = this.peek(); byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d; byte = this.peek()) this.at += 1;
  }

  private is(name: readonly [number, number], expected: Uint8Array): boolean {
    const [start, end] = name;
    if (end - start !== expected.length) return false;
    for (let index = 0; index < expected.length; index += 1) if (this.bytes[start + index] !== expected[index]) return false;
    return true;
  }

  /** The byte at the reader, or -1 at the end. */
  private peek(): number {
    return this.at < this.bytes.length ? this.bytes[this.at]! : -1;
  }

  private take(): number {
    const byte = this.peek();
    this.at += 1;
    return byte;
  }

  /** Whether a comma follows (consumed if so). */
  private comma(): boolean {
    if (this.peek() !== 0x2c) return false;
    this.at += 1;
    return true;
  }

  /** The expected byte, consumed, or the body is not read. */
  private expect(expected: number): void {
    if (this.take() !== expected) throw new Unread();
  }
}

function isDigit(byte: number): boolean {
  return byte >= 0x30 && byte <= 0x39;
}

function isHexDigit(byte: number): boolean {
  return isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);
}

/** `"` `\` `/` `b` `f` `n` `r` `t` after a backslash (`u` is read apart). */
function isEscapable(byte: number): boolean {
  return byte === QUOTE || byte === BACKSLASH || byte === 0x2f || byte === 0x62 || byte === 0x66 || byte === 0x6e || byte === 0x72 || byte === 0x74;
}
