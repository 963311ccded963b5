import { InvalidSubjectError } from './errors.ts';

const WHITESPACE = /\s/;
const DOT = 46; // '.'
const STAR = 42; // '*'
const GT = 62; // '>'

/**
 * NATS subject syntax, checked the same way by both buses: '.'-separated non-empty tokens, no
 * whitespace; a subscription may use `*` as a whole token and `>` as the last one, a publish neither.
 */
export function assertSubject(subject: string, kind: 'publish' | 'subscribe'): void {
  if (typeof subject !== 'string' || subject.length === 0) throw new InvalidSubjectError(String(subject), 'must be a non-empty string');
  if (WHITESPACE.test(subject)) throw new InvalidSubjectError(subject, 'must not contain whitespace');
  // one pass over the characters, no allocation: every publish and request goes through here
  let start = 0;
  for (let i = 0; i <= subject.length; i++) {
    if (i < subject.length && subject.charCodeAt(i) !== DOT) continue;
    if (i === start) throw new InvalidSubjectError(subject, 'has an empty token');
    if (i === start + 1) {
      const c = subject.charCodeAt(start);
      if (kind === 'publish' && (c === STAR || c === GT)) throw new InvalidSubjectError(subject, 'a publish subject cannot have wildcards');
      if (c === GT && i !== subject.length) throw new InvalidSubjectError(subject, "'>' must be the last token");
    }
    start = i + 1;
  }
}

/** Queue group names are single words. */
export function assertQueue(queue: string): void {
  if (typeof queue !== 'string' || queue.length === 0 || WHITESPACE.test(queue)) {
    throw new InvalidSubjectError(String(queue), 'queue group names are non-empty, without whitespace');
  }
}
