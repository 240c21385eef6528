/**
 * The User-Agent classifier of 01 §10. A heuristic for counting crawlers versus
 * other traffic in logs; it proves nothing about who is calling and is never
 * used to decide anything.
 */

interface UserAgentClass {
  clientKind: "bot" | "probable-bot" | "browser-or-unknown";
  clientName: string;
}

/** Ordered: the first substring found wins. */
const KNOWN_CLIENTS: ReadonlyArray<readonly [substring: string, name: string]> = [
  ["gptbot", "GPTBot"],
  ["chatgpt-user", "ChatGPT-User"],
  ["oai-searchbot", "OAI-SearchBot"],
  ["claudebot", "ClaudeBot"],
  ["claude-web", "Claude-Web"],
  ["anthropic-ai", "Anthropic"],
  ["perplexitybot", "PerplexityBot"],
  ["googlebot", "Googlebot"],
  ["bingbot", "Bingbot"],
  ["yandexbot", "YandexBot"],
  ["duckduckbot", "DuckDuckBot"],
  ["bytespider", "ByteSpider"],
  ["facebookexternalhit", "Facebook"],
  ["twitterbot", "Twitterbot"],
  ["linkedinbot", "LinkedInBot"],
  ["curl/", "curl"],
  ["wget/", "wget"],
  ["python-requests", "python-requests"],
  ["python-httpx", "python-httpx"],
];

const PROBABLE_BOT_MARKERS = [
  "bot",
  "crawler",
  "spider",
  "scraper",
  "headless",
  "httpclient",
  "aiohttp",
  "okhttp",
  "go-http-client",
] as const;

export function classifyUserAgent(userAgent: string): UserAgentClass {
  const lower = userAgent.toLowerCase();
  for (const [substring, name] of KNOWN_CLIENTS) {
    if (lower.includes(substring)) return { clientKind: "bot", clientName: name };
  }
  if (PROBABLE_BOT_MARKERS.some((marker) => lower.includes(marker))) {
    return { clientKind: "probable-bot", clientName: "unidentified" };
  }
  return { clientKind: "browser-or-unknown", clientName: "unknown" };
}
