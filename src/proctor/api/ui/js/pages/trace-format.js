// Small formatting shared by the trace and its sub-agent cards: durations, counts, tokens,
// and statuses as icon + text (never colour alone).

/** "420 ms", "12.3 s", "3 min 12 s"; "" when unknown. */
export function formatDuration(ms) {
  if (ms === null || ms === undefined) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  if (minutes < 60) return `${minutes} min ${seconds} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function formatCount(n) {
  return Number(n ?? 0).toLocaleString("en");
}

/** A token count with its breakdown as a title. */
export function tokenText(tokens) {
  if (!tokens) return null;
  return {
    text: `${formatCount(tokens.total)} tokens`,
    title: `input ${formatCount(tokens.input)} · output ${formatCount(tokens.output)} · cache read ${formatCount(tokens.cache_read)} · cache write ${formatCount(tokens.cache_write)}`
      + (tokens.reasoning ? ` · reasoning ${formatCount(tokens.reasoning)}` : ""),
  };
}

const STATUSES = {
  ok: ["✓", "ok", "ok"],
  completed: ["✓", "completed", "ok"],
  success: ["✓", "succeeded", "ok"],
  error: ["✗", "failed", "failed"],
  failed: ["✗", "failed", "failed"],
  interrupted: ["⏹", "interrupted", "failed"],
  rejected: ["⊘", "rejected", "failed"],
  max_turns: ["⏹", "stopped at max turns", "failed"],
  pending: ["…", "no result", "pending"],
  running: ["…", "running", "pending"],
};

/** Icon, words and tone for a status (the tone only adds colour to what the words say). */
export function statusLabel(status) {
  const known = STATUSES[String(status ?? "").toLowerCase()];
  if (known) return { icon: known[0], text: known[1], tone: known[2] };
  return { icon: "•", text: String(status ?? "unknown"), tone: "pending" };
}
