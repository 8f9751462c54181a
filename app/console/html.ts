// HTML built only through `html\`…\``: every interpolated value is escaped unless it is itself an `Html` (made by
// this tag), so a memo, label or error text an attacker chose is shown as text, never parsed as markup. Arrays of
// Html join. Attribute values are quoted in the templates and escaped the same way (& < > " ' all encoded).

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

type Value = Html | string | number | bigint | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v instanceof Html) return v.text;
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** A URL for an href: only http(s) and same-site paths; anything else (javascript:, data:) becomes '#'. */
export function safeHref(url: string): string {
  return /^(https?:\/\/|\/)/i.test(url) && !/^\/\//.test(url) ? url : '#';
}
