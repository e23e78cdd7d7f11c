/** How the run viewer writes values into its page: HTML escaping, badges, durations, numbers, dates. */

/** JSON safe inside a `<script>` element: no `<`, `>`, `&` or line separators survive as such. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Escapes text for HTML content and attribute values. */
export function esc(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export function statusBadge(status: string): string {
  return `<span class="badge s-${esc(status)}">${esc(status.replace('_', ' '))}</span>`;
}

export function formatMs(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatNumber(n: number): string {
  return n.toLocaleString('en-US');
}

export function formatCost(cost: number): string {
  if (cost === 0) return '0';
  return cost < 0.01 ? cost.toPrecision(2) : cost.toFixed(4);
}

export function formatDate(iso: string): string {
  return iso
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC')
    .replace(/Z$/, ' UTC');
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

export function sum<T>(items: readonly T[], f: (item: T) => number): number {
  return items.reduce((n, item) => n + f(item), 0);
}
