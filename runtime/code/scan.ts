/**
 * The module specifiers a JavaScript or TypeScript source imports at run time: static `import …
 * from`, `import '…'`, `export … from`, dynamic `import('…')` with a literal, `require('…')` and
 * TypeScript's `import x = require('…')`. Type-only imports and exports (`import type`, `export
 * type … from`) are left out: they are erased before the code runs. What shipping needs
 * (bundle.ts) is the relative ones; this returns every literal specifier and lets it choose.
 *
 * Not a parser (typescript is only a devDependency, and a parser per file would cost more than the
 * hashing): a tokenizer that knows comments, strings, template literals (their `${…}` scanned as
 * code), regular expression literals (told from division by the token before the `/`), then a
 * match over the tokens. A specifier that is not a literal (`import(name)`) is not followed.
 */
/** `literal`: a template literal's end or a regular expression — not specifiers: only plain string literals are. */
type Token = { readonly kind: 'word' | 'punct' | 'string' | 'literal'; readonly value: string };

export function scanImports(source: string): string[] {
  const tokens = tokenize(source);
  const found: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== 'word') continue;
    const prev = tokens[i - 1];
    if (prev !== undefined && prev.kind === 'punct' && (prev.value === '.' || prev.value === '?.')) continue;
    const next = tokens[i + 1];
    if (t.value === 'import') {
      if (next === undefined) continue;
      if (next.kind === 'string') found.push(next.value);
      else if (next.kind === 'punct' && next.value === '(') pushLiteralCall(tokens, i + 1, found);
      else if (!(next.kind === 'punct' && next.value === '.') && !isTypeOnly(tokens, i + 1)) pushFromClause(tokens, i + 1, found);
    } else if (t.value === 'export') {
      if (next === undefined || isTypeOnly(tokens, i + 1)) continue;
      if (next.kind === 'punct' && (next.value === '{' || next.value === '*')) pushFromClause(tokens, i + 1, found);
    } else if (t.value === 'require' && next?.kind === 'punct' && next.value === '(') {
      pushLiteralCall(tokens, i + 1, found);
    }
  }
  return found;
}

/** `type` after import/export starts a type-only clause — unless it is a default binding named `type` (`import type from './x'`, `import type, { a } from`). */
function isTypeOnly(tokens: readonly Token[], at: number): boolean {
  const t = tokens[at];
  if (t?.kind !== 'word' || t.value !== 'type') return false;
  const after = tokens[at + 1];
  if (after === undefined) return false;
  if (after.kind === 'punct') return after.value === '{' || after.value === '*';
  if (after.kind === 'word') return !(after.value === 'from' && tokens[at + 2]?.kind === 'string');
  return false;
}

/** `( '<literal>'` — a call whose first argument is a string literal. */
function pushLiteralCall(tokens: readonly Token[], open: number, found: string[]): void {
  const arg = tokens[open + 1];
  if (arg?.kind === 'string') found.push(arg.value);
}

/** An import or export clause (bindings, braces, `*`, `as`, commas) up to `from '<literal>'`. */
function pushFromClause(tokens: readonly Token[], from: number, found: string[]): void {
  for (let j = from; j < tokens.length && j < from + 4096; j++) {
    const t = tokens[j];
    if (t.kind === 'word' && t.value === 'from' && tokens[j + 1]?.kind === 'string') {
      found.push(tokens[j + 1].value);
      return;
    }
    if (t.kind === 'string' || t.kind === 'literal' || (t.kind === 'punct' && !CLAUSE_PUNCT.has(t.value))) return;
  }
}

const CLAUSE_PUNCT = new Set(['{', '}', ',', '*', '=']);

/** Words after which a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  /** Open `${` of template literals, as the brace depth at which each one closes. */
  const templates: number[] = [];
  let depth = 0;
  let i = 0;
  const n = src.length;
  const regexAllowed = (): boolean => {
    const last = tokens.at(-1);
    if (last === undefined) return true;
    if (last.kind === 'string' || last.kind === 'literal') return false;
    if (last.kind === 'word') return BEFORE_REGEX.has(last.value);
    return last.value !== ')' && last.value !== ']' && last.value !== '}';
  };
  const readTemplate = (): void => {
    // from just after a backquote or a `}` closing `${…}`: to the closing backquote, or into `${`
    while (i < n) {
      const c = src[i];
      if (c === '\\') i += 2;
      else if (c === '`') {
        i++;
        tokens.push({ kind: 'literal', value: '`' });
        return;
      } else if (c === '$' && src[i + 1] === '{') {
        i += 2;
        templates.push(depth);
        depth++;
        tokens.push({ kind: 'punct', value: '${' });
        return;
      } else i++;
    }
  };
  while (i < n) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\ufeff' || c === '\u2028' || c === '\u2029') {
      i++;
    } else if (c === '/' && src[i + 1] === '/') {
      while (i < n && src[i] !== '\n') i++;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (c === '"' || c === "'") {
      let value = '';
      i++;
      while (i < n && src[i] !== c && src[i] !== '\n') {
        if (src[i] === '\\') {
          value += src[i + 1] ?? '';
          i += 2;
        } else value += src[i++];
      }
      i++;
      tokens.push({ kind: 'string', value });
    } else if (c === '`') {
      i++;
      readTemplate();
    } else if (c === '/' && regexAllowed()) {
      let inClass = false;
      i++;
      while (i < n && src[i] !== '\n') {
        const r = src[i];
        if (r === '\\') i++;
        else if (r === '[') inClass = true;
        else if (r === ']') inClass = false;
        else if (r === '/' && !inClass) break;
        i++;
      }
      i++;
      while (i < n && /[a-z]/i.test(src[i])) i++;
      tokens.push({ kind: 'literal', value: '/regex/' });
    } else if (/[\p{ID_Start}$_]/u.test(c) || c === '#' || c === '@') {
      let j = i + 1;
      while (j < n && /[\p{ID_Continue}$\u200c\u200d]/u.test(src[j])) j++;
      tokens.push({ kind: 'word', value: src.slice(i, j) });
      i = j;
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      let j = i + 1;
      while (j < n && /[\w.]/.test(src[j])) j++;
      tokens.push({ kind: 'word', value: src.slice(i, j) });
      i = j;
    } else if (c === '?' && src[i + 1] === '.' && !/[0-9]/.test(src[i + 2] ?? '')) {
      tokens.push({ kind: 'punct', value: '?.' });
      i += 2;
    } else if (c === '{') {
      depth++;
      tokens.push({ kind: 'punct', value: c });
      i++;
    } else if (c === '}') {
      depth--;
      i++;
      if (templates.length > 0 && templates.at(-1) === depth) {
        templates.pop();
        readTemplate();
      } else tokens.push({ kind: 'punct', value: c });
    } else {
      tokens.push({ kind: 'punct', value: c });
      i++;
    }
  }
  return tokens;
}
