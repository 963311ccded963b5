/**
 * Gathers what one event-loop turn produces and hands it over as one list, in order, in the check
 * phase of the loop (setImmediate) — after the turn's I/O callbacks and their promise chains, so a
 * burst of NATS messages read together becomes one IPC message. `flush()` hands over at once.
 */
export class TurnBatch<T> {
  #items: T[] = [];
  #scheduled = false;

  constructor(private readonly deliver: (items: T[]) => void) {}

  get size(): number {
    return this.#items.length;
  }

  push(item: T): void {
    this.#items.push(item);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.flush();
    });
  }

  flush(): void {
    if (this.#items.length === 0) return;
    const items = this.#items;
    this.#items = [];
    this.deliver(items);
  }
}
