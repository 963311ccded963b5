import { InvalidSubjectError } from './errors.ts';

const WHITESPACE = /\s/;

/**
 * NATS subject syntax, checked the same way by both buses: '.'-separated non-empty tokens, no
 * whitespace; a subscription may use `*` as a whole token and `>` as the last one, a publish neither.
 */
export function assertSubject(subject: string, kind: 'publish' | 'subscribe'): void {
  if (typeof subject !== 'string' || subject.length === 0) throw new InvalidSubjectError(String(subject), 'must be a non-empty string');
  if (WHITESPACE.test(subject)) throw new InvalidSubjectError(subject, 'must not contain whitespace');
  const tokens = subject.split('.');
  tokens.forEach((token, i) => {
    if (token.length === 0) throw new InvalidSubjectError(subject, 'has an empty token');
    if (kind === 'publish' && (token === '*' || token === '>')) throw new InvalidSubjectError(subject, 'a publish subject cannot have wildcards');
    if (token === '>' && i !== tokens.length - 1) throw new InvalidSubjectError(subject, "'>' must be the last token");
  });
}

/** Queue group names are single words. */
export function assertQueue(queue: string): void {
  if (typeof queue !== 'string' || queue.length === 0 || WHITESPACE.test(queue)) {
    throw new InvalidSubjectError(String(queue), 'queue group names are non-empty, without whitespace');
  }
}
