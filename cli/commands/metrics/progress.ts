/**
 * Progress of `magnt metrics` on stderr (08 §5.2): one self-overwriting line
 * per second with bytes read, the total and MB/s — only when stderr is a TTY,
 * `--quiet` is off and the inputs total at least 64 MiB. Numbers only.
 */
import type { TextSink } from "../../lib/context";

/** Inputs smaller than this finish before a progress line would help. */
export const PROGRESS_MIN_BYTES = 64 * 1024 * 1024;
const INTERVAL_MS = 1000;
const MB = 1_000_000;

export class Progress {
  bytes = 0;
  private readonly timer: ReturnType<typeof setInterval> | null;
  private readonly started = performance.now();
  private shown = false;

  constructor(
    private readonly stderr: TextSink,
    private readonly options: { enabled: boolean; totalBytes: number },
  ) {
    this.timer =
      options.enabled && options.totalBytes >= PROGRESS_MIN_BYTES ? setInterval(() => this.draw(), INTERVAL_MS) : null;
    this.timer?.unref?.();
  }

  add(bytes: number): void {
    this.bytes += bytes;
  }

  /** Stops the timer and clears the line. */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    if (this.shown) this.stderr.write("\r\u001b[K");
  }

  private draw(): void {
    const seconds = (performance.now() - this.started) / 1000;
    const rate = seconds > 0 ? this.bytes / MB / seconds : 0;
    this.shown = true;
    this.stderr.write(
      `\r\u001b[Kreading ${(this.bytes / MB).toFixed(0)} of ${(this.options.totalBytes / MB).toFixed(0)} MB, ${rate.toFixed(0)} MB/s`,
    );
  }
}
