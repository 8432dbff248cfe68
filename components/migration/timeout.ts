// How long `pulumi up` awaits the Jobs that must finish before Pulp's pods change (pulp:migration.timeout):
// the provider's customTimeouts take Go durations ("6h", "90m", "1h30m").

const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** Whole seconds of a duration such as "6h" or "1h30m", or undefined when it is not one. */
export function durationSeconds(value: string): number | undefined {
  const m = DURATION.exec(value);
  if (!m || value === "") return undefined;
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

/** Why the value is not a usable await timeout (the schema prefixes "must be "), or undefined. */
export function timeoutProblem(value: string): string | undefined {
  const seconds = durationSeconds(value);
  if (seconds === undefined) return 'a duration in h, m and s, such as "6h", "90m" or "1h30m"';
  if (seconds < 60) return 'at least "1m": the Job\'s pod alone takes longer to start';
  return undefined;
}
