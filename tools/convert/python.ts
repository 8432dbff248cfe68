// The values of pulp-operator's `custom_pulp_settings` ConfigMap as data. The operator writes each entry into
// settings.py as `NAME = <value>` (controllers/repo_manager/secret.go addCustomPulpSettings), so a value is
// Python source; the plain literals a setting takes (numbers, strings, True/False/None, lists, tuples and
// dicts of them) are read here, and anything else (an expression, a name) is left to the person.

/** The value of a Python literal, or undefined when the text is anything more. */
export function pythonLiteral(text: string): unknown {
  const parser = new Parser(text);
  try {
    const value = parser.value();
    parser.space();
    return parser.done() ? value : undefined;
  } catch {
    return undefined;
  }
}

class Parser {
  private at = 0;
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at === this.text.length;
  }

  space(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at])) this.at++;
  }

  value(): unknown {
    this.space();
    const c = this.text[this.at];
    if (c === "'" || c === '"') return this.string(c);
    if (c === "[") return this.sequence("]");
    if (c === "(") return this.sequence(")");
    if (c === "{") return this.dict();
    const word = /^(True|False|None)\b/.exec(this.text.slice(this.at));
    if (word) {
      this.at += word[1].length;
      return word[1] === "True" ? true : word[1] === "False" ? false : null;
    }
    const number = /^-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?/.exec(this.text.slice(this.at));
    if (number && !/^-?0\d/.test(number[0])) {
      this.at += number[0].length;
      return Number(number[0]);
    }
    throw new Error("not a literal");
  }

  private string(quote: string): string {
    if (this.text.startsWith(quote.repeat(3), this.at)) throw new Error("triple-quoted");
    let out = "";
    for (this.at++; this.at < this.text.length; this.at++) {
      const c = this.text[this.at];
      if (c === quote) {
        this.at++;
        return out;
      }
      if (c === "\n") break;
      if (c !== "\\") {
        out += c;
        continue;
      }
      const next = this.text[++this.at];
      const escapes: Record<string, string> = { n: "\n", t: "\t", "\\": "\\", "'": "'", '"': '"' };
      if (!(next in escapes)) throw new Error(`escape \\${next}`);
      out += escapes[next];
    }
    throw new Error("unterminated string");
  }

  private sequence(close: string): unknown[] {
    this.at++;
    const items: unknown[] = [];
    for (;;) {
      this.space();
      if (this.text[this.at] === close) {
        this.at++;
        return items;
      }
      items.push(this.value());
      this.space();
      if (this.text[this.at] === ",") this.at++;
      else if (this.text[this.at] !== close) throw new Error(`expected , or ${close}`);
    }
  }

  private dict(): Record<string, unknown> {
    this.at++;
    const entries: Record<string, unknown> = {};
    for (;;) {
      this.space();
      if (this.text[this.at] === "}") {
        this.at++;
        return entries;
      }
      const key = this.value();
      if (typeof key !== "string") throw new Error("dict keys are strings here");
      this.space();
      if (this.text[this.at++] !== ":") throw new Error("expected :");
      entries[key] = this.value();
      this.space();
      if (this.text[this.at] === ",") this.at++;
      else if (this.text[this.at] !== "}") throw new Error("expected , or }");
    }
  }
}
