import { createRequire } from 'node:module';
import type { AnyStateMachine } from 'xstate';
import { MACHINE_KINDS, type MachineKind } from '../../protocols/messages/inspect.ts';
import { actorMachine } from '../gcs/actor.machine.ts';
import { gcsMachine } from '../gcs/gcs.machine.ts';
import { nodeMachine } from '../gcs/node.machine.ts';
import { placementGroupMachine } from '../gcs/placement-group.machine.ts';
import { rayletMachine } from '../raylet/raylet.machine.ts';
import { autoscalerMachine } from '../autoscaler/autoscaler.machine.ts';

/**
 * Statecharts of the runtime's machines as standalone SVG, drawn offline (docs/inspection.md,
 * "Statecharts"). The layout is ELK's layered algorithm (elkjs, the Eclipse Layout Kernel compiled
 * to JavaScript, pinned in package.json): it lays out nested states (compound nodes) with edges
 * between levels, which is what statecharts need, and runs in this process with no service, CDN or
 * native code. ELK's API is asynchronous (it expects a web worker); this module drives elkjs's own
 * in-process worker (`elk-worker.min.js`'s FakeWorker) directly, which computes synchronously, so
 * `renderStatechart` returns a string.
 *
 * Every state is a `<g class="state" data-state="<dotted path>">` (the path inspection records use
 * in `from` / `to`, e.g. `onNode.ALIVE`); every transition a `<g class="transition"
 * data-event="<event type>" data-source="…" data-target="…">` with its event name as the label
 * (guards in brackets, delayed transitions as `after <delay>`, invoked actors' answers as
 * `done: <src>` / `error: <src>`). Transitions declared on the machine itself start at the `(any
 * state)` box; targetless ones (context changes only) and re-entries are loops.
 */
export const MACHINE_TYPES: readonly MachineKind[] = MACHINE_KINDS;
export type MachineType = MachineKind;

const MACHINES: Record<MachineType, AnyStateMachine> = {
  gcs: gcsMachine as unknown as AnyStateMachine,
  node: nodeMachine as unknown as AnyStateMachine,
  raylet: rayletMachine as unknown as AnyStateMachine,
  actor: actorMachine as unknown as AnyStateMachine,
  placement_group: placementGroupMachine as unknown as AnyStateMachine,
  autoscaler: autoscalerMachine as unknown as AnyStateMachine,
};

const TITLES: Record<MachineType, string> = {
  gcs: 'Gcs machine (runtime/gcs/gcs.machine.ts)',
  node: 'Node machine (runtime/gcs/node.machine.ts)',
  raylet: 'Raylet machine (runtime/raylet/raylet.machine.ts)',
  actor: 'Actor machine (runtime/gcs/actor.machine.ts)',
  placement_group: 'PlacementGroup machine (runtime/gcs/placement-group.machine.ts)',
  autoscaler: 'Autoscaler machine (runtime/autoscaler/autoscaler.machine.ts)',
};

/** The xstate definition of a machine type. */
export function machineDefinition(machine: MachineType): AnyStateMachine {
  if (!Object.hasOwn(MACHINES, machine)) throw new RangeError(`unknown machine ${JSON.stringify(machine)} (expected ${MACHINE_TYPES.join(', ')})`);
  return MACHINES[machine];
}

/** Every state's dotted path, parents before children (what the drawing carries as data-state). */
export function statePaths(machine: MachineType): string[] {
  const out: string[] = [];
  const walk = (node: StateNodeLike): void => {
    for (const child of Object.values(node.states)) {
      out.push(child.path.join('.'));
      walk(child);
    }
  };
  walk(machineDefinition(machine).root as unknown as StateNodeLike);
  return out;
}

const cache = new Map<MachineType, string>();

/** A standalone SVG document of the machine's statechart. */
export function renderStatechart(machine: MachineType): string {
  const definition = machineDefinition(machine);
  let svg = cache.get(machine);
  if (svg === undefined) {
    svg = draw(definition, TITLES[machine]);
    cache.set(machine, svg);
  }
  return svg;
}

// ---------------------------------------------------------------------------------------------
// The machine's structure

interface StateNodeLike {
  key: string;
  path: string[];
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  states: Record<string, StateNodeLike>;
  initial?: { target: StateNodeLike[] };
  transitions: Map<string, { target?: StateNodeLike[]; guard?: unknown; reenter?: boolean }[]>;
  invoke: { id: string; src: unknown }[];
}

interface ElkLabel { text: string; width: number; height: number; x?: number; y?: number }
interface ElkNode {
  id: string;
  width?: number;
  height?: number;
  x?: number;
  y?: number;
  children?: ElkNode[];
  edges?: ElkEdge[];
  labels?: ElkLabel[];
  layoutOptions?: Record<string, string>;
}
interface ElkEdge {
  id: string;
  sources: string[];
  targets: string[];
  labels?: ElkLabel[];
  container?: string;
  sections?: { startPoint: Point; endPoint: Point; bendPoints?: Point[] }[];
}
interface Point { x: number; y: number }

interface Box {
  id: string;
  /** data-state; undefined for pseudo-states. */
  state?: string;
  kind: 'state' | 'compound' | 'final' | 'initial' | 'any';
  title: string;
}

interface Arrow {
  id: string;
  source: string;
  target: string;
  event: string;
  label: string;
  /** Its ELK container (the lowest common ancestor of both ends). */
  container: string;
}

const ROOT_ID = 'root';
const ANY_ID = '(any)';
const FONT = 12;
const LABEL_FONT = 10;
const textWidth = (text: string, size: number): number => Math.ceil(text.length * size * 0.6);

function nodeId(node: StateNodeLike): string {
  return node.path.length === 0 ? ROOT_ID : `s:${node.path.join('.')}`;
}

function guardName(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && guard !== null && typeof (guard as { type?: unknown }).type === 'string') return (guard as { type: string }).type;
  return 'guard';
}

/** A readable label for an event descriptor of a transition declared on `source`. */
function eventLabel(event: string, source: StateNodeLike): string {
  const after = /^xstate\.after\.([^.]+)\./.exec(event);
  if (after) return `after ${after[1]}`;
  const actor = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event);
  if (actor) {
    if (actor[2] === '*') return `${actor[1]}: any child`;
    const invoked = source.invoke.find((i) => i.id === actor[2]);
    const src = invoked && typeof invoked.src === 'string' ? invoked.src : actor[2];
    return `${actor[1]}: ${src}`;
  }
  return event;
}

function collect(root: StateNodeLike): { tree: ElkNode; boxes: Map<string, Box>; arrows: Arrow[] } {
  const boxes = new Map<string, Box>();
  const arrows: Arrow[] = [];
  const parents = new Map<string, string>();
  let n = 0;

  const ancestors = (id: string): string[] => {
    const out = [id];
    for (let p = parents.get(id); p !== undefined; p = parents.get(p)) out.push(p);
    return out;
  };
  const lca = (a: string, b: string): string => {
    const up = new Set(ancestors(a));
    for (const id of ancestors(b)) if (up.has(id) && id !== a && id !== b) return id;
    for (const id of ancestors(b)) if (up.has(id)) return parents.get(id) ?? ROOT_ID;
    return ROOT_ID;
  };
  const containerOf = (source: string, target: string): string => (source === target ? (parents.get(source) ?? ROOT_ID) : lca(source, target));

  const build = (node: StateNodeLike, parent: string | undefined): ElkNode => {
    const id = nodeId(node);
    if (parent !== undefined) parents.set(id, parent);
    const children = Object.values(node.states);
    const path = node.path.join('.');
    if (id !== ROOT_ID) {
      const kind: Box['kind'] = children.length > 0 ? 'compound' : node.type === 'final' ? 'final' : 'state';
      boxes.set(id, { id, state: path, kind, title: node.key });
    }
    const elk: ElkNode = { id };
    if (children.length === 0) {
      elk.width = Math.max(72, textWidth(node.key, FONT) + 28);
      elk.height = 34;
      return elk;
    }
    elk.children = [];
    if (id !== ROOT_ID) {
      elk.layoutOptions = { 'elk.padding': '[top=30,left=14,bottom=14,right=14]' };
      elk.labels = [{ text: node.key, width: textWidth(node.key, FONT), height: FONT + 4 }];
    }
    if (node.initial && node.initial.target.length > 0) {
      const initialId = `i:${path || ROOT_ID}`;
      parents.set(initialId, id);
      boxes.set(initialId, { id: initialId, kind: 'initial', title: '' });
      elk.children.push({ id: initialId, width: 12, height: 12 });
      for (const target of node.initial.target) {
        arrows.push({ id: `e${n++}`, source: initialId, target: nodeId(target), event: '', label: '', container: '' });
      }
    }
    for (const child of children) elk.children.push(build(child, id));
    return elk;
  };
  const tree = build(root, undefined);

  const walkTransitions = (node: StateNodeLike): void => {
    let source = nodeId(node);
    for (const [event, transitions] of node.transitions) {
      for (const t of transitions) {
        if (source === ROOT_ID) {
          if (!boxes.has(ANY_ID)) {
            boxes.set(ANY_ID, { id: ANY_ID, kind: 'any', title: '(any state)' });
            parents.set(ANY_ID, ROOT_ID);
            tree.children!.push({ id: ANY_ID, width: textWidth('(any state)', FONT) + 24, height: 30 });
          }
          source = ANY_ID;
        }
        const guard = guardName(t.guard);
        const label = `${eventLabel(event, node)}${guard ? ` [${guard}]` : ''}`;
        const targets = t.target && t.target.length > 0 ? t.target.map(nodeId) : [source];
        for (const target of targets) arrows.push({ id: `e${n++}`, source, target: target === ROOT_ID ? source : target, event, label, container: '' });
      }
    }
    for (const child of Object.values(node.states)) walkTransitions(child);
  };
  walkTransitions(root);

  const byId = new Map<string, ElkNode>();
  const index = (node: ElkNode): void => {
    byId.set(node.id, node);
    for (const c of node.children ?? []) index(c);
  };
  index(tree);
  for (const arrow of arrows) {
    arrow.container = containerOf(arrow.source, arrow.target);
    const container = byId.get(arrow.container) ?? tree;
    (container.edges ??= []).push({
      id: arrow.id,
      sources: [arrow.source],
      targets: [arrow.target],
      ...(arrow.label ? { labels: [{ text: arrow.label, width: textWidth(arrow.label, LABEL_FONT), height: LABEL_FONT + 4 }] } : {}),
    });
  }
  return { tree, boxes, arrows };
}

// ---------------------------------------------------------------------------------------------
// Layout (elkjs, synchronously)

interface FakeWorker {
  onmessage: (message: { data: { id: number; data?: unknown; error?: unknown } }) => void;
  dispatcher: { saveDispatch(message: { data: Record<string, unknown> }): void };
}

let worker: FakeWorker | undefined;

function layout(graph: ElkNode): ElkNode {
  if (worker === undefined) {
    const require = createRequire(import.meta.url);
    const { Worker } = require('elkjs/lib/elk-worker.min.js') as { Worker: new () => FakeWorker };
    worker = new Worker();
    call(worker, { cmd: 'register', algorithms: ['layered'] });
  }
  return call(worker, { cmd: 'layout', graph, layoutOptions: {}, options: {} }) as ElkNode;
}

let callId = 0;
function call(w: FakeWorker, message: Record<string, unknown>): unknown {
  let answer: { data?: unknown; error?: unknown } | undefined;
  w.onmessage = (m) => (answer = m.data);
  w.dispatcher.saveDispatch({ data: { ...message, id: callId++ } });
  if (answer === undefined) throw new Error('elkjs answered asynchronously (an elkjs version other than the pinned one?)');
  if (answer.error !== undefined) throw new Error(`elkjs layout failed: ${String((answer.error as Error)?.message ?? answer.error)}`);
  return answer.data;
}

// ---------------------------------------------------------------------------------------------
// Drawing

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const f = (n: number): string => String(Math.round(n * 10) / 10);

const STYLE = `
  text { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; fill: #222; }
  .state > rect { fill: #fff; stroke: #445; stroke-width: 1.2; }
  .state.compound > rect { fill: #f4f6fa; }
  .state.final > rect.inner { fill: none; }
  .state > text { font-size: ${FONT}px; }
  .pseudo.initial { fill: #333; }
  .pseudo.any > rect { fill: #fff; stroke: #889; stroke-dasharray: 4 3; }
  .pseudo.any > text { font-size: ${FONT}px; fill: #667; font-style: italic; }
  .transition > path { fill: none; stroke: #667; stroke-width: 1.1; }
  .transition > text { font-size: ${LABEL_FONT}px; fill: #335; }
  .title { font-size: 14px; font-weight: 600; }
`;

function draw(machine: AnyStateMachine, title: string): string {
  const { tree, boxes, arrows } = collect(machine.root as unknown as StateNodeLike);
  tree.layoutOptions = {
    'elk.algorithm': 'layered',
    'elk.direction': 'RIGHT',
    'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
    'elk.edgeLabels.placement': 'CENTER',
    'elk.layered.spacing.nodeNodeBetweenLayers': '40',
    'elk.spacing.nodeNode': '24',
    'elk.spacing.edgeLabel': '4',
    'elk.layered.mergeEdges': 'false',
    'elk.padding': '[top=12,left=12,bottom=12,right=12]',
  };
  const out = layout(tree);

  // Absolute positions: ELK gives each node relative to its parent, each edge relative to its container.
  const abs = new Map<string, { x: number; y: number; w: number; h: number }>();
  const place = (node: ElkNode, ox: number, oy: number): void => {
    const x = ox + (node.x ?? 0);
    const y = oy + (node.y ?? 0);
    abs.set(node.id, { x, y, w: node.width ?? 0, h: node.height ?? 0 });
    for (const c of node.children ?? []) place(c, x, y);
  };
  place(out, 0, 0);
  const edges: ElkEdge[] = [];
  const gather = (node: ElkNode): void => {
    for (const e of node.edges ?? []) edges.push(e);
    for (const c of node.children ?? []) gather(c);
  };
  gather(out);
  const arrowById = new Map(arrows.map((a) => [a.id, a]));

  const TOP = 30;
  const width = (out.width ?? 0) + 2;
  const height = (out.height ?? 0) + TOP + 2;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${f(width)}" height="${f(height)}" viewBox="0 0 ${f(width)} ${f(height)}" data-machine="${esc(String(machine.id))}">`);
  parts.push(`<style>${STYLE}</style>`);
  parts.push('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#667"/></marker></defs>');
  parts.push(`<text class="title" x="12" y="20">${esc(title)}</text>`);
  parts.push(`<g transform="translate(1,${TOP})">`);

  // States, outermost first so children are drawn over their parents.
  const drawNode = (node: ElkNode): void => {
    const box = boxes.get(node.id);
    const p = abs.get(node.id)!;
    if (box?.kind === 'initial') {
      parts.push(`<circle class="pseudo initial" cx="${f(p.x + p.w / 2)}" cy="${f(p.y + p.h / 2)}" r="${f(p.w / 2)}"/>`);
    } else if (box?.kind === 'any') {
      parts.push(`<g class="pseudo any"><rect x="${f(p.x)}" y="${f(p.y)}" width="${f(p.w)}" height="${f(p.h)}" rx="6"/><text x="${f(p.x + p.w / 2)}" y="${f(p.y + p.h / 2 + 4)}" text-anchor="middle">${esc(box.title)}</text></g>`);
    } else if (box) {
      const compound = box.kind === 'compound';
      parts.push(`<g class="state ${box.kind}" data-state="${esc(box.state!)}">`);
      parts.push(`<rect x="${f(p.x)}" y="${f(p.y)}" width="${f(p.w)}" height="${f(p.h)}" rx="${compound ? 10 : 8}"/>`);
      if (box.kind === 'final') parts.push(`<rect class="inner" x="${f(p.x + 3)}" y="${f(p.y + 3)}" width="${f(p.w - 6)}" height="${f(p.h - 6)}" rx="6"/>`);
      if (compound) parts.push(`<text x="${f(p.x + 10)}" y="${f(p.y + 19)}" font-weight="600">${esc(box.title)}</text>`);
      else parts.push(`<text x="${f(p.x + p.w / 2)}" y="${f(p.y + p.h / 2 + 4)}" text-anchor="middle">${esc(box.title)}</text>`);
      parts.push('</g>');
    }
    for (const c of node.children ?? []) drawNode(c);
  };
  for (const c of out.children ?? []) drawNode(c);

  for (const edge of edges) {
    const arrow = arrowById.get(edge.id);
    if (!arrow) continue;
    const origin = abs.get(edge.container ?? arrow.container) ?? { x: 0, y: 0 };
    const attrs = arrow.event
      ? ` data-event="${esc(arrow.event)}" data-source="${esc(boxes.get(arrow.source)?.state ?? '')}" data-target="${esc(boxes.get(arrow.target)?.state ?? '')}"`
      : ' data-initial="true"';
    parts.push(`<g class="transition"${attrs}>`);
    for (const section of edge.sections ?? []) {
      const pts = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map((pt) => `${f(pt.x + origin.x)},${f(pt.y + origin.y)}`);
      parts.push(`<path d="M${pts.join(' L')}" marker-end="url(#arrow)"/>`);
    }
    for (const label of edge.labels ?? []) {
      parts.push(`<text x="${f((label.x ?? 0) + origin.x)}" y="${f((label.y ?? 0) + origin.y + LABEL_FONT)}">${esc(label.text)}</text>`);
    }
    parts.push('</g>');
  }
  parts.push('</g></svg>');
  return `${parts.join('\n')}\n`;
}
