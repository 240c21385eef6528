/**
 * The byte sources of `magnt metrics`: files read in 4 MiB chunks with Node's
 * own file API, stdin for `-`, and gzip (by its magic bytes, whatever the file
 * name) decompressed as a stream (08 §5.2). No input is ever held whole.
 *
 * Every failure to read becomes an `EnvironmentError` (exit 3, 08 §5): the
 * message names the path the operator typed and the system error code, never
 * any content.
 */
import { open, type FileHandle } from "node:fs/promises";
import { createGunzip } from "node:zlib";
import { EnvironmentError } from "../../lib/errors";
import type { ParallelFile } from "./parallel";

/** Read size (08 §5.2). */
export const CHUNK_BYTES = 4 * 1024 * 1024;
const GZIP_CHUNK_BYTES = 1024 * 1024;

/** One input as the command sees it. */
export interface MetricsInput {
  /** The argument as typed (`-` for stdin), for error messages only. */
  name: string;
  /** Size on disk (compressed size for gzip), null for stdin. */
  size: number | null;
  /** The decompressed bytes, in chunks; `onRawBytes` reports progress in on-disk bytes. */
  chunks(onRawBytes: (bytes: number) => void): AsyncIterable<Buffer>;
  /** Set once reading has begun: whether the bytes were gzip (for the not-an-export warning). */
  gzip: boolean;
  /** A regular file, which the parallel path may read by position instead (`parallel.ts`). */
  file?: ParallelFile;
  close(): Promise<void>;
}

/** A readable the command may take stdin from (tests pass their own). */
export type StdinSource = AsyncIterable<Buffer | string>;

/**
 * zlib's codes said in words (with the code kept for a search): a gzip file
 * cut short (an interrupted download) ends with Z_BUF_ERROR, corrupt data
 * with Z_DATA_ERROR.
 */
const ZLIB_WORDS: Record<string, string> = {
  Z_BUF_ERROR: "the gzip data ends early — the file is truncated (an interrupted download or copy?)",
  Z_DATA_ERROR: "the gzip data is corrupt",
};

function describeCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return ZLIB_WORDS[code] === undefined ? code : `${ZLIB_WORDS[code]} (${code})`;
  return error instanceof Error ? error.message.split("\n")[0]! : String(error);
}

export function unreadable(name: string, error: unknown): EnvironmentError {
  if (error instanceof EnvironmentError) return error;
  return new EnvironmentError(`cannot read ${name}: ${describeCode(error)}`);
}

const isGzip = (bytes: Buffer): boolean => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;

/**
 * Decompresses `source` (whose first chunk is `first`) as a stream.
 *
 * Each compressed chunk is handed to zlib only once the previous one has been
 * consumed (the write callback), because the file reader reuses its buffers:
 * a stream that read ahead (as `Readable.from(…).pipe(…)` does, up to 16
 * chunks) would overwrite a chunk zlib has not read yet — which failed every
 * gzip input over 4 MiB with Z_DATA_ERROR.
 */
async function* gunzip(name: string, first: Buffer, rest: AsyncIterator<Buffer>): AsyncIterable<Buffer> {
  const inflater = createGunzip({ chunkSize: GZIP_CHUNK_BYTES });
  const write = (chunk: Buffer) =>
    new Promise<void>((resolve, reject) => inflater.write(chunk, (error) => (error ? reject(error) : resolve())));
  const feed = (async () => {
    await write(first);
    for (;;) {
      const next = await rest.next();
      if (next.done === true) break;
      await write(next.value);
    }
    inflater.end();
  })();
  // A read or inflate failure ends the output loop below with that error.
  feed.catch((error: unknown) => inflater.destroy(error instanceof Error ? error : new Error(String(error))));
  try {
    for await (const chunk of inflater) yield chunk as Buffer;
    await feed;
  } catch (error) {
    throw unreadable(name, error);
  } finally {
    inflater.destroy();
  }
}

/** Passes chunks through, decompressing when the first bytes are gzip's magic. */
async function* maybeGunzip(input: MetricsInput, source: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  const name = input.name;
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done === true) return;
  input.gzip = isGzip(first.value);
  if (input.gzip) {
    yield* gunzip(name, first.value, iterator);
    return;
  }
  yield first.value;
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) return;
    yield next.value;
  }
}

/** Opens a file now (so an unreadable file fails before any output). */
export async function openFileInput(path: string, name: string): Promise<MetricsInput> {
  let handle: FileHandle;
  let size: number;
  try {
    handle = await open(path, "r");
    const stat = await handle.stat();
    if (stat.isDirectory()) {
      await handle.close();
      throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    }
    size = stat.size;
  } catch (error) {
    throw unreadable(name, error);
  }
  async function* read(onRawBytes: (bytes: number) => void): AsyncIterable<Buffer> {
    // One buffer for every read: each chunk is consumed synchronously before the
    // next read (the scanner copies whatever must outlive it), so reusing it keeps
    // RSS flat instead of leaving 4 MiB garbage buffers for the collector.
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null));
      } catch (error) {
        throw unreadable(name, error);
      }
      if (bytesRead === 0) return;
      onRawBytes(bytesRead);
      yield bytesRead === CHUNK_BYTES ? buffer : buffer.subarray(0, bytesRead);
    }
  }
  const input: MetricsInput = {
    name,
    size,
    gzip: false,
    chunks: (onRawBytes) => maybeGunzip(input, read(onRawBytes)),
    file: {
      fd: handle.fd,
      size,
      // Positional: the file offset the chunked reads use stays at 0.
      readHead: async (length) => {
        const head = Buffer.alloc(length);
        try {
          const { bytesRead } = await handle.read(head, 0, length, 0);
          return head.subarray(0, bytesRead);
        } catch (error) {
          throw unreadable(name, error);
        }
      },
    },
    close: () => handle.close(),
  };
  return input;
}

/** Stdin (`-`). */
export function stdinInput(stdin: StdinSource): MetricsInput {
  async function* read(onRawBytes: (bytes: number) => void): AsyncIterable<Buffer> {
    try {
      for await (const chunk of stdin) {
        const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
        onRawBytes(buffer.length);
        yield buffer;
      }
    } catch (error) {
      throw unreadable("-", error);
    }
  }
  const input: MetricsInput = { name: "-", size: null, gzip: false, chunks: (onRawBytes) => maybeGunzip(input, read(onRawBytes)), close: async () => undefined };
  return input;
}
