/**
 * Subscriptions indexed by subject token, as nats-server's sublist: matching a subject walks one
 * path per token (plus the `*` and `>` branches), so its cost grows with the subject's length and
 * the number of matches, not with the number of subscriptions. Results are cached per subject until
 * the next insert or remove.
 */
export interface TrieEntry {
  readonly subject: string;
  readonly queue?: string;
}

export interface TrieMatch<E> {
  /** Entries without a queue group: each gets the message. */
  readonly plain: readonly E[];
  /** Queue group name → its members: one member of each group gets the message. */
  readonly groups: ReadonlyMap<string, readonly E[]>;
}

interface TrieNode<E> {
  readonly children: Map<string, TrieNode<E>>;
  readonly here: Set<E>;
}

const CACHE_LIMIT = 4096;
const node = <E>(): TrieNode<E> => ({ children: new Map(), here: new Set() });

export class SubjectTrie<E extends TrieEntry> {
  private readonly root: TrieNode<E> = node();
  private readonly cache = new Map<string, TrieMatch<E>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  insert(entry: E): void {
    let at = this.root;
    for (const token of entry.subject.split('.')) {
      let next = at.children.get(token);
      if (!next) at.children.set(token, (next = node()));
      at = next;
    }
    if (!at.here.has(entry)) this.count++;
    at.here.add(entry);
    this.cache.clear();
  }

  /** Removes an entry; false when it was not there. Empty branches are pruned. */
  remove(entry: E): boolean {
    const path: TrieNode<E>[] = [this.root];
    const tokens = entry.subject.split('.');
    for (const token of tokens) {
      const next = path[path.length - 1].children.get(token);
      if (!next) return false;
      path.push(next);
    }
    if (!path[path.length - 1].here.delete(entry)) return false;
    this.count--;
    for (let i = tokens.length; i > 0; i--) {
      const n = path[i];
      if (n.here.size > 0 || n.children.size > 0) break;
      path[i - 1].children.delete(tokens[i - 1]);
    }
    this.cache.clear();
    return true;
  }

  /** Entries whose subject (possibly with wildcards) matches the concrete `subject`. */
  match(subject: string): TrieMatch<E> {
    const cached = this.cache.get(subject);
    if (cached) return cached;
    const found: E[] = [];
    collect(this.root, subject.split('.'), 0, found);
    const plain: E[] = [];
    const groups = new Map<string, E[]>();
    for (const e of found) {
      if (e.queue === undefined) plain.push(e);
      else {
        const members = groups.get(e.queue);
        if (members) members.push(e);
        else groups.set(e.queue, [e]);
      }
    }
    const result: TrieMatch<E> = { plain, groups };
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(subject, result);
    return result;
  }
}

function collect<E>(at: TrieNode<E>, tokens: readonly string[], i: number, out: E[]): void {
  if (i === tokens.length) {
    for (const e of at.here) out.push(e);
    return;
  }
  const rest = at.children.get('>');
  if (rest) for (const e of rest.here) out.push(e);
  const exact = at.children.get(tokens[i]);
  if (exact) collect(exact, tokens, i + 1, out);
  const star = at.children.get('*');
  if (star) collect(star, tokens, i + 1, out);
}
