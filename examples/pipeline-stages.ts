// The actors of examples/pipeline.ts. A module of its own with no top-level side effects: every
// worker host imports it by URL to construct them.
import { connect, defineActor, getRuntimeContext, type ActorHandle } from 'orrery';

export type StageKind = 'split' | 'normalize' | 'count';

/**
 * One stage: transforms what it is given and passes the result to the next stage, whose handle it
 * was constructed with; the last stage (count) keeps the totals.
 */
export class Stage {
  private readonly counts = new Map<string, number>();
  private handled = 0;

  constructor(
    private readonly kind: StageKind,
    private readonly next?: ActorHandle<Stage>,
  ) {}

  async process(input: string | string[]): Promise<number> {
    this.handled++;
    switch (this.kind) {
      case 'split':
        return this.forward(String(input).split(/\s+/).filter(Boolean));
      case 'normalize':
        return this.forward((input as string[]).map((w) => w.toLowerCase().replace(/[^a-z0-9']/g, '')).filter(Boolean));
      case 'count':
        for (const word of input as string[]) this.counts.set(word, (this.counts.get(word) ?? 0) + 1);
        return (input as string[]).length;
    }
  }

  /** The most frequent words so far (the count stage). */
  top(n: number): [string, number][] {
    return [...this.counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, n);
  }

  stats(): { kind: StageKind; node: string; handled: number } {
    return { kind: this.kind, node: getRuntimeContext().nodeName, handled: this.handled };
  }

  private forward(items: string[]): Promise<number> {
    if (!this.next) throw new Error(`stage ${this.kind} has no next stage`);
    return this.next.call('process', items);
  }
}
export const StageActor = defineActor(import.meta.url, Stage);

/**
 * Builds a pipeline from inside the cluster: creates the stages last to first through connect() in
 * its worker, each given the handle of the one after it, and returns all their handles, first
 * stage first. The stages are owned by the job that created the builder.
 */
export class PipelineBuilder {
  async build(kinds: StageKind[]): Promise<ActorHandle<Stage>[]> {
    const cluster = await connect();
    const stages: ActorHandle<Stage>[] = [];
    let next: ActorHandle<Stage> | undefined;
    for (const kind of [...kinds].reverse()) {
      next = await cluster.actor(StageActor).options({ schedulingStrategy: 'SPREAD' }).remote(kind, next);
      stages.unshift(next);
    }
    await Promise.all(stages.map((s) => s.ready({ timeoutMs: 30_000 })));
    return stages;
  }
}
export const PipelineBuilderActor = defineActor(import.meta.url, PipelineBuilder);
