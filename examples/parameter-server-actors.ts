// The actors of examples/parameter-server.ts. A module of its own with no top-level side effects:
// every worker host imports it by URL to construct them.
import { defineActor, getRuntimeContext, type ActorHandle } from 'orrery';

/** Holds the model's weights; trainers pull them and push gradients (plain SGD). */
export class ParameterServer {
  private readonly weights: number[];
  private version = 0;

  constructor(size: number, private readonly learningRate = 0.2) {
    this.weights = new Array<number>(size).fill(0);
  }

  pull(): { version: number; weights: number[] } {
    return { version: this.version, weights: this.weights.slice() };
  }

  /** Applies one gradient; returns the new version. */
  push(gradient: number[]): number {
    for (let i = 0; i < this.weights.length; i++) this.weights[i]! -= this.learningRate * (gradient[i] ?? 0);
    return ++this.version;
  }
}
export const ParameterServerActor = defineActor(import.meta.url, ParameterServer);

/**
 * One trainer: holds the server's handle (given to its constructor) and a shard of data — here,
 * a target vector the model should learn; its gradient is that of ½‖w − target‖².
 */
export class Trainer {
  constructor(
    private readonly server: ActorHandle<ParameterServer>,
    private readonly target: number[],
  ) {}

  /** `steps` rounds of pull → gradient → push; where it ran and its loss at the end. */
  async train(steps: number): Promise<{ node: string; loss: number; lastVersion: number }> {
    let lastVersion = 0;
    for (let s = 0; s < steps; s++) {
      const { weights } = await this.server.call('pull');
      lastVersion = await this.server.call('push', weights.map((w, i) => w - this.target[i]!));
    }
    const { weights } = await this.server.call('pull');
    const loss = weights.reduce((sum, w, i) => sum + (w - this.target[i]!) ** 2, 0) / 2;
    return { node: getRuntimeContext().nodeName, loss, lastVersion };
  }
}
export const TrainerActor = defineActor(import.meta.url, Trainer);
