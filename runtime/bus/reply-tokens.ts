import { randomFillSync } from 'node:crypto';

/** Tokens kept for reuse: more than the server's subject cache (1,024) would gain nothing. */
const MAX_REUSABLE_TOKENS = 1024;

/** Random bytes per unguessable token: 128 bits, 22 characters of base64url. */
const TOKEN_BYTES = 16;

/**
 * The last token of a request's reply subject, `<inbox>.<token>` (nats.ts), of one of two kinds:
 *
 * - **Reused** (`request()`): a counter in base 36, and a token freed by its request's answer is
 *   handed out again, last freed first. The set of reply subjects then stays as small as the number
 *   of requests in flight, and the server finds each in its caches (the account's subject cache and,
 *   under permissions, the responder's publish-permission cache) instead of matching a subject it
 *   has never seen on every answer.
 * - **Unguessable** (`unguessable()`): `R` and 128 random bits, never handed out again. For a request
 *   whose subject nobody else may read but whose answers others can (a raylet's to the GCS: the node
 *   role's inbox, `_INBOX.<cluster>.node`, is shared by every raylet and worker host; docs/security.md,
 *   "Answers the other way"). Such a peer sees the answers sent to a raylet, so with counted or
 *   reused tokens it could tell the subject of the raylet's next heartbeat and answer it before the
 *   GCS. A random token is known to nobody but the requester until its answer is on its way, and is
 *   never waited on again.
 *
 * A batch's token starts with `_` (nats.ts, `requestBatch`), a request's never does: base 36 has
 * no `_`, and an unguessable token starts with `R`.
 */
export class ReplyTokens {
  private next = 0;
  private nextBatchToken = 0;
  private readonly reusable: string[] = [];
  private readonly reusableBatches: string[] = [];
  /** Random bytes drawn ahead (one system call per 256 tokens), and how far they are used. */
  private pool: Buffer | undefined;
  private at = 0;

  /** A reused token for a request. */
  request(): string {
    return this.reusable.pop() ?? (this.next++).toString(36);
  }

  /** A token for a request nobody else can tell in advance. */
  unguessable(): string {
    if (this.pool === undefined) {
      this.pool = Buffer.allocUnsafe(TOKEN_BYTES * 256);
      this.at = this.pool.length;
    }
    const pool = this.pool;
    if (this.at + TOKEN_BYTES > pool.length) {
      randomFillSync(pool);
      this.at = 0;
    }
    const token = 'R' + pool.toString('base64url', this.at, this.at + TOKEN_BYTES);
    this.at += TOKEN_BYTES;
    return token;
  }

  /** A token for a batch of requests. */
  batch(): string {
    return this.reusableBatches.pop() ?? `_${(this.nextBatchToken++).toString(36)}`;
  }

  /** A request's token whose one answer arrived: handed out again, unless it was unguessable. */
  answered(token: string): void {
    if (token.charCodeAt(0) !== UPPER_R && this.reusable.length < MAX_REUSABLE_TOKENS) this.reusable.push(token);
  }

  /** A batch's token every request of which was answered. */
  batchAnswered(token: string): void {
    if (this.reusableBatches.length < MAX_REUSABLE_TOKENS) this.reusableBatches.push(token);
  }
}

/** `R`: the first character of an unguessable token, never of a counted one (base 36 is lower case). */
const UPPER_R = 0x52;
