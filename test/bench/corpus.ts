/**
 * The benchmark's deterministic text: a small PRNG and mixed English/Russian
 * task descriptions of realistic length (goal ≈ 120, blocker ≈ 120, tried ≈ 240
 * characters, 10 §6), used for the matcher, the door's 100 seeded signals and
 * the sustained-load workload, so every run measures the same corpus.
 */

/** A linear congruential PRNG: deterministic, seeded, fast enough for text. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const ENGLISH = "deploy worker cloudflare cron queue retry timeout database migration schema index token oauth client server request response cache header stream parser invoice payment ledger contract investor vehicle securitisation structure capital market agent tool memory search signal".split(" ");
const RUSSIAN = "развернуть воркер база данных миграция схема индекс токен клиент сервер запрос ответ кэш заголовок поток платеж договор инвестор структура капитал рынок агент инструмент память поиск сигнал ошибка".split(" ");

/** Words (60 % English) until `length` characters, cut to exactly `length`. */
export function sentence(random: () => number, length: number): string {
  let text = "";
  while (text.length < length) {
    const words = random() < 0.6 ? ENGLISH : RUSSIAN;
    text += (text === "" ? "" : " ") + words[Math.floor(random() * words.length)]!;
  }
  return text.slice(0, length).trim();
}

/** goal, blocker, tried of one realistic task. */
export function realisticTask(seed: number): [string, string, string] {
  const random = prng(seed + 1);
  return [sentence(random, 120), sentence(random, 120), sentence(random, 240)];
}
