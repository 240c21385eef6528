/**
 * Stop lists and the short-term allow-list of the shared-memory matcher
 * (03 §5.3–§5.4). Compared after NFKC, lower-casing and ё→е, so the Russian
 * list is spelled with е. A unit test pins the exact contents.
 */

export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  "about", "after", "also", "and", "any", "are", "aren", "because", "been", "before",
  "being", "both", "but", "can", "could", "did", "didn", "does", "doesn", "don",
  "each", "for", "from", "had", "has", "have", "her", "here", "him", "his",
  "how", "into", "isn", "its", "just", "may", "might", "more", "most", "must",
  "not", "only", "other", "our", "over", "she", "should", "some", "such", "than",
  "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
  "too", "via", "was", "wasn", "were", "what", "when", "where", "which", "while",
  "who", "why", "will", "with", "without", "won", "would", "yet", "you", "your",
]);

export const RUSSIAN_STOP_WORDS: ReadonlySet<string> = new Set([
  "без", "более", "больше", "будет", "был", "была", "были", "было", "быть", "вам",
  "вас", "весь", "вот", "все", "всего", "всех", "где", "для", "его", "если",
  "есть", "еще", "здесь", "или", "как", "какая", "какой", "когда", "кто", "куда",
  "меня", "мне", "может", "можно", "мой", "над", "надо", "нас", "него", "нее",
  "ней", "нет", "них", "ничего", "она", "они", "оно", "очень", "под", "после",
  "потом", "потому", "при", "про", "сам", "себе", "себя", "так", "такой", "там",
  "тем", "тогда", "того", "тоже", "только", "том", "тот", "тут", "уже", "чего",
  "чем", "через", "что", "чтобы", "эти", "это", "этого", "этой", "этом", "этот",
]);

/** Technical terms kept although shorter than three code points. */
export const SHORT_TERM_ALLOWLIST: ReadonlySet<string> = new Set([
  "ai", "ml", "db", "ui", "ux", "ip", "js", "ts", "go", "os", "qa", "ci", "cd",
  "id", "io", "vm", "pr", "c", "r", "2d", "3d", "5g", "ии", "бд", "ос",
]);

/** Both lists in one set (the tokeniser looks them up by hash, tokenize.ts). */
export const STOP_WORDS: ReadonlySet<string> = new Set([...ENGLISH_STOP_WORDS, ...RUSSIAN_STOP_WORDS]);
