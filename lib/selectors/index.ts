// lib/selectors — label match expressions, selector parsing (seed 002) and the strategy builders.
export * from './expression.ts';
export { formatSelectorValue, parseLabelSelector, parseSelectorValue, type SelectorValue } from './parse.ts';
export {
  DoesNotExist,
  Exists,
  Gt,
  In,
  Lt,
  NotIn,
  actorAffinity,
  affinity,
  antiAffinity,
  labelDoesNotExist,
  labelExists,
  labelGt,
  labelIn,
  labelLt,
  labelNotIn,
  nodeAffinity,
  nodeIdAffinity,
  nodeLabelStrategy,
  placementGroupStrategy,
  validateCondition,
  validateExpression,
  type ActorRefLike,
  type NodeIdAffinityOptions,
} from './builders.ts';
export { anyOf, nodeAffinityTerms, preferred, validateAnyOf, withTopologyKey } from './terms.ts';
